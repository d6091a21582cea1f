"""The control-plane model of a build: switches, sessions and prefixes as arrays, built from the switches' BGP views
(each target's read-back of its files) alone.

- Switches are numbered by name; each has the ASN, router-id, `maximum-paths` per family and multipath-relax its files
  give.  From the build's fabric.json only what is not routing: its role (so its tier and network), zone and rack.
- Per family, the agreed sessions (`teton.verify.sessions`) are a directed graph in CSR form (`Graph.adjacency`, a
  scipy sparse matrix whose entry (u, v) is the number of the edge u -> v: u sends to v), with per edge the
  out-policy of u towards v, the in-policy of v from u, whether u sends v a default route, v's maximum-prefix, and
  the link's speed (from the fabric's cabling).
- Per family, the prefixes some switch holds in its BGP table of its own (connected routes its redistribute route map
  permits, networks present as connected routes, aggregates with a contributing route of its own) and sends to at least
  one peer, plus the default route where some switch originates one.  Local routes no session carries (more-specifics
  suppressed by a summary-only aggregate) are `held`: in the holder's table, nowhere else.
- Every distinct out- and in-policy is evaluated once over all the family's prefixes (`teton.verify.policy`); prefixes
  with the same originators and the same column of results propagate identically and form one origin group, solved
  once (`teton.verify.solve`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from teton.fabric.bgpview import FAMILIES, BgpView, address_int
from teton.fabric.externals import external_addresses
from teton.fabric.intent import Family
from teton.fabric.model import Fabric
from teton.fabric.roles import role
from teton.findings import Finding
from teton.verify.policy import DENY, MapKey, OutPolicy, PrefixTable, Prepends, evaluate, map_key, prefix_words
from teton.verify.sessions import Outside, Session, match_sessions

DEFAULT: dict[Family, str] = {"ipv4": "0.0.0.0/0", "ipv6": "::/0"}


@dataclass
class Graph:
    """One family's sessions: edge e goes from src[e] (it sends) to dst[e] (it receives); edges are numbered in CSR
    order, so those of switch u are indptr[u]:indptr[u+1]."""

    family: Family
    adjacency: sp.csr_array                 # (n, n), entry (u, v) = 1 + the number of the edge u -> v
    src: np.ndarray                         # int32 (E,)
    dst: np.ndarray                         # int32 (E,)
    out_policy: np.ndarray                  # int32 (E,): row of `Model.out_results[family]`
    in_policy: np.ndarray                   # int32 (E,): row of `Model.in_results[family]`
    default: np.ndarray                     # bool (E,): the sender originates a default route to the receiver
    rank: np.ndarray                        # int64 (E,): best-path tie-break among equal paths (lower wins)
    max_prefix: np.ndarray                  # int64 (E,): the receiver's maximum-prefix on it (-1: none)
    speed: np.ndarray                       # float64 (E,): the link's Gb/s (0: not in the cabling)
    src_port: list[str] = field(default_factory=list)
    dst_port: list[str] = field(default_factory=list)
    session: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))   # index into Model.sessions

    @property
    def indptr(self) -> np.ndarray:
        return self.adjacency.indptr

    def __len__(self) -> int:
        return len(self.src)


@dataclass
class FamilyPrefixes:
    """One family's prefixes, their originators and origin groups."""

    table: PrefixTable
    originators: list[tuple[int, ...]]      # per prefix: the switches that hold it of their own
    group: np.ndarray                       # int32 (P,): its origin group
    representative: np.ndarray              # int32 (G,): a prefix of each group
    default: int                            # the default route's index (-1: none)
    held: dict[str, tuple[int, ...]]        # local routes sent to no peer: prefix -> holders
    position: dict[str, int] = field(default_factory=dict)   # prefix -> its index

    def __post_init__(self) -> None:
        self.position = {p: k for k, p in enumerate(self.table.prefixes)}


@dataclass
class Model:
    names: tuple[str, ...]
    files: tuple[str, ...]
    asn: np.ndarray                         # int64 (n,)
    router_id: tuple[str | None, ...]
    tier: np.ndarray                        # int8 (n,): 1 rack switch, 2 spine, 3 aggregation, 0 unknown
    role: tuple[str, ...]                   # "" when the fabric does not know the switch
    network: tuple[str, ...]                # "roce", "frontend", ""
    zone: np.ndarray                        # int32 (n,), -1: none
    rack: tuple[str, ...]
    maximum_paths: dict[Family, np.ndarray]  # int16 (n,)
    relax: np.ndarray                       # bool (n,)
    sessions: list[Session]
    graphs: dict[Family, Graph]
    prefixes: dict[Family, FamilyPrefixes]
    out_results: dict[Family, np.ndarray]   # int8 (policies, P): DENY or a prepend index
    in_results: dict[Family, np.ndarray]    # int8 (policies, P)
    prepend_length: np.ndarray              # int16 (K,)
    prepend_asns: np.ndarray                # int64 (K, width), -1 padded
    unmodelled: list[Finding]               # what the model could not evaluate
    addresses: tuple[tuple[str, ...], ...] = ()   # per switch: its ports' addresses (with lengths)
    outside: tuple[Outside, ...] = ()       # sessions to another build of the site (not modelled here)
    index: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {n: i for i, n in enumerate(self.names)}

    @property
    def n(self) -> int:
        return len(self.names)


def _inside(x: str, a: str) -> bool:
    """x strictly more specific than a, within it."""
    xh, xl, xn = prefix_words(x)
    ah, al, an = prefix_words(a)
    if xn <= an or (":" in x) != (":" in a):
        return False
    v = (xh << 64) | xl
    w = (ah << 64) | al
    return an == 0 or (v >> (128 - an)) == (w >> (128 - an))


def local_routes(v: BgpView, family: Family) -> tuple[list[str], list[str]]:
    """(routes the switch holds of its own, its active summary-only aggregates)."""
    from teton.verify.policy import canonical, permits_scalar

    fam = v.family(family)
    if fam is None:
        return [], []
    mine = {canonical(c) for c in (*[p.address for p in v.ports if p.up], *v.loopbacks)
            if (":" in c) == (family == "ipv6")}
    routes: set[str] = set()
    if fam.connected:
        maps = {m.name: m for m in v.route_maps}
        plists = {p.name: p for p in v.prefix_lists if p.family == family}
        key = map_key(fam.connected_map, maps, plists)
        routes |= set(permits_scalar(sorted(mine), family, key))
    routes |= {canonical(n) for n in fam.networks if canonical(n) in mine}
    suppress = []
    for a, summary in fam.aggregates:
        a = canonical(a)
        if any(_inside(r, a) for r in routes):
            routes.add(a)
            if summary:
                suppress.append(a)
    return sorted(routes), sorted(suppress)


def build_model(views: Sequence[BgpView], fabric: Fabric | None) -> tuple[Model, list[Finding]]:
    """The model of `views` (switches by name) and the findings about their sessions and what it cannot model."""
    views = sorted(views, key=lambda v: v.name)
    n = len(views)
    sessions, findings, outside = match_sessions(views, external_addresses(fabric))
    unmodelled = [Finding(v.file, "", f"{v.name}: {p}", rule="verify-model", severity="warning")
                  for v in views for p in v.problems]
    for v in views:
        for rm in v.route_maps:
            for c in rm.clauses:
                if c.unmodelled:
                    unmodelled.append(Finding(v.file, f"route-map {rm.name} {c.seq}", f"{v.name}: not modelled: "
                                              f"{'; '.join(c.unmodelled)} (the clause is taken as never applying)",
                                              rule="verify-model", severity="warning"))
    devices = fabric.devices if fabric is not None else {}
    roles = [devices[v.name].role if v.name in devices else "" for v in views]
    tier = np.array([(r.level if (r := role(x)) is not None else 0) for x in roles], dtype=np.int8)
    network = tuple((r.network if (r := role(x)) is not None else "") for x in roles)
    zone = np.array([(devices[v.name].zone or -1) if v.name in devices else -1 for v in views], dtype=np.int32)
    speeds: dict[tuple[str, str], float] = {}
    if fabric is not None:
        for link in fabric.links:
            speeds[(link.a.device, link.a.port)] = speeds[(link.b.device, link.b.port)] = float(link.speed_gbps)
    prepends = Prepends()
    graphs: dict[Family, Graph] = {}
    prefixes: dict[Family, FamilyPrefixes] = {}
    out_results: dict[Family, np.ndarray] = {}
    in_results: dict[Family, np.ndarray] = {}
    maxpaths: dict[Family, np.ndarray] = {}
    for fam in FAMILIES:
        maxpaths[fam] = np.array([(f.maximum_paths if (f := v.family(fam)) is not None else 1) for v in views],
                                 dtype=np.int16)
        g, outs, ins, local = _graph(views, [s for s in sessions if s.family == fam], sessions, fam, speeds)
        graphs[fam] = g
        prefixes[fam], out_results[fam], in_results[fam] = _prefixes(views, fam, g, outs, ins, local, prepends)
    plen, pasn = prepends.arrays()
    model = Model(
        names=tuple(v.name for v in views), files=tuple(v.file for v in views),
        asn=np.array([v.asn for v in views], dtype=np.int64), router_id=tuple(v.router_id for v in views),
        tier=tier, role=tuple(roles), network=network, zone=zone,
        rack=tuple(devices[v.name].rack if v.name in devices else "" for v in views),
        maximum_paths=maxpaths, relax=np.array([v.multipath_relax for v in views], dtype=bool),
        sessions=sessions, graphs=graphs, prefixes=prefixes, out_results=out_results, in_results=in_results,
        prepend_length=plen, prepend_asns=pasn, unmodelled=unmodelled,
        addresses=tuple(tuple(p.address for p in v.ports) for v in views), outside=tuple(outside))
    assert model.n == n
    return model, findings


def _graph(views: Sequence[BgpView], fam_sessions: list[Session], all_sessions: list[Session], fam: Family,
           speeds: Mapping[tuple[str, str], float]) -> tuple[Graph, list[OutPolicy], list[MapKey],
                                                             list[tuple[list[str], list[str]]]]:
    local = [local_routes(v, fam) for v in views]
    maps = [{m.name: m for m in v.route_maps} for v in views]
    plists = [{p.name: p for p in v.prefix_lists if p.family == fam} for v in views]
    out_index: dict[OutPolicy, int] = {}
    in_index: dict[MapKey, int] = {}
    session_no = {id(s): k for k, s in enumerate(all_sessions)}
    rows = []
    outs_of: dict[tuple[int, str | None], int] = {}      # (switch, route map's name) -> out-policy
    ins_of: dict[tuple[int, str | None], int] = {}
    rids = [address_int(v.router_id)[1] if v.router_id else 0 for v in views]
    for s in fam_sessions:
        for u, v, pu, pv in ((s.a, s.b, s.pa, s.pb), (s.b, s.a, s.pb, s.pa)):
            name_out, name_in = pu.map_out(fam), pv.map_in(fam)
            o = outs_of.get((u, name_out))
            if o is None:
                out = OutPolicy(map_key(name_out, maps[u], plists[u]), tuple(local[u][1]))
                o = outs_of[(u, name_out)] = out_index.setdefault(out, len(out_index))
            i = ins_of.get((v, name_in))
            if i is None:
                inn = map_key(name_in, maps[v], plists[v])
                i = ins_of[(v, name_in)] = in_index.setdefault(inn, len(in_index))
            rid = rids[u]
            rows.append((u, v, o, i, fam in pu.default_originate, rid, address_int(pu.local_address or "0.0.0.0")[1],
                         pv.maximum_prefix if pv.maximum_prefix is not None else -1,
                         speeds.get((views[u].name, pu.local_port), 0.0), pu.local_port, pv.local_port,
                         session_no[id(s)]))
    rows.sort(key=lambda r: (r[0], r[1], r[9]))
    n = len(views)
    src = np.array([r[0] for r in rows], dtype=np.int32)
    dst = np.array([r[1] for r in rows], dtype=np.int32)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(indptr, src.astype(np.int64) + 1, 1)
    indptr = np.cumsum(indptr)
    adjacency = sp.csr_array((np.arange(1, len(rows) + 1, dtype=np.int64), dst, indptr), shape=(n, n))
    order = sorted(range(len(rows)), key=lambda k: (rows[k][5], rows[k][6], k))
    rank = np.empty(len(rows), dtype=np.int64)
    rank[np.array(order, dtype=np.int64)] = np.arange(len(rows))
    g = Graph(fam, adjacency, src, dst, np.array([r[2] for r in rows], dtype=np.int32),
              np.array([r[3] for r in rows], dtype=np.int32), np.array([r[4] for r in rows], dtype=bool), rank,
              np.array([r[7] for r in rows], dtype=np.int64), np.array([r[8] for r in rows], dtype=np.float64),
              [r[9] for r in rows], [r[10] for r in rows], np.array([r[11] for r in rows], dtype=np.int32))
    outs = sorted(out_index, key=out_index.__getitem__)
    ins = sorted(in_index, key=in_index.__getitem__)
    return g, outs, ins, local


def _prefixes(views: Sequence[BgpView], fam: Family, g: Graph, outs: list[OutPolicy], ins: list[MapKey],
              local: list[tuple[list[str], list[str]]], prepends: Prepends
              ) -> tuple[FamilyPrefixes, np.ndarray, np.ndarray]:
    holders: dict[str, list[int]] = defaultdict(list)
    for u, (routes, _) in enumerate(local):
        for r in routes:
            holders[r].append(u)
    # a local route enters the universe when one of its holders sends it on some session
    sent: set[str] = set()
    for u, (routes, _) in enumerate(local):
        if not routes:
            continue
        pols = sorted(set(g.out_policy[g.indptr[u]:g.indptr[u + 1]].tolist()))
        if not pols:
            continue
        small = PrefixTable(fam, routes)
        ok = np.zeros(len(routes), dtype=bool)
        for k in pols:
            ok |= evaluate(small, outs[k], prepends) != DENY
        sent |= {r for r, y in zip(routes, ok, strict=True) if y}
    universe = sorted(sent, key=prefix_words)
    default = -1
    if g.default.any():
        if DEFAULT[fam] not in sent:
            universe.insert(0, DEFAULT[fam])
        default = universe.index(DEFAULT[fam])
    table = PrefixTable(fam, universe)
    out_res = np.stack([evaluate(table, pol, prepends) for pol in outs]) if outs else \
        np.zeros((0, len(table)), dtype=np.int8)
    in_res = np.stack([evaluate(table, pol, prepends) for pol in ins]) if ins else \
        np.zeros((0, len(table)), dtype=np.int8)
    originators = [tuple(holders.get(p, ())) for p in universe]
    columns = np.ascontiguousarray(np.concatenate([out_res, in_res]).T)
    groups: dict[tuple[object, ...], int] = {}
    group = np.empty(len(universe), dtype=np.int32)
    reps: list[int] = []
    for k in range(len(universe)):
        key = (originators[k], k == default, columns[k].tobytes())
        got = groups.get(key)
        if got is None:
            got = groups[key] = len(reps)
            reps.append(k)
        group[k] = got
    held = {p: tuple(h) for p, h in sorted(holders.items()) if p not in sent}
    return (FamilyPrefixes(table, originators, group, np.array(reps, dtype=np.int32), default, held),
            out_res, in_res)


def same_routing(a: Model, b: Model) -> bool:
    """Whether two models route alike by construction (the same switches, sessions, policies' results, originators,
    ECMP limits and tie-breaks): then one's solution is the other's (the files as the design has them)."""
    if a.names != b.names or not np.array_equal(a.asn, b.asn) or not np.array_equal(a.relax, b.relax):
        return False
    if not (np.array_equal(a.prepend_length, b.prepend_length) and np.array_equal(a.prepend_asns, b.prepend_asns)):
        return False
    for fam in FAMILIES:
        ga, gb = a.graphs[fam], b.graphs[fam]
        pa, pb = a.prefixes[fam], b.prefixes[fam]
        if not np.array_equal(a.maximum_paths[fam], b.maximum_paths[fam]) or pa.table.prefixes != pb.table.prefixes \
                or pa.originators != pb.originators or pa.default != pb.default:
            return False
        for x in ("src", "dst", "default", "rank", "speed"):
            if not np.array_equal(getattr(ga, x), getattr(gb, x)):
                return False
        for ra, rb, ka, kb in ((a.out_results[fam], b.out_results[fam], ga.out_policy, gb.out_policy),
                               (a.in_results[fam], b.in_results[fam], ga.in_policy, gb.in_policy)):
            pairs = np.unique(np.stack([ka, kb]), axis=1) if len(ka) else np.zeros((2, 0), dtype=np.int64)
            if not np.array_equal(ra[pairs[0]], rb[pairs[1]]):
                return False
    return True
