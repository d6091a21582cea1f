"""The search of `teton.verify.solve` compiled (numba), one origin group after another over the same arrays: the same
semantics and the same state arrays as the vectorized search, about twenty times faster on the 24k cluster.  Used
when numba is importable; tests/verify hold both equal on the labs.

Per group: originators at length 0 (a default route's receivers at 1), then layer by layer in AS-path length
(candidates of longer prepended steps wait in their layer's list): each switch that holds the route offers it on every
session its out-policy and the receiver's in-policy permit, unless the receiver's ASN is on the path it holds (its
best parents back to the origin, walked exactly); a receiver settles at the first layer with candidates, counts them
(those of the best path's neighbour ASN only without multipath-relax), installs at most its maximum-paths and takes
the candidate of the lowest rank as its best path.
"""

from __future__ import annotations

import numpy as np
from numba import njit

INF = 32767
MAXL = 512


@njit(cache=True)
def run_groups(n, indptr, src, dst, rank, speed, out_policy, in_policy, alive, out_res, in_res, reps, origin_ptr,
               origin_nodes, default_group, default_edges, asn_id, asn, tier, maxpaths, relax, prepend_len,
               prepend_ids, count, weight, dist, width, bw, valley, parent, pvar, seeded, desc, path, path_len,
               received):  # pragma: no cover - compiled
    E = len(src)
    W = path.shape[1]
    cap = 2 * E + 1
    cv = np.empty(cap, dtype=np.int64)
    ce = np.empty(cap, dtype=np.int64)
    cvar = np.empty(cap, dtype=np.int8)
    cseed = np.empty(cap, dtype=np.bool_)
    cnext = np.empty(cap, dtype=np.int64)
    head = np.full(MAXL, -1, dtype=np.int64)
    frontier = np.empty(n, dtype=np.int64)
    touched = np.empty(n, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    best_rank = np.empty(n, dtype=np.int64)
    best_e = np.empty(n, dtype=np.int64)
    best_var = np.empty(n, dtype=np.int8)
    best_seed = np.empty(n, dtype=np.bool_)
    cnt = np.zeros(n, dtype=np.int64)
    spd = np.zeros(n, dtype=np.float64)
    dsc = np.zeros(n, dtype=np.bool_)
    vly = np.zeros(n, dtype=np.bool_)
    tick = 0
    for b in range(len(reps)):
        base = b * n
        p = reps[b]
        for k in range(MAXL):
            head[k] = -1
        used = 0
        nf = 0
        for k in range(origin_ptr[b], origin_ptr[b + 1]):
            o = origin_nodes[k]
            dist[base + o] = 0
            frontier[nf] = o
            nf += 1
        if default_group[b]:
            for e in range(E):
                if default_edges[e] and alive[e] and asn_id[dst[e]] != asn_id[src[e]]:
                    cv[used] = dst[e]
                    ce[used] = e
                    cvar[used] = 0
                    cseed[used] = True
                    cnext[used] = head[1]
                    head[1] = used
                    used += 1
        level = 0
        while True:
            for f in range(nf):
                u = frontier[f]
                for e in range(indptr[u], indptr[u + 1]):
                    if not alive[e]:
                        continue
                    var = out_res[out_policy[e], p]
                    if var < 0 or in_res[in_policy[e], p] < 0:
                        continue
                    v = dst[e]
                    if not count and dist[base + v] != INF:
                        continue
                    t = asn_id[v]
                    loop = asn_id[u] == t
                    if not loop:
                        for j in range(prepend_ids.shape[1]):
                            if prepend_ids[var, j] == t:
                                loop = True
                    x = u
                    while not loop and parent[base + x] >= 0:
                        pe = parent[base + x]
                        s = src[pe]
                        if asn_id[s] == t:
                            loop = True
                            break
                        for j in range(prepend_ids.shape[1]):
                            if prepend_ids[pvar[base + x], j] == t:
                                loop = True
                        if seeded[base + x]:
                            break
                        x = s
                    if loop:
                        continue
                    if count:
                        received[e] += weight[b]
                    if dist[base + v] != INF:
                        continue
                    step = level + 1 + prepend_len[var]
                    if step >= MAXL:
                        continue
                    cv[used] = v
                    ce[used] = e
                    cvar[used] = var
                    cseed[used] = False
                    cnext[used] = head[step]
                    head[step] = used
                    used += 1
            level += 1
            while level < MAXL and head[level] < 0:
                level += 1
            if level >= MAXL:
                break
            tick += 1
            nt = 0
            c = head[level]
            while c >= 0:
                v = cv[c]
                if dist[base + v] == INF:
                    if stamp[v] != tick:
                        stamp[v] = tick
                        touched[nt] = v
                        nt += 1
                        best_rank[v] = 1 << 62
                        cnt[v] = 0
                        spd[v] = 0.0
                        dsc[v] = False
                        vly[v] = False
                    e = ce[c]
                    if rank[e] < best_rank[v]:
                        best_rank[v] = rank[e]
                        best_e[v] = e
                        best_var[v] = cvar[c]
                        best_seed[v] = cseed[c]
                c = cnext[c]
            c = head[level]
            while c >= 0:
                v = cv[c]
                if dist[base + v] == INF and stamp[v] == tick:
                    e = ce[c]
                    u = src[e]
                    if relax[v] or asn[u] == asn[src[best_e[v]]]:
                        cnt[v] += 1
                        spd[v] += speed[e]
                        if not cseed[c]:
                            du = desc[base + u]
                            if tier[v] > tier[u] and du:
                                vly[v] = True
                            if tier[u] > tier[v] or du:
                                dsc[v] = True
                c = cnext[c]
            head[level] = -1
            for k in range(nt):
                v = touched[k]
                i = base + v
                w = min(cnt[v], maxpaths[v])
                dist[i] = level
                width[i] = w
                bw[i] = spd[v] / max(cnt[v], 1) * w if cnt[v] > 0 else 0.0
                valley[i] = vly[v]
                desc[i] = dsc[v]
                parent[i] = best_e[v]
                pvar[i] = best_var[v]
                seeded[i] = best_seed[v]
                bu = src[best_e[v]]
                path[i, 0] = asn_id[bu]
                at = 1
                for j in range(prepend_len[best_var[v]]):
                    if at < W:
                        path[i, at] = prepend_ids[best_var[v], j]
                        at += 1
                held = 0
                if not best_seed[v]:
                    held = path_len[base + bu]
                    for j in range(W):
                        if at < W:
                            path[i, at] = path[base + bu, j]
                            at += 1
                path_len[i] = held + 1 + prepend_len[best_var[v]]
                frontier[k] = v
            nf = nt


def prepend_ids_of(prepend_asns: np.ndarray, asns: np.ndarray) -> np.ndarray:
    """The prepends' ASNs as the search's ASN numbers (-1 padding, -2 an ASN no switch has)."""
    if not len(asns):
        return np.full(prepend_asns.shape, -1, dtype=np.int16)
    at = np.minimum(np.searchsorted(asns, prepend_asns), len(asns) - 1)
    return np.where(prepend_asns < 0, -1, np.where(asns[at] == prepend_asns, at, -2)).astype(np.int16)
