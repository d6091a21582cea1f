"""What failures cost, recomputed from the files: `--fail DEVICE|LINK ...` and `--fail-each ROLE`.

A failure is a device (`z01-ctsw01`: every session of a switch goes, a host's NICs are detached) or a link, written
`DEV:PORT--DEV:PORT` (either end first) or `DEV:PORT` (the link on that port), with the ports as the build's
cabling names them (`z01-r001-rtsw:Ethernet128--z01-ctsw01:Ethernet3/1/1`).

The report, per zone and tier of each routed network (in a site, of each cluster's: `roce of lab-a`, the tier's
own switches under the network alone), from the rack prefixes' best routes before and after:
- `paths`: the fewest equal next hops a switch of the tier has towards a rack prefix of another rack (before,
  after, and what the design has after the same failure), `bandwidth_gbps`: the least bandwidth over them;
- in a site, for a cluster's switches, the same towards the rack prefixes of the other clusters
  (`paths_to_other_clusters`, `bandwidth_to_other_clusters_gbps`): an aggregation switch's fewest paths are to its
  own cluster's racks (16 at 24k), which hides the loss of 2 of its 28 paths into the tier when a BAG switch fails;
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

from teton.design.site import SEPARATOR
from teton.fabric.bgpview import FAMILIES
from teton.fabric.intent import Family
from teton.fabric.model import Fabric
from teton.findings import TetonError
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
        if spec in fabric.devices:       # first: a site's names hold "--" (`<cluster>--<device>`)
            devices.append(spec)
        elif "--" in spec and ":" in spec:
            cuts = [(spec[:k], spec[k + 2:]) for k in range(len(spec)) if spec.startswith("--", k)]
            found = next(((a, b) for a, b in cuts if ends.get(a) == b), None)
            if found is None:
                a, _, b = spec.partition("--")
                raise TetonError(f"--fail {spec}: the build's cabling (fabric.json) has no link {a} -- {b}")
            a, b = found
            links.append((min(a, b), max(a, b)))
        elif ":" in spec and spec.split(":", 1)[0] in fabric.devices:
            if spec not in ends:
                raise TetonError(f"--fail {spec}: no link on that port in the build's cabling (fabric.json)")
            links.append((min(spec, ends[spec]), max(spec, ends[spec])))
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


def bare(model: Model, down: Down, failure: Failure) -> Sides:
    """Sides without rows: what the tables need of a failure besides the routes (`tier_table`, `rail_pairs`)."""
    return Sides(model, Solution.empty(model.n), np.zeros(0, dtype=np.int64), down, failure)


@dataclass
class _Static:
    """What the report needs of a model and its fabric that no failure changes, as arrays."""

    net_code: np.ndarray                  # per switch: its network's number (-1: none)
    up_src: np.ndarray                    # one edge per (switch, port) going up a tier: its switch, speed, edges
    up_speed: np.ndarray
    up_edges: list[tuple[Family, np.ndarray]]
    low_up: np.ndarray                    # per link to a switch of the model: the upper switch, the lower device,
    low_dev: np.ndarray                   # its speed and its ends
    low_speed: np.ndarray
    low_keys: list[frozenset[str]]
    names: dict[str, int]                 # every device of the fabric, numbered
    nic_host: np.ndarray                  # per GPU host NIC on a rack switch: host, rack switch (its column), rail
    nic_peer: np.ndarray
    nic_col: np.ndarray
    nic_rail: np.ndarray
    nic_keys: list[frozenset[str]]
    rails: list[str]
    racks: np.ndarray
    labels: list[str]                     # per switch: its row's network (`_label`: `roce of lab-a` in a site)
    cluster: np.ndarray                   # per switch: its cluster's number in a site (-1: the tier's, a lone one)


_STATIC: dict[tuple[int, int], tuple[Model, Fabric, _Static]] = {}


def _static(m: Model, fabric: Fabric) -> _Static:
    got = _STATIC.get((id(m), id(fabric)))
    if got is not None and got[0] is m and got[1] is fabric:
        return got[2]
    nets = sorted({x for x in m.network if x})
    net_code = np.array([nets.index(x) if x else -1 for x in m.network], dtype=np.int64)
    seen: dict[tuple[int, str], int] = {}
    per_fam: dict[Family, list[int]] = defaultdict(list)
    up_src: list[int] = []
    up_speed: list[float] = []
    for fam, g in sorted(m.graphs.items()):
        for e in np.flatnonzero(m.tier[g.dst] > m.tier[g.src]):
            key = (int(g.src[e]), g.src_port[e])
            if key not in seen:
                seen[key] = len(up_src)
                up_src.append(key[0])
                up_speed.append(float(g.speed[e]))
                per_fam[fam].append(int(e))
    names = {n: k for k, n in enumerate(fabric.devices)}
    low = [(m.index[lk.b.device], names.get(lk.a.device, -1), float(lk.speed_gbps),
            frozenset({f"{lk.a.device}:{lk.a.port}", f"{lk.b.device}:{lk.b.port}"}))
           for lk in fabric.links if lk.b.device in m.index]
    racks = np.array([i for i in range(m.n) if m.role[i] == "rtsw"], dtype=np.int64)
    col = {int(i): k for k, i in enumerate(racks)}
    nics = [(names[d.name], m.index[nic.peer], col[m.index[nic.peer]], nic.name,
             frozenset({f"{d.name}:{nic.name}", f"{nic.peer}:{nic.peer_port}"}))
            for d in fabric.devices.values() if d.role == "host" for nic in d.interfaces
            if nic.kind == "host-rtsw" and nic.peer in m.index and m.index[nic.peer] in col]
    rails = sorted({x[3] for x in nics})
    st = _Static(net_code, np.array(up_src, dtype=np.int64), np.array(up_speed),
                 [(f, np.array(es, dtype=np.int64)) for f, es in per_fam.items()],
                 np.array([x[0] for x in low], dtype=np.int64), np.array([x[1] for x in low], dtype=np.int64),
                 np.array([x[2] for x in low]), [x[3] for x in low], names,
                 np.array([x[0] for x in nics], dtype=np.int64), np.array([x[1] for x in nics], dtype=np.int64),
                 np.array([x[2] for x in nics], dtype=np.int64),
                 np.array([rails.index(x[3]) for x in nics], dtype=np.int64), [x[4] for x in nics], rails, racks,
                 [_label(name, net) for name, net in zip(m.names, m.network, strict=True)], _clusters(m.names))
    _STATIC[(id(m), id(fabric))] = (m, fabric, st)
    return st


def _clusters(names: Sequence[str]) -> np.ndarray:
    """Per switch, its site cluster's number (`<cluster>--<device>`, `teton.design.site`), else -1."""
    clusters = sorted({n.partition(SEPARATOR)[0] for n in names if SEPARATOR in n})
    code = {c: k for k, c in enumerate(clusters)}
    return np.array([code[n.partition(SEPARATOR)[0]] if SEPARATOR in n else -1 for n in names], dtype=np.int64)


# per network: its columns, and each one's fewest paths, least bandwidth, routes not reached, and the fewest paths and
# least bandwidth towards the other clusters' racks (int32 max and inf: none, or not a cluster's switch)
Columns = dict[int, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]]


def tier_columns(s: Sides, fabric: Fabric) -> Columns:
    """Per network (its number): the switches of it still up (columns) and, towards another rack's prefix among the
    rows of `s`, each one's fewest paths (int32 max: none reached), least bandwidth (inf) and routes not reached,
    and for a site cluster's switch the fewest paths and least bandwidth towards the other clusters' racks.  Rows
    split into parts give parts whose `combine_columns` is the whole's."""
    m = s.model
    st = _static(m, fabric)
    row_net = np.where(s.origin >= 0, st.net_code[np.maximum(s.origin, 0)], -1)
    out: Columns = {}
    big = np.int32(np.iinfo(np.int32).max)
    for code in sorted(set(row_net.tolist()) - {-1}):
        rows = np.flatnonzero(row_net == code)
        cols = np.flatnonzero((st.net_code == code) & ~s.down.nodes &
                              np.array([bool(r) for r in m.role]) & (m.tier > 0))
        if not len(cols):
            continue
        mine = np.ones((len(rows), len(cols)), dtype=bool)
        own = s.origin[rows][:, None] == cols[None, :]
        mine &= ~own
        dist = s.solution.dist[np.ix_(rows, cols)]
        reached = mine & (dist > 0)
        width = s.solution.width[np.ix_(rows, cols)].astype(np.int32)
        bandwidth = s.solution.bandwidth[np.ix_(rows, cols)]
        paths = np.where(reached, width, big).min(axis=0)
        bws = np.where(reached, bandwidth, np.inf).min(axis=0)
        unreached = (mine & (dist < 0)).sum(axis=0)
        col_cluster = st.cluster[cols]
        row_cluster = np.where(s.origin[rows] >= 0, st.cluster[np.maximum(s.origin[rows], 0)], -1)
        far = reached & (col_cluster >= 0)[None, :] & (row_cluster >= 0)[:, None] & \
            (row_cluster[:, None] != col_cluster[None, :])
        out[code] = (cols, paths, bws, unreached, np.where(far, width, big).min(axis=0),
                     np.where(far, bandwidth, np.inf).min(axis=0))
    return out


def combine_columns(a: Columns, b: Columns) -> Columns:
    """The columns of two parts of the rows as those of their union."""
    out = dict(a)
    for code, (cols, paths, bws, unreached, far_paths, far_bws) in b.items():
        if code in out:
            c0, p0, b0, u0, fp0, fb0 = out[code]
            out[code] = (c0, np.minimum(p0, paths), np.minimum(b0, bws), u0 + unreached, np.minimum(fp0, far_paths),
                         np.minimum(fb0, far_bws))
        else:
            out[code] = (cols, paths, bws, unreached, far_paths, far_bws)
    return dict(sorted(out.items()))


def _label(name: str, network: str) -> str:
    """The network a switch's row is under: a site's cluster switch (`<cluster>--<device>`, `teton.design.site`)
    under `<network> of <cluster>` (as a site names each cluster's front end), so two clusters' zone-1 racks are two
    rows; the tier's and a lone cluster's under `network`."""
    cluster, sep, _ = name.partition(SEPARATOR)
    own = f" of {cluster}"
    return f"{network}{own}" if sep and network and not network.endswith(own) else network


def tier_table(m: Model, fabric: Fabric, down: Down, failure: Failure, columns: Columns
               ) -> dict[tuple[str, int, str], dict[str, Any]]:
    """(network, zone, role) -> the fewest paths and least bandwidth towards another rack's prefix (and, of a site's
    cluster, towards another cluster's: `far_paths`, `far_bandwidth_gbps`), and the worst oversubscription, of the
    columns (`tier_columns`) under `down`."""
    st = _static(m, fabric)
    probe = bare(m, down, failure)
    down_gbps = _downlinks(m, fabric, probe)
    up_gbps = _uplinks(m, probe, st)
    out: dict[tuple[str, int, str], dict[str, Any]] = {}
    big = np.int32(np.iinfo(np.int32).max)
    for _, (cols, paths, bws, unreached, far_paths, far_bws) in sorted(columns.items()):
        for k, i in enumerate(cols):
            key = (st.labels[i], int(m.zone[i]), m.role[i])
            t = out.setdefault(key, {"switches": 0, "paths": None, "bandwidth_gbps": None, "unreached": 0,
                                     "oversubscription": None, "worst": "", "far_paths": None,
                                     "far_bandwidth_gbps": None})
            t["switches"] += 1
            t["unreached"] += int(unreached[k])
            if far_paths[k] != big:
                fp, fb = int(far_paths[k]), float(far_bws[k])
                t["far_paths"] = fp if t["far_paths"] is None else min(t["far_paths"], fp)
                t["far_bandwidth_gbps"] = fb if t["far_bandwidth_gbps"] is None else min(t["far_bandwidth_gbps"], fb)
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


def _tier_table(s: Sides, fabric: Fabric) -> dict[tuple[str, int, str], dict[str, Any]]:
    return tier_table(s.model, fabric, s.down, s.failure, tier_columns(s, fabric))


def _uplinks(m: Model, s: Sides, st: _Static) -> np.ndarray:
    """Per switch, the capacity of its sessions up a tier still up (one per port, whatever the families), Gb/s."""
    alive = np.zeros(len(st.up_src), dtype=bool)
    at = 0
    for fam, edges in st.up_edges:
        g = m.graphs[fam]
        alive[at:at + len(edges)] = ~s.down.edges[fam][edges] & ~s.down.nodes[g.src[edges]] & \
            ~s.down.nodes[g.dst[edges]]
        at += len(edges)
    return np.bincount(st.up_src, weights=st.up_speed * alive, minlength=m.n)


def _dead_devices(st: _Static, s: Sides) -> np.ndarray:
    dead = np.zeros(len(st.names) + 1, dtype=bool)
    for d in s.failure.devices:
        if d in st.names:
            dead[st.names[d]] = True
    return dead


def _downlinks(m: Model, fabric: Fabric, s: Sides) -> np.ndarray:
    """Per switch, the capacity of its links to the tier below (hosts for a rack switch) still up, Gb/s."""
    st = _static(m, fabric)
    dead = _dead_devices(st, s)
    alive = ~s.down.nodes[st.low_up] & ~dead[st.low_dev]
    if s.failure.links:
        cut = {frozenset(x) for x in s.failure.links}
        alive &= np.array([k not in cut for k in st.low_keys], dtype=bool)
    return np.bincount(st.low_up, weights=st.low_speed * alive, minlength=m.n)


def rack_ok(s: Sides, fabric: Fabric, ok: np.ndarray | None = None) -> np.ndarray:
    """Rack switch x rack switch: whether the row's rack switch (each column's) prefixes all reach the other
    (before both ways and failures are taken), and'ed into `ok` (None: a new one): rows split into parts give the
    whole's."""
    st = _static(s.model, fabric)
    racks = st.racks
    if ok is None:
        ok = np.ones((len(racks), len(racks)), dtype=bool)
    col = np.full(s.model.n, -1, dtype=np.int64)
    col[racks] = np.arange(len(racks))
    rows = np.flatnonzero((s.origin >= 0) & (col[np.maximum(s.origin, 0)] >= 0))
    if len(rows):
        has = s.solution.dist[np.ix_(rows, racks)] >= 0
        owners = col[s.origin[rows]]
        has[np.arange(len(rows)), owners] = True
        order = np.argsort(owners, kind="stable")
        owners, has = owners[order], has[order]
        starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
        ok[:, owners[starts]] &= np.logical_and.reduceat(has, starts, axis=0).T
    return ok


def rail_pairs(fabric: Fabric, s: Sides, ok: np.ndarray | None = None) -> dict[str, dict[str, Any]]:
    """Per rail: same-rail GPU host pairs, and how many of them have a path (both NICs attached, both rack switches
    with routes to each other's rack prefixes); `ok`: `rack_ok` of every part of the rows (None: of `s`'s)."""
    m = s.model
    st = _static(m, fabric)
    racks = st.racks
    if not len(racks):
        return {}
    ok = rack_ok(s, fabric) if ok is None else ok.copy()
    ok &= ok.T
    down = s.down.nodes[racks]
    ok[down, :] = False
    ok[:, down] = False
    dead = _dead_devices(st, s)
    attached = ~dead[st.nic_host] & ~s.down.nodes[st.nic_peer]
    if s.failure.links:
        cut = {frozenset(x) for x in s.failure.links}
        attached &= np.array([k not in cut for k in st.nic_keys], dtype=bool)
    okf = np.where(ok, 1.0, 0.0)
    out = {}
    for r, rail in enumerate(st.rails):
        mine = st.nic_rail == r
        n = np.bincount(st.nic_col[mine & attached], minlength=len(racks)).astype(np.float64)
        same = float((n * (n - 1) / 2).sum())
        across = float((n @ okf @ n - (n * n * np.diag(okf)).sum()) / 2)
        total = int(mine.sum())
        out[rail] = {"pairs": total * (total - 1) // 2, "with_path": int(round(same + across))}
    return out


def report(before: Sides, after: Sides, design_after: Sides | None, fabric: Fabric) -> dict[str, Any]:
    if before.tiers is None:
        before.tiers, before.rails = _tier_table(before, fabric), rail_pairs(fabric, before)
    return tables_report(before.tiers, before.rails or {}, _tier_table(after, fabric), rail_pairs(fabric, after),
                         _tier_table(design_after, fabric) if design_after is not None else {}, after.failure.label)


def tables_report(b: dict[tuple[str, int, str], dict[str, Any]], rb: dict[str, dict[str, Any]],
                  a: dict[tuple[str, int, str], dict[str, Any]], ra: dict[str, dict[str, Any]],
                  d: dict[tuple[str, int, str], dict[str, Any]], label: str) -> dict[str, Any]:
    """The report of a failure from the tables before (`b`, `rb`: tiers and rails), after and the design's after."""
    tiers = []
    for key in sorted(set(b) | set(a)):
        x, y, z = b.get(key, {}), a.get(key, {}), d.get(key, {})
        tiers.append({"network": key[0], "zone": key[1] if key[1] >= 0 else None, "role": key[2],
                      "switches": y.get("switches", 0), "paths": [x.get("paths"), y.get("paths")],
                      "design_paths": z.get("paths"), "bandwidth_gbps": [x.get("bandwidth_gbps"),
                                                                         y.get("bandwidth_gbps")],
                      "unreached_routes": y.get("unreached", 0),
                      "paths_to_other_clusters": [x.get("far_paths"), y.get("far_paths")],
                      "design_paths_to_other_clusters": z.get("far_paths"),
                      "bandwidth_to_other_clusters_gbps": [x.get("far_bandwidth_gbps"), y.get("far_bandwidth_gbps")],
                      "oversubscription": [x.get("oversubscription"), y.get("oversubscription")],
                      "worst": y.get("worst", "")})
    rails = [{"rail": r, "pairs": rb[r]["pairs"], "with_path": [rb[r]["with_path"], ra.get(r, rb[r])["with_path"]],
              "lost": rb[r]["with_path"] - ra.get(r, rb[r])["with_path"]} for r in sorted(rb)]
    worst = [t for t in tiers if t["oversubscription"][1] is not None]
    return {"failed": label, "tiers": tiers, "rails": rails,
            "pairs_lost": sum(r["lost"] for r in rails),
            "worst_oversubscription": max((t["oversubscription"][1] for t in worst), default=None),
            "deviations": [t for t in tiers if t["design_paths"] is not None and t["paths"][1] != t["design_paths"]]}
