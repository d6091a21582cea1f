"""What failures cost, recomputed from the files: `--fail DEVICE|LINK ...` and `--fail-each ROLE`.

A failure is a device (`z01-ctsw01`: every session of a switch goes, a host's NICs are detached) or a link, written
`DEV:PORT--DEV:PORT` (either end first) or `DEV:PORT` (the link on that port), with the ports as the build's
cabling names them (`z01-r001-rtsw:Ethernet128--z01-ctsw01:Ethernet3/1/1`).

The report, per zone and tier of each routed network, from the rack prefixes' best routes before and after:
- `paths`: the fewest equal next hops a switch of the tier has towards a rack prefix of another rack (before,
  after, and what the design has after the same failure), `bandwidth_gbps`: the least bandwidth over them;
- `oversubscription`: the worst ratio of a switch's downlink capacity to the bandwidth it has left towards the other
  racks (before and after), with the switch;
- per rail, the same-rail host pairs (NIC i of one GPU host to NIC i of another) and those that lose their path: a NIC
  detached, or the two rack switches without routes to each other's rack prefixes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from teton.fabric.intent import Family
from teton.fabric.model import Fabric
from teton.findings import TetonError
from teton.targets.bgpview import FAMILIES
from teton.verify.model import Model
from teton.verify.solve import Down, Solution, prefix_offsets

RACK_ROLES = ("rtsw", "fe-rsw")


@dataclass(frozen=True)
class Failure:
    """What `--fail` named: devices, and links as sorted pairs of "dev:port" ends."""

    devices: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        return ", ".join([*self.devices, *(f"{a}--{b}" for a, b in self.links)])


def parse_failures(specs: Sequence[str], fabric: Fabric) -> Failure:
    """The failures `specs` name; TetonError naming the argument for one the build does not have."""
    ends: dict[str, str] = {}
    for link in fabric.links:
        a, b = f"{link.a.device}:{link.a.port}", f"{link.b.device}:{link.b.port}"
        ends[a], ends[b] = b, a
    devices: list[str] = []
    links: list[tuple[str, str]] = []
    for spec in specs:
        spec = spec.strip()
        if "--" in spec:
            a, _, b = spec.partition("--")
            if ends.get(a) != b:
                raise TetonError(f"--fail {spec}: the build's cabling (fabric.json) has no link {a} -- {b}")
            links.append((min(a, b), max(a, b)))
        elif ":" in spec and spec.split(":", 1)[0] in fabric.devices:
            if spec not in ends:
                raise TetonError(f"--fail {spec}: no link on that port in the build's cabling (fabric.json)")
            links.append((min(spec, ends[spec]), max(spec, ends[spec])))
        elif spec in fabric.devices:
            devices.append(spec)
        else:
            raise TetonError(f"--fail {spec}: no device {spec!r} in the build's fabric.json (give a device, "
                             "DEV:PORT--DEV:PORT or DEV:PORT)")
    return Failure(tuple(sorted(set(devices))), tuple(sorted(set(links))))


def down_of(model: Model, failure: Failure) -> Down:
    down = Down.none(model)
    for d in failure.devices:
        if d in model.index:
            down.nodes[model.index[d]] = True
    cut = {frozenset(x) for x in failure.links}
    for fam, g in model.graphs.items():
        for e in range(len(g)):
            if cut and frozenset({f"{model.names[g.src[e]]}:{g.src_port[e]}",
                                  f"{model.names[g.dst[e]]}:{g.dst_port[e]}"}) in cut:
                down.edges[fam][e] = True
    return down


def rack_prefix_ids(model: Model, fabric: Fabric, network: str | None = None) -> np.ndarray:
    """Global ids of the rack prefixes (the rack switches' aggregates) in the model (of one network, if given)."""
    from teton.fabric.roles import role

    offsets = prefix_offsets(model)
    out = []
    for d in fabric.devices.values():
        r = role(d.role)
        if d.role in RACK_ROLES and d.routing is not None and (network is None or (r and r.network == network)):
            for p in (*d.routing.aggregates4, *d.routing.aggregates6):
                fam: Family = "ipv6" if ":" in p else "ipv4"
                k = model.prefixes[fam].position.get(p)
                if k is not None:
                    out.append(offsets[fam] + k)
    return np.array(sorted(out), dtype=np.int64)


@dataclass
class Sides:
    """The rack prefixes' routes at every switch, and who announces each (by row)."""

    model: Model
    solution: Solution
    origin: np.ndarray                    # int (rows,): the rack switch that announces the row's prefix
    down: Down
    failure: Failure = field(default_factory=Failure)
    tiers: dict[tuple[str, int, str], dict[str, Any]] | None = None     # the report's tables of it, once computed
    rails: dict[str, dict[str, Any]] | None = None


def sides(model: Model, fabric: Fabric, solution: Solution, down: Down, failure: Failure) -> Sides:
    owner = {}
    for d in fabric.devices.values():
        if d.role in RACK_ROLES and d.routing is not None:
            for p in (*d.routing.aggregates4, *d.routing.aggregates6):
                owner[p] = model.index.get(d.name, -1)
    offsets = prefix_offsets(model)
    names = {offsets[f] + k: p for f in FAMILIES for k, p in enumerate(model.prefixes[f].table.prefixes)}
    origin = np.array([owner.get(names[int(x)], -1) for x in solution.ids], dtype=np.int64)
    return Sides(model, solution, origin, down, failure)


def _tier_table(s: Sides, fabric: Fabric) -> dict[tuple[str, int, str], dict[str, Any]]:
    """(network, zone, role) -> the fewest paths and least bandwidth towards another rack's prefix, and the worst
    oversubscription."""
    m = s.model
    cols = np.array([i for i in range(m.n) if not s.down.nodes[i] and m.role[i]
                     and m.network[i] in ("roce", "frontend")], dtype=np.int64)
    if not len(cols) or not len(s.origin):
        return {}
    net_rows = np.array([m.network[o] if o >= 0 else "" for o in s.origin])
    net_cols = np.array([m.network[i] for i in cols])
    mine = (net_rows[:, None] == net_cols[None, :]) & (s.origin[:, None] != cols[None, :]) & (s.origin[:, None] >= 0)
    dist = s.solution.dist[:, cols]
    reached = mine & (dist > 0)
    big = np.iinfo(np.int32).max
    paths = np.where(reached, s.solution.width[:, cols].astype(np.int32), np.int32(big)).min(axis=0)
    bws = np.where(reached, s.solution.bandwidth[:, cols], np.inf).min(axis=0)
    unreached = (mine & (dist < 0)).sum(axis=0)
    has = mine.any(axis=0)
    down_gbps = _downlinks(m, fabric, s)
    up_gbps = _uplinks(m, s)
    out: dict[tuple[str, int, str], dict[str, Any]] = {}
    for k, i in enumerate(cols):
        if not has[k]:
            continue
        key = (m.network[i], int(m.zone[i]), m.role[i])
        t = out.setdefault(key, {"switches": 0, "paths": None, "bandwidth_gbps": None, "unreached": 0,
                                 "oversubscription": None, "worst": ""})
        t["switches"] += 1
        t["unreached"] += int(unreached[k])
        if paths[k] == big:
            continue
        lo, lbw = int(paths[k]), float(bws[k])
        t["paths"] = lo if t["paths"] is None else min(t["paths"], lo)
        t["bandwidth_gbps"] = lbw if t["bandwidth_gbps"] is None else min(t["bandwidth_gbps"], lbw)
        if down_gbps[i] > 0 and m.tier[i] < 3:
            up = up_gbps[i]
            ratio = round(down_gbps[i] / up, 3) if up > 0 else float("inf")
            if t["oversubscription"] is None or ratio > t["oversubscription"]:
                t["oversubscription"], t["worst"] = ratio, m.names[i]
    return out


def _uplinks(m: Model, s: Sides) -> np.ndarray:
    """Per switch, the capacity of its sessions up a tier still up (one per port, whatever the families), Gb/s."""
    seen: set[tuple[int, str]] = set()
    out = np.zeros(m.n)
    for fam, g in m.graphs.items():
        alive = ~s.down.edges[fam] & ~s.down.nodes[g.src] & ~s.down.nodes[g.dst]
        for e in np.flatnonzero(alive & (m.tier[g.dst] > m.tier[g.src])):
            key = (int(g.src[e]), g.src_port[e])
            if key not in seen:
                seen.add(key)
                out[key[0]] += g.speed[e]
    return out


def _downlinks(m: Model, fabric: Fabric, s: Sides) -> np.ndarray:
    """Per switch, the capacity of its links to the tier below (hosts for a rack switch) still up, Gb/s."""
    cut = {frozenset(x) for x in s.failure.links}
    out = np.zeros(m.n)
    dead = set(s.failure.devices)
    for link in fabric.links:
        up, low = link.b.device, link.a.device
        i = m.index.get(up)
        if i is None or up in dead or low in dead:
            continue
        if frozenset({f"{low}:{link.a.port}", f"{up}:{link.b.port}"}) in cut:
            continue
        out[i] += link.speed_gbps
    return out


def rail_pairs(fabric: Fabric, s: Sides) -> dict[str, dict[str, Any]]:
    """Per rail: same-rail GPU host pairs, and how many of them have a path (both NICs attached, both rack switches
    with routes to each other's rack prefixes)."""
    m = s.model
    racks = [i for i in range(m.n) if m.role[i] == "rtsw"]
    if not racks:
        return {}
    col = {i: k for k, i in enumerate(racks)}
    ok = np.ones((len(racks), len(racks)), dtype=bool)
    for r, o in enumerate(s.origin):
        if o in col:
            has = s.solution.dist[r, racks] >= 0
            has[col[int(o)]] = True
            ok[:, col[int(o)]] &= has
    ok &= ok.T
    for i in racks:
        if s.down.nodes[i]:
            ok[col[i], :] = ok[:, col[i]] = False
    cut = {frozenset(x) for x in s.failure.links}
    dead = set(s.failure.devices)
    rails: dict[str, np.ndarray] = {}
    hosts: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for d in fabric.devices.values():
        if d.role != "host":
            continue
        for nic in d.interfaces:
            if nic.kind != "host-rtsw" or nic.peer not in m.index or m.index[nic.peer] not in col:
                continue
            attached = d.name not in dead and nic.peer not in dead and \
                frozenset({f"{d.name}:{nic.name}", f"{nic.peer}:{nic.peer_port}"}) not in cut
            counts = rails.setdefault(nic.name, np.zeros(len(racks)))
            if attached:
                counts[col[m.index[nic.peer]]] += 1
            hosts[nic.name].append((d.name, col[m.index[nic.peer]] if attached else -1))
    out = {}
    for rail, n in sorted(rails.items()):
        same = float((n * (n - 1) / 2).sum())
        across = float((n @ np.where(ok, 1.0, 0.0) @ n - (n * n * np.diag(ok)).sum()) / 2)
        total = len(hosts[rail]) * (len(hosts[rail]) - 1) // 2
        out[rail] = {"pairs": total, "with_path": int(round(same + across))}
    return out


def report(before: Sides, after: Sides, design_after: Sides | None, fabric: Fabric) -> dict[str, Any]:
    if before.tiers is None:
        before.tiers, before.rails = _tier_table(before, fabric), rail_pairs(fabric, before)
    b, a = before.tiers, _tier_table(after, fabric)
    d = _tier_table(design_after, fabric) if design_after is not None else {}
    tiers = []
    for key in sorted(set(b) | set(a)):
        x, y, z = b.get(key, {}), a.get(key, {}), d.get(key, {})
        tiers.append({"network": key[0], "zone": key[1] if key[1] >= 0 else None, "role": key[2],
                      "switches": y.get("switches", 0), "paths": [x.get("paths"), y.get("paths")],
                      "design_paths": z.get("paths"), "bandwidth_gbps": [x.get("bandwidth_gbps"),
                                                                         y.get("bandwidth_gbps")],
                      "unreached_routes": y.get("unreached", 0),
                      "oversubscription": [x.get("oversubscription"), y.get("oversubscription")],
                      "worst": y.get("worst", "")})
    rb, ra = before.rails or {}, rail_pairs(fabric, after)
    rails = [{"rail": r, "pairs": rb[r]["pairs"], "with_path": [rb[r]["with_path"], ra.get(r, rb[r])["with_path"]],
              "lost": rb[r]["with_path"] - ra.get(r, rb[r])["with_path"]} for r in sorted(rb)]
    worst = [t for t in tiers if t["oversubscription"][1] is not None]
    return {"failed": after.failure.label, "tiers": tiers, "rails": rails,
            "pairs_lost": sum(r["lost"] for r in rails),
            "worst_oversubscription": max((t["oversubscription"][1] for t in worst), default=None),
            "deviations": [t for t in tiers if t["design_paths"] is not None and t["paths"][1] != t["design_paths"]]}
