"""The assertions of `teton verify`, each a named rule whose findings name the device and the prefix.

- `rack-reach`: every rack prefix the design has reaches every rack switch of its network that the design's own
  routing reaches; the finding names the rack switch that announces it, every rack that lost it and where it stops
  (the switch whose policy denies it on a session, or that does not originate it);
- `ecmp-width`: every switch of every tier has, towards every rack prefix of its network, the ECMP width the design
  promises (`teton.verify.expected`: `teton.expect`'s widths), per switch with the prefixes that differ;
- `loopback-reach`: every loopback reaches the switches the design reaches it at;
- `frontend-reach`: over the front end, every GPU rack's switch and every storage rack's and the service hosts'
  rack switch have routes to each other's prefixes;
- `link-prefix`: no link subnet (/31, /127) is in BGP beyond its two ends;
- `valley`: no path goes down a tier and up again;
- `unexpected-prefix`: no switch sends a prefix the design does not have it originate; `missing-origination`: each
  switch originates what the design has it originate;
- `maximum-prefix`: no session delivers more routes than its receiver's maximum-prefix (it would be torn down).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from teton.fabric.bgpview import FAMILIES
from teton.fabric.intent import Family
from teton.fabric.model import Fabric
from teton.findings import Finding
from teton.verify.expected import design_originations
from teton.verify.model import DEFAULT, Model
from teton.verify.policy import DENY
from teton.verify.solve import Solution, prefix_offsets

RACK_ROLES = ("rtsw", "fe-rsw")
LISTED = 8          # prefixes named per finding where one switch has many


@dataclass
class Checked:
    """One side (the files, or the design) solved: where each prefix is, by its text."""

    model: Model
    solution: Solution
    row: dict[str, int]                 # prefix -> row of the solution
    only: frozenset[str] | None = None  # the prefixes this side answers for (None: every one; a site's pass: its part)

    def mine(self, prefix: str) -> bool:
        return self.only is None or prefix in self.only

    @classmethod
    def of(cls, model: Model, solution: Solution, only: frozenset[str] | None = None) -> Checked:
        offsets = prefix_offsets(model)
        row = {}
        at = {int(x): k for k, x in enumerate(solution.ids)}
        for fam in FAMILIES:
            for k, p in enumerate(model.prefixes[fam].table.prefixes):
                if offsets[fam] + k in at:
                    row[p] = at[offsets[fam] + k]
        return cls(model, solution, row, only)

    def dist(self, prefix: str) -> np.ndarray | None:
        r = self.row.get(prefix)
        return None if r is None else self.solution.dist[r]


def _family(prefix: str) -> Family:
    return "ipv6" if ":" in prefix else "ipv4"


def _names(names: Iterable[str], limit: int | None = None) -> str:
    names = list(names)
    if limit is not None and len(names) > limit:
        return ", ".join(names[:limit]) + f" and {len(names) - limit} more"
    return ", ".join(names)


def _denials(m: Model, fam: Family, u: int, k: int | None) -> str:
    """Why switch u sends prefix k (None: not in the model's universe) to none of its peers."""
    g = m.graphs[fam]
    edges = range(int(g.indptr[u]), int(g.indptr[u + 1]))
    if not len(edges):
        return f"{m.names[u]} has no {fam} session up"
    maps: dict[str, int] = defaultdict(int)
    for e in edges:
        s = m.sessions[int(g.session[e])]
        mine = s.pa if s.a == u else s.pb
        if k is None or m.out_results[fam][g.out_policy[e], k] == DENY:
            rm = mine.map_out(fam)
            maps[f"route-map {rm} out to {mine.group or mine.address}" if rm else
                 "a summary-only aggregate that suppresses it"] += 1
    return f"{m.names[u]}: " + ", ".join(f"{x} ({n} sessions)" for x, n in sorted(maps.items())) + " denies it"


def _where_it_stops(m: Model, c: Checked, prefix: str, lost: Iterable[int]) -> str:
    """The switches that hold `prefix` but do not send it to a peer that lacks it, and why; the lost switches
    without a session up."""
    fam = _family(prefix)
    g = m.graphs[fam]
    d = c.dist(prefix)
    assert d is not None
    k = m.prefixes[fam].position[prefix]
    why: dict[str, set[str]] = defaultdict(set)
    for e in np.flatnonzero((d[g.src] >= 0) & (d[g.dst] < 0)):
        u, v = int(g.src[e]), int(g.dst[e])
        s = m.sessions[int(g.session[e])]
        mine, theirs = (s.pa, s.pb) if s.a == u else (s.pb, s.pa)
        if m.out_results[fam][g.out_policy[e], k] == DENY:
            rm = mine.map_out(fam)
            why[m.names[u]].add(f"its route-map {rm} out to {mine.group or mine.address} denies it" if rm else
                                "a summary-only aggregate suppresses it")
        elif m.in_results[fam][g.in_policy[e], k] == DENY:
            why[m.names[v]].add(f"its route-map {theirs.map_in(fam)} in from {m.names[u]} denies it")
        else:
            why[m.names[v]].add(f"the AS path from {m.names[u]} holds its AS {m.asn[v]}")
    alone = [m.names[i] for i in lost if g.indptr[i] == g.indptr[i + 1]]
    parts = [f"{who} ({'; '.join(sorted(r))})" for who, r in sorted(why.items())]
    if alone:
        parts.append(f"{_names(alone)} (no {fam} session up)")
    return "; ".join(parts) or "nowhere: no session carries it on"


def rack_prefixes(fabric: Fabric) -> list[tuple[str, str]]:
    """(rack switch, prefix) of every rack prefix the design has."""
    return [(d.name, p) for d in fabric.devices.values() if d.role in RACK_ROLES and d.routing is not None
            for p in (*d.routing.aggregates4, *d.routing.aggregates6)]


def rack_reach(fabric: Fabric, files: Checked, design: Checked) -> list[Finding]:
    m, out = files.model, []
    racks = np.array([i for i in range(m.n) if m.role[i] in RACK_ROLES], dtype=np.int64)
    in_design = np.array([design.model.index.get(m.names[i], -1) for i in racks], dtype=np.int64)
    network = np.array([m.network[i] for i in racks])
    for origin, prefix in rack_prefixes(fabric):
        if origin not in m.index or not files.mine(prefix):
            continue
        o = m.index[origin]
        want = design.dist(prefix)
        got = files.dist(prefix)
        others = (racks != o) & (network == m.network[o])
        if want is not None:
            others &= (in_design >= 0) & (want[np.maximum(in_design, 0)] >= 0)
        lost_mask = others & ((got[racks] < 0) if got is not None else True)
        if not lost_mask.any():
            continue
        lost = [int(i) for i in racks[lost_mask]]
        fam = _family(prefix)
        if got is None:
            held = prefix in m.prefixes[fam].held
            stop = _denials(m, fam, o, None) if held else f"{origin}, which does not originate it"
        else:
            stop = _where_it_stops(m, files, prefix, lost)
        out.append(Finding(m.files[o], prefix, f"{origin}'s {prefix} (rack {m.rack[o]}) does not reach "
                           f"{len(lost)} of {int(others.sum())} racks of its network: "
                           f"{_names(m.rack[i] for i in lost)}; it stops at {stop}", rule="rack-reach"))
    return out


Deviation = tuple[int, int, int, int]     # (switch of the files' model, rack prefix's position, width, design's)


def ecmp_deviations(fabric: Fabric, files: Checked, design: Checked) -> list[Deviation]:
    """Every (switch, rack prefix of the solutions) whose ECMP width is not the design's, where both route it."""
    m, e = files.model, design.model
    listed = rack_prefixes(fabric)
    at = [k for k, (_, p) in enumerate(listed) if p in files.row and p in design.row]
    if not at:
        return []
    rows_f = np.array([files.row[listed[k][1]] for k in at])
    rows_d = np.array([design.row[listed[k][1]] for k in at])
    common = [i for i in range(m.n) if m.names[i] in e.index]
    cols_f = np.array(common, dtype=np.int64)
    cols_d = np.array([e.index[m.names[i]] for i in common], dtype=np.int64)
    gw = files.solution.width[np.ix_(rows_f, cols_f)]
    gd = files.solution.dist[np.ix_(rows_f, cols_f)]
    ww = design.solution.width[np.ix_(rows_d, cols_d)]
    wd = design.solution.dist[np.ix_(rows_d, cols_d)]
    bad = (wd > 0) & (gd > 0) & (gw != ww)
    r, j = np.nonzero(bad)
    return [(int(cols_f[y]), at[int(x)], int(gw[x, y]), int(ww[x, y])) for x, y in zip(r, j, strict=True)]


def ecmp_findings(fabric: Fabric, m: Model, deviations: Iterable[Deviation]) -> list[Finding]:
    """One finding per switch with deviations (of one pass or of every pass of a site), its prefixes in order."""
    listed = rack_prefixes(fabric)
    by: dict[int, list[tuple[int, int, int]]] = defaultdict(list)
    for i, k, got, want in deviations:
        by[i].append((k, got, want))
    out = []
    for i in sorted(by):
        rows = sorted(by[i])
        names = ", ".join(f"{listed[k][1]} {got} (design {want})" for k, got, want in rows[:LISTED])
        more = f" and {len(rows) - LISTED} more" if len(rows) > LISTED else ""
        caps = {f"{f} {int(m.maximum_paths[f][i])}" for f in FAMILIES if any(_family(listed[k][1]) == f
                                                                             for k, _, _ in rows)}
        out.append(Finding(m.files[i], listed[rows[0][0]][1], f"{m.names[i]} ({m.role[i] or 'switch'}) has other "
                           f"ECMP widths than the design towards {len(rows)} rack prefixes: {names}{more} "
                           f"(its maximum-paths: {', '.join(sorted(caps))})", rule="ecmp-width"))
    return out


def ecmp_width(fabric: Fabric, files: Checked, design: Checked) -> list[Finding]:
    """Every switch's ECMP width towards every rack prefix of its network, against the design's."""
    return ecmp_findings(fabric, files.model, ecmp_deviations(fabric, files, design))


def loopback_reach(files: Checked, design: Checked) -> list[Finding]:
    m, e = files.model, design.model
    to_files = np.array([m.index.get(x, -1) for x in e.names], dtype=np.int64)
    out = []
    for fam in FAMILIES:
        fp = e.prefixes[fam]
        host = 32 if fam == "ipv4" else 128
        for k, lo in enumerate(fp.table.prefixes):
            if int(fp.table.length[k]) != host or not fp.originators[k] or not files.mine(lo):
                continue
            want = design.dist(lo)
            assert want is not None
            got = files.dist(lo)
            o = fp.originators[k][0]
            mask = (want >= 0) & (to_files >= 0)
            mask[o] = False
            if got is not None:
                mask &= got[np.maximum(to_files, 0)] < 0
            if mask.any():
                name = e.names[o]
                lost = [e.names[j] for j in np.flatnonzero(mask)]
                where = m.files[m.index[name]] if name in m.index else "fabric.json"
                out.append(Finding(where, lo, f"{name}'s loopback {lo} is not reached at {len(lost)} switches the "
                                   f"design reaches it at: {_names(lost, 20)}", rule="loopback-reach"))
    return out


def frontend_reach(fabric: Fabric, files: Checked) -> list[Finding]:
    """GPU racks <-> storage racks and the service hosts' rack, over the front end, both ways."""
    m = files.model
    by_rack: dict[str, set[str]] = defaultdict(set)
    for d in fabric.devices.values():
        by_rack[d.rack].add(d.role)
    fe = {d.rack: d for d in fabric.devices.values() if d.role == "fe-rsw" and d.routing is not None}
    gpu = sorted(r for r, d in fe.items() if "host" in by_rack[r])
    far = sorted(r for r, d in fe.items() if by_rack[r] & {"storage", "service"})
    out = []
    for a in gpu:
        for b in far:
            for x, y in ((a, b), (b, a)):
                sx, sy = fe[x], fe[y]
                if sx.name not in m.index:
                    continue
                i = m.index[sx.name]
                missing = [p for p in (*sy.routing.aggregates4, *sy.routing.aggregates6)  # type: ignore[union-attr]
                           if files.mine(p) and ((held := files.dist(p)) is None or held[i] < 0)]
                if missing:
                    kind = "storage" if "storage" in by_rack[y] else ("service" if "service" in by_rack[y] else "GPU")
                    out.append(Finding(m.files[i], missing[0], f"{sx.name} (rack {x}) has no route to "
                                       f"{', '.join(missing)} of {kind} rack {y} ({sy.name})", rule="frontend-reach"))
    return out


def link_prefix(files: Checked) -> list[Finding]:
    m = files.model
    ends: dict[str, set[str]] = defaultdict(set)
    out = []
    for fam in FAMILIES:
        table = m.prefixes[fam].table
        for k, p in enumerate(table.prefixes):
            if int(table.length[k]) not in (31, 127) or not files.mine(p):
                continue
            if not ends:
                from teton.verify.policy import canonical

                for i in range(m.n):
                    for a in m.addresses[i]:
                        ends[canonical(a)].add(m.names[i])
            d = files.dist(p)
            assert d is not None
            beyond = [m.names[i] for i in np.flatnonzero(d >= 0) if m.names[i] not in ends.get(p, set())]
            if beyond:
                origin = m.prefixes[fam].originators[k]
                where = m.files[origin[0]] if origin else ""
                out.append(Finding(where, p, f"link subnet {p} (of {_names(sorted(ends.get(p, ())))}) is in BGP "
                                   f"beyond its ends, at {len(beyond)} switches: {_names(beyond, 20)}",
                                   rule="link-prefix"))
    return out


def valleys(files: Checked) -> list[Finding]:
    m, s = files.model, files.solution
    out = []
    prefixes = {r: p for p, r in files.row.items()}
    for r in np.flatnonzero(s.valley.any(axis=1)):
        at = [m.names[i] for i in np.flatnonzero(s.valley[r])]
        i = int(np.flatnonzero(s.valley[r])[0])
        out.append(Finding(m.files[i], prefixes[int(r)], f"the paths to {prefixes[int(r)]} at {len(at)} switches go "
                           f"down a tier and up again: {_names(at, 20)}", rule="valley"))
    return out


def originations(fabric: Fabric, files: Checked) -> list[Finding]:
    m = files.model
    design = design_originations(fabric)
    defaults = {n for n, d in fabric.devices.items() if d.routing is not None and d.routing.default_originate}
    allowed = {p for ps in design.values() for p in ps}
    out = []
    for fam in FAMILIES:
        fp = m.prefixes[fam]
        for k, p in enumerate(fp.table.prefixes):
            if not files.mine(p):
                continue
            if p == DEFAULT[fam] and k == fp.default:
                senders = {m.names[int(u)] for u in m.graphs[fam].src[m.graphs[fam].default]}
                extra = sorted(senders - defaults)
                if extra:
                    i = m.index[extra[0]]
                    out.append(Finding(m.files[i], p, f"{_names(extra)} originate a default route the design does "
                                       "not have them send", rule="unexpected-prefix"))
                continue
            wrong = [o for o in fp.originators[k] if p not in design.get(m.names[o], set())]
            if p not in allowed or wrong:
                d = files.dist(p)
                spread = int((d >= 0).sum()) if d is not None else 0
                who = wrong or list(fp.originators[k])
                out.append(Finding(m.files[who[0]], p, f"{_names(m.names[o] for o in who)} send {p}, which the design "
                                   f"does not have {'them' if len(who) > 1 else 'it'} originate; {spread} switches "
                                   "hold it", rule="unexpected-prefix"))
    for name, prefixes in sorted(design.items()):
        if name not in m.index:
            continue
        i = m.index[name]
        for p in sorted(prefixes):
            if not files.mine(p):
                continue
            fam = _family(p)
            k = m.prefixes[fam].position.get(p, -1)
            if (k < 0 or i not in m.prefixes[fam].originators[k]) and i not in m.prefixes[fam].held.get(p, ()):
                out.append(Finding(m.files[i], p, f"{name} does not originate {p}, which the design has it announce",
                                   rule="missing-origination"))
    return out


def maximum_prefix(files: Checked) -> list[Finding]:
    m, s = files.model, files.solution
    out = []
    for fam in FAMILIES:
        g = m.graphs[fam]
        over = np.flatnonzero((g.max_prefix >= 0) & (s.received[fam] > g.max_prefix))
        for e in over:
            v, u = int(g.dst[e]), int(g.src[e])
            out.append(Finding(m.files[v], g.dst_port[e], f"{m.names[v]} receives {int(s.received[fam][e])} {fam} "
                               f"routes from {m.names[u]} but its maximum-prefix is {int(g.max_prefix[e])}: the "
                               "session would be torn down", rule="maximum-prefix"))
    return out


def check_all(fabric: Fabric, files: Checked, design: Checked) -> list[Finding]:
    return [*rack_reach(fabric, files, design), *ecmp_width(fabric, files, design), *loopback_reach(files, design),
            *frontend_reach(fabric, files), *link_prefix(files), *valleys(files), *originations(fabric, files),
            *maximum_prefix(files)]
