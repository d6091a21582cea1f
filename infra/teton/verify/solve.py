"""RFC 7938 eBGP best paths for a chunk of prefixes: `solve(model, chunk, down) -> Solution`, a pure function.

Per origin group (prefixes that propagate alike, `teton.verify.model`), a breadth-first search over the session graph,
layer by layer in AS-path length (a prepend makes a longer step: the layers are buckets of path lengths), for many
groups at once (every array is groups x switches, flattened):

- the originators hold the route with an empty AS path (length 0); a default route starts at the receivers of
  `default-originate` whose in-policy takes it, with the sender's ASN as its path;
- a switch that holds a route sends it on every session whose out-policy permits it (with the policy's prepend), and
  the receiver accepts it when its in-policy permits it and its own ASN is not in the path (the path is the chain of
  best parents back to the origin: each switch advertises its one best path);
- a switch's best routes are those of the shortest AS path; it installs as many of them as it has equal candidates
  from peers one layer nearer (with multipath-relax, whatever their neighbour ASN; without it, those from the best
  path's neighbour ASN), at most its `maximum-paths`; its best path (advertised on) is the candidate of the lowest
  (router-id, peer address), as with `bgp bestpath compare-routerid`;
- a path that goes down a tier and then up again is a valley.

The answer for a prefix does not depend on which other prefixes share its chunk or batch, so chunks can be solved
anywhere (Dask workers) and concatenated; `received` (routes each session delivers) adds up over chunks.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from teton import environment
from teton.fabric.bgpview import FAMILIES
from teton.fabric.intent import Family
from teton.verify.model import Model
from teton.verify.policy import DENY

try:
    from teton.verify import kernel as _kernel
    KERNEL: ModuleType | None = _kernel
except ImportError:          # numba missing: the vectorized search alone
    KERNEL = None

INF = np.int16(32767)
PATH_WIDTH = 6      # AS-path entries kept per held route (longer paths: their parents are walked)
BATCH = 384          # origin groups searched together (memory: BATCH x switches x ~16 bytes)


@dataclass(frozen=True)
class Down:
    """What has failed: switches, and per family the session edges (both directions of a failed link)."""

    nodes: np.ndarray                         # bool (n,)
    edges: dict[Family, np.ndarray]           # bool (E,) per family

    @classmethod
    def none(cls, model: Model) -> Down:
        return cls(np.zeros(model.n, dtype=bool), {f: np.zeros(len(g), dtype=bool) for f, g in model.graphs.items()})


@dataclass
class Solution:
    """Per prefix of a chunk (global ids: a family's prefixes after the previous family's) and switch."""

    ids: np.ndarray                           # int64 (P,)
    dist: np.ndarray                          # int16 (P, n): AS-path length; -1 no route; 0 its own
    width: np.ndarray                         # int16 (P, n): next hops installed (0: its own, or no route)
    bandwidth: np.ndarray                     # float32 (P, n): Gb/s over those next hops
    valley: np.ndarray                        # bool (P, n): its path goes down a tier and up again
    received: dict[Family, np.ndarray]        # int64 (E,) per family: routes delivered on each edge

    @classmethod
    def empty(cls, n: int, received: dict[Family, np.ndarray] | None = None) -> Solution:
        """No prefix over `n` switches (with `received`, routes counted elsewhere)."""
        z = np.zeros((0, n))
        return cls(np.zeros(0, dtype=np.int64), z.astype(np.int16), z.astype(np.int16), z.astype(np.float32),
                   z.astype(bool), received or {})


def prefix_offsets(model: Model) -> dict[Family, int]:
    """Where each family's prefixes start among the global prefix ids."""
    out, at = {}, 0
    for fam in FAMILIES:
        out[fam] = at
        at += len(model.prefixes[fam].table)
    return out


def prefix_count(model: Model) -> int:
    return sum(len(model.prefixes[f].table) for f in FAMILIES)


def solve(model: Model, chunk: np.ndarray, down: Down | None = None, count: bool = True) -> Solution:
    """Every switch's best route to every prefix of `chunk` (global ids), with `down` failed; `count`: also the
    routes each session delivers (`Solution.received`; without it, faster, zeros)."""
    down = down or Down.none(model)
    chunk = np.asarray(chunk, dtype=np.int64)
    n = model.n
    dist = np.full((len(chunk), n), -1, dtype=np.int16)
    width = np.zeros((len(chunk), n), dtype=np.int16)
    bandwidth = np.zeros((len(chunk), n), dtype=np.float32)
    valley = np.zeros((len(chunk), n), dtype=bool)
    received = {f: np.zeros(len(g), dtype=np.int64) for f, g in model.graphs.items()}
    offsets = prefix_offsets(model)
    for fam in FAMILIES:
        size = len(model.prefixes[fam].table)
        rows = np.flatnonzero((chunk >= offsets[fam]) & (chunk < offsets[fam] + size))
        if not len(rows):
            continue
        groups = model.prefixes[fam].group[chunk[rows] - offsets[fam]]
        unique, inverse = np.unique(groups, return_inverse=True)
        weight = np.bincount(inverse, minlength=len(unique)).astype(np.int64)
        for start in range(0, len(unique), BATCH):
            part = slice(start, start + BATCH)
            d, w, b, v, r = _search(model, fam, unique[part], weight[part], down, count)
            sel = (inverse >= start) & (inverse < start + BATCH)
            at = rows[sel]
            k = inverse[sel] - start
            dist[at], width[at], bandwidth[at], valley[at] = d[k], w[k], b[k], v[k]
            received[fam] += r
    return Solution(chunk, dist, width, bandwidth, valley, received)


def _ranges(starts: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(position of the range each element comes from, the elements of every [start, start+count))."""
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(starts)), counts)
    offsets = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
    return owner, np.repeat(starts, counts) + offsets


class _Search:
    """The state of one batch of groups: arrays (groups, switches) flattened."""

    def __init__(self, model: Model, fam: Family, groups: np.ndarray, weight: np.ndarray, down: Down,
                 count: bool = True):
        self.m, self.fam, self.n = model, fam, model.n
        self.count = count
        self.all_relax = bool(model.relax.all())
        fp = model.prefixes[fam]
        self.g = model.graphs[fam]
        self.rep = fp.representative[groups]
        self.weight = weight
        self.B = len(groups)
        shape = self.B * self.n
        self.dist = np.full(shape, INF, dtype=np.int16)
        self.width = np.zeros(shape, dtype=np.int16)
        self.bw = np.zeros(shape, dtype=np.float32)
        self.parent = np.full(shape, -1, dtype=np.int64)
        self.pvar = np.zeros(shape, dtype=np.int8)
        self.seeded = np.zeros(shape, dtype=bool)
        self.desc = np.zeros(shape, dtype=bool)
        self.valley = np.zeros(shape, dtype=bool)
        self.ccount = np.zeros(shape, dtype=np.int16)     # equal candidates counted (before maximum-paths) ...
        self.dcount = np.zeros(shape, dtype=np.int16)     # ... of them down a tier or descended ...
        self.vcount = np.zeros(shape, dtype=np.int16)     # ... making a valley
        self.received = np.zeros(len(self.g), dtype=np.int64)
        g = self.g
        self.alive = ~down.edges[fam] & ~down.nodes[g.src] & ~down.nodes[g.dst]
        self.node_up = ~down.nodes
        self.E = len(g)
        self.asn = model.asn
        # the ASNs of each held path (as small numbers, -1 padded; a longer path falls back to walking its parents)
        self.asn_id = np.unique(model.asn, return_inverse=True)[1].astype(np.int16) if model.n else \
            np.zeros(0, dtype=np.int16)
        self.path = np.full((shape, PATH_WIDTH), -1, dtype=np.int16)
        self.path_len = np.zeros(shape, dtype=np.int16)
        self.tier = model.tier
        self.maxpaths = model.maximum_paths[fam].astype(np.int64)
        self.has_prepend = model.prepend_length.max(initial=0) > 0
        self._asns = np.unique(model.asn)
        self.buckets: dict[int, list[tuple[np.ndarray, ...]]] = {}

    def origins(self) -> np.ndarray:
        fp = self.m.prefixes[self.fam]
        flat = [b * self.n + o for b, p in enumerate(self.rep) for o in fp.originators[p] if self.node_up[o]]
        out = np.array(sorted(flat), dtype=np.int64)
        self.dist[out] = 0
        if fp.default >= 0:
            for b in np.flatnonzero(self.rep == fp.default):
                e = np.flatnonzero(self.default_edges() & self.alive)
                v = self.g.dst[e]
                ok = self.asn[v] != self.asn[self.g.src[e]]
                e, v = e[ok], v[ok]
                self._push(1, b * self.n + v, e, np.zeros(len(e), dtype=np.int8), np.ones(len(e), dtype=bool))
        return out

    def default_edges(self) -> np.ndarray:
        """The sessions whose sender originates a default route and whose receiver's in-policy takes it (FRR's and
        EOS's `default-originate` passes the receiver's route map in like any route)."""
        fp, g = self.m.prefixes[self.fam], self.g
        ins = self.m.in_results[self.fam]
        if fp.default < 0 or not ins.size:
            return g.default
        return g.default & (ins[g.in_policy, fp.default] != DENY)

    def _push(self, length: int, gv: np.ndarray, e: np.ndarray, var: np.ndarray, seed: np.ndarray) -> None:
        self.buckets.setdefault(length, []).append((gv, e, var, seed))

    def _chain_hit(self, gu: np.ndarray, target: np.ndarray) -> np.ndarray:
        """Whether `target` ASNs are in the path each (group, switch) `gu` holds (its best parents back to the
        origin, with their prepends)."""
        hit = np.zeros(len(gu), dtype=bool)
        idx = np.arange(len(gu))
        x = gu
        g, n = self.g, self.n
        while len(idx):
            pe = self.parent[x]
            live = pe >= 0
            idx, x, pe = idx[live], x[live], pe[live]
            if not len(idx):
                break
            s = g.src[pe]
            hit[idx] |= self.asn[s] == target[idx]
            if self.has_prepend:
                hit[idx] |= (self.m.prepend_asns[self.pvar[x]] == target[idx, None]).any(axis=1)
            more = ~self.seeded[x]
            idx, x = idx[more], (x[more] // n) * n + s[more]
        return hit

    def expand(self, frontier: np.ndarray, length: int) -> None:
        g, n = self.g, self.n
        frontier = frontier[self.sends[frontier]]
        b, u = frontier // n, frontier % n
        starts = g.indptr[u]
        owner, e = _ranges(starts, g.indptr[u + 1] - starts)
        bb = b[owner]
        r = self.edge_var[bb * self.E + e]
        keep = r != DENY
        owner, e, bb, r = owner[keep], e[keep], bb[keep], r[keep]
        gu = frontier[owner]
        v = g.dst[e]
        if not self.count:       # only the switches without the route yet matter
            fresh = self.dist[bb * n + v] == INF
            gu, bb, e, r, v = gu[fresh], bb[fresh], e[fresh], r[fresh], v[fresh]
        target = self.asn_id[v]
        loop = self.asn_id[g.src[e]] == target
        if self.has_prepend:
            loop |= (self.m.prepend_asns[r] == self.asn[v][:, None]).any(axis=1)
        loop |= (self.path[gu] == target[:, None]).any(axis=1)
        long = self.path_len[gu] > PATH_WIDTH
        if long.any():
            loop[long] |= self._chain_hit(gu[long], self.asn[v[long]])
        keep = ~loop
        gu, bb, e, r, v = gu[keep], bb[keep], e[keep], r[keep], v[keep]
        gv = bb * n + v
        if self.count:
            self.received += np.bincount(e, weights=self.weight[bb], minlength=len(g)).astype(np.int64)
            fresh = self.dist[gv] == INF
            gv, e, r = gv[fresh], e[fresh], r[fresh]
        if not self.has_prepend:
            self._push(length + 1, gv, e, r, np.zeros(len(gv), dtype=bool))
            return
        steps = length + 1 + self.m.prepend_length[r].astype(np.int64)
        for step in np.unique(steps):
            sel = steps == step
            self._push(int(step), gv[sel], e[sel], r[sel], np.zeros(int(sel.sum()), dtype=bool))

    def settle(self, length: int) -> np.ndarray:
        parts = self.buckets.pop(length)
        gv, e, var, seed = (np.concatenate([p[k] for p in parts]) if len(parts) > 1 else parts[0][k]
                            for k in range(4))
        if len(parts) > 1:   # candidates pushed from different layers (prepends): some may have settled since
            fresh = self.dist[gv] == INF
            gv, e, var, seed = gv[fresh], e[fresh], var[fresh], seed[fresh]
        if not len(gv):
            return gv
        g, n = self.g, self.n
        mark = np.zeros(self.B * n, dtype=bool)
        mark[gv] = True
        ug = np.flatnonzero(mark)
        pos = np.empty(self.B * n, dtype=np.int64)
        pos[ug] = np.arange(len(ug))
        seg = pos[gv]
        rank = g.rank[e]
        least = np.full(len(ug), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(least, seg, rank)
        first = rank == least[seg]                 # the one candidate of each switch that is its best path
        best = np.empty(len(ug), dtype=np.int64)
        best[seg[first]] = e[first]
        var_best = np.empty(len(ug), dtype=np.int8)
        var_best[seg[first]] = var[first]
        seed_best = np.zeros(len(ug), dtype=bool)
        seed_best[seg[first]] = seed[first]
        u, v = g.src[e], gv % n
        if self.all_relax:
            counted = np.ones(len(gv), dtype=bool)
            count = np.bincount(seg, minlength=len(ug)).astype(np.float64)
        else:
            counted = self.m.relax[v] | (self.asn[u] == self.asn[g.src[best]][seg])
            count = np.bincount(seg, weights=counted, minlength=len(ug)).astype(np.float64)
        speed = np.bincount(seg, weights=g.speed[e] * counted, minlength=len(ug))
        vv = ug % n
        w = np.minimum(count, self.maxpaths[vv])
        self.width[ug] = w
        self.bw[ug] = np.where(count > 0, speed / np.maximum(count, 1) * w, 0)
        gu = (gv // n) * n + u
        du = self.desc[gu] & ~seed
        down_step = (self.tier[u] > self.tier[v]) & ~seed
        vcount = np.bincount(seg, weights=counted & (self.tier[v] > self.tier[u]) & du, minlength=len(ug))
        dcount = np.bincount(seg, weights=counted & (down_step | du), minlength=len(ug))
        self.valley[ug], self.desc[ug] = vcount > 0, dcount > 0
        self.ccount[ug], self.dcount[ug], self.vcount[ug] = count, dcount, vcount
        self.parent[ug] = best
        self.pvar[ug] = var_best
        self.seeded[ug] = seed_best
        self.dist[ug] = length
        # the path it holds: its best parent's ASN, that parent's prepends, then the parent's own path (none when
        # the parent sent a default route of its own)
        bu = g.src[best]
        gbu = (ug // n) * n + bu
        ahead = [self.asn_id[bu][:, None]]
        if self.has_prepend:
            pre = self.m.prepend_asns[var_best]
            at = np.minimum(np.searchsorted(self._asns, pre), len(self._asns) - 1)
            ahead.append(np.where(pre < 0, -1, np.where(self._asns[at] == pre, at, -2)).astype(np.int16))
        head = np.concatenate(ahead, axis=1)
        tail = np.where(seed_best[:, None], -1, self.path[gbu])
        self.path[ug] = np.concatenate([head, tail], axis=1)[:, :PATH_WIDTH]
        self.path_len[ug] = np.where(seed_best, 0, self.path_len[gbu]) + head.shape[1]
        return ug

    def _prepare(self) -> None:
        """The vectorized search's per group and edge arrays: what the sender's out-policy gives (DENY or a prepend),
        the receiver's in-policy taken; and which switches send the group's route at all (the others, rack switches
        for what they did not originate, are not expanded)."""
        g, m = self.g, self.m
        res = np.ascontiguousarray(m.out_results[self.fam][:, self.rep].T)[:, g.out_policy]      # (B, E)
        if m.in_results[self.fam].size and (m.in_results[self.fam] == DENY).any():
            res[np.ascontiguousarray(m.in_results[self.fam][:, self.rep].T)[:, g.in_policy] == DENY] = DENY
        res[:, ~self.alive] = DENY
        self.edge_var = res.ravel()
        sends = np.zeros((self.B, self.n), dtype=bool)
        nodes = np.flatnonzero(np.diff(g.indptr) > 0)
        if self.E and len(nodes):
            sends[:, nodes] = np.logical_or.reduceat(res != DENY, g.indptr[nodes], axis=1)
        self.sends = sends.ravel()

    def run(self) -> None:
        if KERNEL is not None and not environment.get("TETON_VERIFY_NUMPY"):
            self._run_compiled()
            return
        self._prepare()
        frontier = self.origins()
        if len(frontier):
            self.expand(frontier, 0)
        while self.buckets:
            length = min(self.buckets)
            settled = self.settle(length)
            if len(settled):
                self.expand(settled, length)


    def _run_compiled(self) -> None:
        assert KERNEL is not None
        fp, g, m = self.m.prefixes[self.fam], self.g, self.m
        origins = [[o for o in fp.originators[p] if self.node_up[o]] for p in self.rep]
        ptr = np.zeros(self.B + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(o) for o in origins])
        nodes = np.array([o for os_ in origins for o in os_], dtype=np.int64)
        pre = KERNEL.prepend_ids_of(m.prepend_asns, self._asns)
        KERNEL.run_groups(
            self.n, g.indptr.astype(np.int64), g.src.astype(np.int64), g.dst.astype(np.int64), g.rank, g.speed,
            g.out_policy.astype(np.int64), g.in_policy.astype(np.int64), self.alive, m.out_results[self.fam],
            m.in_results[self.fam], self.rep.astype(np.int64), ptr, nodes, self.rep == fp.default, self.default_edges(),
            self.asn_id, m.asn, m.tier, self.maxpaths, m.relax, m.prepend_length, pre, self.count, self.weight,
            self.dist, self.width, self.bw, self.valley, self.parent, self.pvar, self.seeded, self.desc, self.path,
            self.path_len, self.received, self.ccount, self.dcount, self.vcount)


def _search(model: Model, fam: Family, groups: np.ndarray, weight: np.ndarray,
            down: Down, count: bool) -> tuple[np.ndarray, ...]:
    s = _Search(model, fam, groups, weight, down, count)
    s.run()
    shape = (s.B, s.n)
    dist = np.where(s.dist == INF, np.int16(-1), s.dist).reshape(shape)
    return dist, s.width.reshape(shape), s.bw.reshape(shape), s.valley.reshape(shape), s.received
