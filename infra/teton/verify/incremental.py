"""One failure at a time against a solved base, for `--fail-each`: exact, and far cheaper than solving again.

The base keeps, per origin group and switch, what the search settled: the AS-path length, the path held (its ASNs),
whether it went down a tier, the best parent.  When a switch or a link fails, the only switches whose best routes can
change at once are those that counted the failed one among their equal candidates (its children).  Each child's
candidates are counted again without it: if it keeps at least one, with a best path that holds the same ASNs and the
same descent, its length and what it advertises are unchanged, so nothing behind it changes and only its ECMP width,
bandwidth and valley flag are patched.  A group where a child loses its route or its advertised path, or where the
failed switch originates the prefix, is searched again from scratch (`teton.verify.solve`).  A test holds the result
equal to a full solve for every single failure of the lab's tiers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from teton import environment
from teton.fabric.bgpview import FAMILIES
from teton.fabric.intent import Family
from teton.verify.model import Model
from teton.verify.policy import DENY
from teton.verify.solve import BATCH, INF, KERNEL, PATH_WIDTH, Down, Solution, _ranges, _Search, _search, prefix_offsets


@dataclass
class Base:
    """A solved batch of groups of one family, kept (arrays groups x switches, flattened)."""

    fam: Family
    groups: np.ndarray
    search: _Search


def solve_base(model: Model, fam: Family, groups: np.ndarray) -> Base:
    s = _Search(model, fam, groups, np.ones(len(groups), dtype=np.int64), Down.none(model), count=False)
    s.run()
    return Base(fam, groups, s)


def _in_edges(model: Model, fam: Family) -> tuple[np.ndarray, np.ndarray]:
    """(indptr, edges) of every switch's incoming edges (the session graph's transpose)."""
    g = model.graphs[fam]
    order = np.argsort(g.dst, kind="stable")
    ptr = np.zeros(model.n + 1, dtype=np.int64)
    np.add.at(ptr, g.dst.astype(np.int64) + 1, 1)
    return np.cumsum(ptr), order


def _candidates(s: _Search, model: Model, b: np.ndarray, e: np.ndarray, cut: np.ndarray,
                ) -> tuple[np.ndarray, np.ndarray]:
    """Which (group, edge) pairs are counted candidates of the edge's receiver in the base, the edges in `cut` and
    those of failed switches excluded; and the prepend each carries."""
    g, n = s.g, s.n
    u, v = g.src[e], g.dst[e]
    var = model.out_results[s.fam][g.out_policy[e], s.rep[b]]
    ok = (var != DENY) & (model.in_results[s.fam][g.in_policy[e], s.rep[b]] != DENY) & ~cut[e]
    du, dv = s.dist[b * n + u], s.dist[b * n + v]
    ok &= (du != INF) & (dv != INF) & (du.astype(np.int64) + 1 + model.prepend_length[np.maximum(var, 0)] == dv)
    target = s.asn_id[v]
    loop = (s.asn_id[u] == target) | (s.path[b * n + u] == target[:, None]).any(axis=1)
    if s.has_prepend:
        loop |= (model.prepend_asns[np.maximum(var, 0)] == model.asn[v][:, None]).any(axis=1)
    return ok & ~loop & ~s.seeded[b * n + v], var


def fail(model: Model, base: Base, down: Down) -> tuple[tuple[np.ndarray, ...], np.ndarray]:
    """(dist, width, bandwidth, valley) of the base's groups under `down` (groups x switches), and the groups (their
    positions) that must be searched again."""
    s, fam = base.search, base.fam
    g, n, B = s.g, s.n, s.B
    shape = (B, n)
    dist = np.where(s.dist == INF, np.int16(-1), s.dist).reshape(shape).copy()
    width, bw, valley = s.width.reshape(shape).copy(), s.bw.reshape(shape).copy(), s.valley.reshape(shape).copy()
    dead = down.nodes
    cut = down.edges[fam] | dead[g.src] | dead[g.dst]
    redo = (s.path_len.reshape(shape) > PATH_WIDTH).any(axis=1)   # paths longer than kept: search again
    for x in np.flatnonzero(dead):
        redo |= s.dist.reshape(shape)[:, x] == 0            # it originates the group's prefixes
    failed = np.flatnonzero(cut)
    if g.default[failed].any():                             # a default route's seeds: search its group again
        redo |= s.rep == model.prefixes[fam].default
    if not len(failed):
        return (dist, width, bw, valley), np.flatnonzero(redo)
    if KERNEL is not None and not environment.get("TETON_VERIFY_NUMPY"):
        ptr, into = _in_edges(model, fam)
        KERNEL.patch_groups(
            n, s.rep.astype(np.int64), failed.astype(np.int64), cut, dead, ptr, into.astype(np.int64),
            g.src.astype(np.int64), g.dst.astype(np.int64), g.rank, g.speed, g.out_policy.astype(np.int64),
            g.in_policy.astype(np.int64), model.out_results[fam], model.in_results[fam], s.asn_id, model.asn,
            model.tier, s.maxpaths, model.relax, model.prepend_length, KERNEL.prepend_ids_of(model.prepend_asns,
                                                                                           s._asns),
            s.dist, s.parent, s.pvar, s.seeded, s.desc, s.path, s.path_len, s.ccount, s.dcount, s.vcount, width, bw,
            valley, redo)
        _dead(dist, width, bw, valley, dead)
        return (dist, width, bw, valley), np.flatnonzero(redo)
    bb = np.repeat(np.arange(B), len(failed))
    ee = np.tile(failed, B)
    counted, _ = _candidates(s, model, bb, ee, np.zeros(len(g), dtype=bool))
    hit = np.unique(bb[counted] * n + g.dst[ee[counted]])
    hit = hit[~dead[hit % n]]
    if len(hit):
        redo |= _patch(model, s, hit, cut, width, bw, valley)
    _dead(dist, width, bw, valley, dead)
    return (dist, width, bw, valley), np.flatnonzero(redo)


def _dead(dist: np.ndarray, width: np.ndarray, bw: np.ndarray, valley: np.ndarray, dead: np.ndarray) -> None:
    dist[:, dead] = -1
    width[:, dead] = 0
    bw[:, dead] = 0
    valley[:, dead] = False


def _patch(model: Model, s: _Search, hit: np.ndarray, cut: np.ndarray, width: np.ndarray, bw: np.ndarray,
           valley: np.ndarray) -> np.ndarray:
    """Count the candidates of every (group, switch) in `hit` again without the failed edges; patch what changes
    only there; the groups where more changes (to search again)."""
    g, n, B = s.g, s.n, s.B
    ptr, into = _in_edges(model, s.fam)
    b, v = hit // n, hit % n
    owner, k = _ranges(ptr[v], ptr[v + 1] - ptr[v])
    e = into[k]
    bb = b[owner]
    counted, var = _candidates(s, model, bb, e, cut)
    redo = np.zeros(B, dtype=bool)
    if not s.all_relax:
        redo[np.unique(b[~model.relax[v]])] = True
    count = np.bincount(owner, weights=counted, minlength=len(hit))
    lost = count == 0
    redo[np.unique(b[lost])] = True
    rank = np.where(counted, g.rank[e], np.iinfo(np.int64).max)
    least = np.full(len(hit), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(least, owner, rank)
    first = counted & (rank == least[owner])
    best = np.full(len(hit), -1, dtype=np.int64)
    best[owner[first]] = e[first]
    best_var = np.zeros(len(hit), dtype=np.int8)
    best_var[owner[first]] = var[first]
    old = s.parent[hit]
    u_new, u_old = g.src[np.maximum(best, 0)], g.src[np.maximum(old, 0)]
    same = (best >= 0) & (old >= 0) & (s.asn_id[u_new] == s.asn_id[u_old]) & (best_var == s.pvar[hit])
    same &= (s.path[b * n + u_new] == s.path[b * n + u_old]).all(axis=1)
    same &= s.path_len[b * n + u_new] == s.path_len[b * n + u_old]
    u = g.src[e]
    du = s.desc[bb * n + u]
    desc = np.bincount(owner, weights=counted & ((s.tier[u] > s.tier[v[owner]]) | du), minlength=len(hit)) > 0
    same &= desc == s.desc[hit]
    redo[np.unique(b[~same & ~lost])] = True
    keep = ~redo[b]
    w = np.minimum(count, s.maxpaths[v])
    speed = np.bincount(owner, weights=g.speed[e] * counted, minlength=len(hit))
    up = np.bincount(owner, weights=counted & (s.tier[v[owner]] > s.tier[u]) & du, minlength=len(hit)) > 0
    width[b[keep], v[keep]] = w[keep]
    bw[b[keep], v[keep]] = np.where(count > 0, speed / np.maximum(count, 1) * w, 0)[keep]
    valley[b[keep], v[keep]] = up[keep]
    return redo


@dataclass
class Bases:
    """The base of every family's groups of a set of prefixes (global ids), in batches."""

    ids: np.ndarray
    batches: list[Base]
    where: list[tuple[int, int]]          # per id: (batch, position in it)


def solve_bases(model: Model, ids: np.ndarray) -> Bases:
    offsets = prefix_offsets(model)
    batches: list[Base] = []
    where = [(-1, -1)] * len(ids)
    for fam in FAMILIES:
        size = len(model.prefixes[fam].table)
        rows = np.flatnonzero((ids >= offsets[fam]) & (ids < offsets[fam] + size))
        if not len(rows):
            continue
        groups = model.prefixes[fam].group[ids[rows] - offsets[fam]]
        unique, inverse = np.unique(groups, return_inverse=True)
        for start in range(0, len(unique), BATCH):
            batches.append(solve_base(model, fam, unique[start:start + BATCH]))
            for r, k in zip(rows, inverse, strict=True):
                if start <= k < start + BATCH:
                    where[int(r)] = (len(batches) - 1, int(k - start))
    return Bases(ids, batches, where)


def fail_solution(model: Model, bases: Bases, down: Down) -> Solution:
    """The bases' prefixes solved under `down`: patched where that is exact, searched again where not."""
    results = []
    for base in bases.batches:
        arrays, redo = fail(model, base, down)
        if len(redo):
            d, w, b, v, _ = _search(model, base.fam, base.groups[redo], np.ones(len(redo), dtype=np.int64), down,
                                    False)
            for out, new in zip(arrays, (d, w, b, v), strict=True):
                out[redo] = new
        results.append(arrays)
    pick = np.array(bases.where, dtype=np.int64).reshape(-1, 2)
    start = np.cumsum([0] + [len(r[0]) for r in results])
    rows = start[pick[:, 0]] + pick[:, 1] if len(pick) else np.zeros(0, dtype=np.int64)
    parts = [np.concatenate([r[k] for r in results])[rows] if results else np.zeros((0, model.n))
             for k in range(4)]
    return Solution(bases.ids, parts[0], parts[1], parts[2], parts[3],
                    {f: np.zeros(len(g), dtype=np.int64) for f, g in model.graphs.items()})
