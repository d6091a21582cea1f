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
               received, ccount, dcount, vcount):  # pragma: no cover - compiled
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
    dsc = np.zeros(n, dtype=np.int64)
    vly = np.zeros(n, dtype=np.int64)
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
                        dsc[v] = 0
                        vly[v] = 0
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
                                vly[v] += 1
                            if tier[u] > tier[v] or du:
                                dsc[v] += 1
                c = cnext[c]
            head[level] = -1
            for k in range(nt):
                v = touched[k]
                i = base + v
                w = min(cnt[v], maxpaths[v])
                dist[i] = level
                width[i] = w
                bw[i] = spd[v] / max(cnt[v], 1) * w if cnt[v] > 0 else 0.0
                valley[i] = vly[v] > 0
                desc[i] = dsc[v] > 0
                ccount[i] = cnt[v]
                dcount[i] = dsc[v]
                vcount[i] = vly[v]
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


@njit(cache=True)
def _counted(b, n, e, p, src, dst, out_policy, in_policy, out_res, in_res, dist, parent, pvar, seeded, asn_id,
             prepend_len, prepend_ids):  # pragma: no cover - compiled
    """Whether edge e is a counted candidate of its receiver in group b of a solved base; its prepend (-1: not)."""
    base = b * n
    u, v = src[e], dst[e]
    var = out_res[out_policy[e], p]
    if var < 0 or in_res[in_policy[e], p] < 0:
        return -1
    du, dv = dist[base + u], dist[base + v]
    if du == INF or dv == INF or seeded[base + v] or du + 1 + prepend_len[var] != dv:
        return -1
    t = asn_id[v]
    if asn_id[u] == t:
        return -1
    for j in range(prepend_ids.shape[1]):
        if prepend_ids[var, j] == t:
            return -1
    x = u
    while parent[base + x] >= 0:
        pe = parent[base + x]
        s = src[pe]
        if asn_id[s] == t:
            return -1
        for j in range(prepend_ids.shape[1]):
            if prepend_ids[pvar[base + x], j] == t:
                return -1
        if seeded[base + x]:
            break
        x = s
    return var


@njit(cache=True)
def patch_groups(n, reps, failed, cut, dead, in_ptr, in_edges, src, dst, rank, speed, out_policy, in_policy,
                 out_res, in_res, asn_id, asn, tier, maxpaths, relax, prepend_len, prepend_ids, dist, parent, pvar,
                 seeded, desc, path, path_len, ccount, dcount, vcount, width, bw, valley,
                 redo):  # pragma: no cover - compiled
    """`teton.verify.incremental.fail` for every group of a base: patch width, bandwidth and valley where a failure
    only narrows a switch's equal paths; flag in `redo` the groups to search again.  A switch whose best path stays
    has its counts lowered by what failed; one whose best path failed has its candidates counted again."""
    W = path.shape[1]
    stamp = np.full(n, -1, dtype=np.int64)
    hits = np.empty(n, dtype=np.int64)
    removed = np.zeros(n, dtype=np.int64)
    rspeed = np.zeros(n, dtype=np.float64)
    rdesc = np.zeros(n, dtype=np.int64)
    rvalley = np.zeros(n, dtype=np.int64)
    bestcut = np.zeros(n, dtype=np.bool_)
    for b in range(len(reps)):
        if redo[b]:
            continue
        base = b * n
        p = reps[b]
        nh = 0
        for k in range(len(failed)):
            e = failed[k]
            v = dst[e]
            if dead[v]:
                continue
            if _counted(b, n, e, p, src, dst, out_policy, in_policy, out_res, in_res, dist, parent, pvar, seeded,
                        asn_id, prepend_len, prepend_ids) < 0:
                continue
            if stamp[v] != b:
                stamp[v] = b
                hits[nh] = v
                nh += 1
                removed[v] = 0
                rspeed[v] = 0.0
                rdesc[v] = 0
                rvalley[v] = 0
                bestcut[v] = False
            u = src[e]
            du = desc[base + u]
            removed[v] += 1
            rspeed[v] += speed[e]
            if tier[u] > tier[v] or du:
                rdesc[v] += 1
            if tier[v] > tier[u] and du:
                rvalley[v] += 1
            if e == parent[base + v]:
                bestcut[v] = True
        for k in range(nh):
            v = hits[k]
            i = base + v
            if not relax[v]:
                redo[b] = True
                break
            old_w = width[b, v]
            old_speed = bw[b, v] * ccount[i] / old_w if old_w > 0 else 0.0
            if not bestcut[v]:
                cnt = ccount[i] - removed[v]
                if cnt <= 0 or (dcount[i] - rdesc[v] > 0) != desc[i]:
                    redo[b] = True
                    break
                w = min(cnt, maxpaths[v])
                width[b, v] = w
                bw[b, v] = (old_speed - rspeed[v]) / cnt * w
                valley[b, v] = vcount[i] - rvalley[v] > 0
                continue
            cnt = 0
            spd = 0.0
            least = 1 << 62
            best = -1
            bvar = 0
            dsc = False
            vly = False
            for j in range(in_ptr[v], in_ptr[v + 1]):
                e = in_edges[j]
                if cut[e]:
                    continue
                var = _counted(b, n, e, p, src, dst, out_policy, in_policy, out_res, in_res, dist, parent, pvar,
                               seeded, asn_id, prepend_len, prepend_ids)
                if var < 0:
                    continue
                u = src[e]
                cnt += 1
                spd += speed[e]
                du = desc[base + u]
                if tier[u] > tier[v] or du:
                    dsc = True
                if tier[v] > tier[u] and du:
                    vly = True
                if rank[e] < least:
                    least = rank[e]
                    best = e
                    bvar = var
            if cnt == 0 or dsc != desc[i] or bvar != pvar[i]:
                redo[b] = True
                break
            un, uo = src[best], src[parent[i]]
            same = asn_id[un] == asn_id[uo] and path_len[base + un] == path_len[base + uo]
            for j in range(W):
                if path[base + un, j] != path[base + uo, j]:
                    same = False
            if not same:
                redo[b] = True
                break
            w = min(cnt, maxpaths[v])
            width[b, v] = w
            bw[b, v] = spd / cnt * w
            valley[b, v] = vly
