"""`teton verify OUT` of a site: the routing of every cluster and of the aggregation tier proven at once, from every
build's rendered switch configs.

1. OUT/site.json (`teton.site.index`) names each cluster's build and the tier's.  Every build's switches read their BGP
   back with the targets' readers (`teton.verify.run.read_views`); a cluster's views are renamed
   `<cluster>--<device>` (`teton.design.site.qualified`) and their files `<folder>/<file>`, the tier's keep their
   names.  Sessions are matched by addresses, so an ATSW's neighbour on a BAG switch meets the BAG switch's
   neighbour on it, from the other build's files: the sessions a single build can only count are proven here.
2. One model over all the views (`teton.verify.model.build_model`) with the site's merged Fabric
   (`teton.site.design.merge_site` over the builds' fabric.json: roles, racks, the cabling); the design's model from
   the merged Fabric's intents (`teton.verify.expected.design_views`); both solved (the `Mapper`: in this process, or
   on Dask).
3. The rules of `teton verify` over the merged Fabric: every rack prefix of every cluster reaches every rack of every
   other cluster the design reaches it at, with the design's ECMP width at every switch; loopbacks, link subnets,
   valleys, originations, maximum-prefix; the front end's reach within each cluster (the clusters' front ends are
   not joined).  `--fail-each bag` prices the loss of each BAG switch (the backend's rack prefixes).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from teton.design.site import SEPARATOR, qualified
from teton.fabric.bgpview import FAMILIES, BgpView
from teton.fabric.model import Fabric
from teton.findings import Finding, TetonError
from teton.site.design import merge_site
from teton.site.index import SiteIndex, read_index
from teton.verify import rules
from teton.verify.expected import design_originations, design_views
from teton.verify.model import Model, build_model, same_routing
from teton.verify.policy import DENY
from teton.verify.rules import Checked
from teton.verify.run import (
    Mapper,
    Verified,
    asked,
    before_side,
    counts,
    load,
    local_mapper,
    read_views,
    solve_all,
    sweep_result,
    sweep_row,
    what_if,
)
from teton.verify.solve import Down, Solution, prefix_count, prefix_offsets
from teton.verify.whatif import (
    Columns,
    Failure,
    Sides,
    bare,
    combine_columns,
    down_of,
    parse_failures,
    rack_ok,
    rack_prefix_ids,
    rail_pairs,
    sides,
    tables_report,
    tier_columns,
    tier_table,
)


def _renamed(view: BgpView, cluster: str | None, folder: str) -> BgpView:
    name = qualified(cluster, view.name) if cluster is not None else view.name
    return replace(view, name=name, file=f"{folder}/{view.file}")


def _finding_in(f: Finding, folder: str) -> Finding:
    return replace(f, file=f"{folder}/{f.file}")


def read_site(index: SiteIndex) -> tuple[Fabric, dict[str, Fabric], list[BgpView], list[Finding]]:
    """(the merged Fabric, each build's Fabric by cluster and site name, every switch's view, the reading's
    findings)."""
    fabrics: dict[str, Fabric] = {}
    views: list[BgpView] = []
    findings: list[Finding] = []
    for name, folder in index.builds.items():
        source, fabric = load(index.folder(folder))
        fabrics[name] = fabric
        cluster = name if name in index.clusters else None
        got, found = read_views(source, fabric)
        views += [_renamed(v, cluster, folder) for v in got]
        findings += [_finding_in(f, folder) for f in found]
    tier = fabrics[index.site]
    if any(d.role != "bag" for d in tier.devices.values()):
        raise TetonError(f"{index.folder(index.tier)}: not the tier's build (its switches: "
                         f"{', '.join(sorted({d.role for d in tier.devices.values()}))})")
    for cname in index.clusters:
        f = fabrics[cname]
        unknown = sorted(set(f.externals) - set(tier.devices))
        if unknown:
            raise TetonError(f"{index.folder(index.clusters[cname])}/fabric.json: externals {', '.join(unknown)} are "
                             f"no switches of the tier's build {index.folder(index.tier)}: builds of another site?")
        if any(SEPARATOR in n for n in f.devices):
            raise TetonError(f"{index.folder(index.clusters[cname])}/fabric.json: a device's name holds "
                             f"{SEPARATOR!r}: not a cluster's build of a site")
    members = {c: fabrics[c] for c in index.clusters}
    return merge_site(index.site, members, tier), fabrics, views, findings


def _cluster(name: str) -> str | None:
    c, sep, _ = name.partition(SEPARATOR)
    return c if sep else None


def _only(fabric: Fabric, cluster: str) -> Fabric:
    return replace(fabric, devices=MappingProxyType({n: d for n, d in fabric.devices.items()
                                                     if _cluster(n) == cluster}))


def _networks_apart(model: Model, backend: str) -> None:
    """Each cluster's own networks (its front end) named apart: `frontend of lab-a`.  Only the backend spans the site
    (through the tier); the rules and the what-if compare switches of one network, which another cluster's front end
    never reaches."""
    model.network = tuple(net if not net or net in (backend, "site") or (c := _cluster(name)) is None
                          else f"{net} of {c}" for name, net in zip(model.names, model.network, strict=True))


def site_rules(merged: Fabric, clusters: Sequence[str], files: Checked, planned: Checked) -> list[Finding]:
    """`teton.verify.rules.check_all` over the site: the front end's reach within each cluster."""
    out = [*rules.rack_reach(merged, files, planned), *rules.ecmp_width(merged, files, planned),
           *rules.loopback_reach(files, planned)]
    for c in clusters:
        out += rules.frontend_reach(_only(merged, c), files)
    return [*out, *rules.link_prefix(files), *rules.valleys(files), *rules.originations(merged, files),
            *rules.maximum_prefix(files)]


TierEdges = dict[str, dict[tuple[str, str, str], int]]


def tier_edges(m: Model) -> TierEdges:
    """Per family, the model's edges out of the tier's switches by (switch, peer, port): what `tier_transit` looks the
    design's edges up in (worked out once per model, not once per part)."""
    bag = np.array([r == "bag" for r in m.role], dtype=bool)
    return {fam: {(m.names[int(g.src[x])], m.names[int(g.dst[x])], g.src_port[x]): int(x)
                  for x in np.flatnonzero(bag[g.src])} for fam, g in m.graphs.items()}


def tier_transit(files: Checked, planned: Checked, part: str, only: frozenset[str],
                 edges_of: TierEdges | None = None) -> list[Finding]:
    """Rule `tier-transit`: each switch of the tier passes every prefix of build `part` (the prefixes `only`) that
    it holds to every peer that takes it from it in the design (one of that peer's equal best paths).  A prefix it
    holds but does not send on such a session (its route map out denies it, or the session is not up) is withheld;
    the finding names the tier's switch, the build whose prefixes it withholds, how many and to which peers, and
    why."""
    m, e = files.model, planned.model
    by_family = edges_of if edges_of is not None else tier_edges(m)
    out = []
    for fam in FAMILIES:
        g, gd = m.graphs[fam], e.graphs[fam]
        prefixes = [p for p in e.prefixes[fam].table.prefixes if p in only and p in planned.row and p in files.row]
        if not prefixes:
            continue
        rows_f = np.array([files.row[p] for p in prefixes], dtype=np.int64)
        rows_d = np.array([planned.row[p] for p in prefixes], dtype=np.int64)
        k_f = np.array([m.prefixes[fam].position[p] for p in prefixes], dtype=np.int64)
        k_d = np.array([e.prefixes[fam].position[p] for p in prefixes], dtype=np.int64)
        edges = by_family.get(fam, {})
        withheld: dict[int, dict[str, Any]] = {}
        for x in np.flatnonzero(np.array([e.role[int(u)] == "bag" for u in gd.src], dtype=bool)):
            u, v = int(gd.src[x]), int(gd.dst[x])
            var = e.out_results[fam][gd.out_policy[x], k_d]
            du, dv = planned.solution.dist[rows_d, u].astype(np.int64), planned.solution.dist[rows_d, v]
            passes = (du >= 0) & (var != DENY) & (e.in_results[fam][gd.in_policy[x], k_d] != DENY) & \
                (dv == du + 1 + e.prepend_length[np.maximum(var, 0)])     # the design's v takes it from u
            name, peer = e.names[u], e.names[v]
            if name not in m.index:
                continue
            held = passes & (files.solution.dist[rows_f, m.index[name]] >= 0)
            y = edges.get((name, peer, gd.src_port[x]))
            if y is None:
                lost, why = held, f"no {fam} session up with {peer}"
            else:
                lost = held & (m.out_results[fam][g.out_policy[y], k_f] == DENY)
                s = m.sessions[int(g.session[y])]
                mine = s.pa if s.a == int(g.src[y]) else s.pb
                why = f"route-map {mine.map_out(fam)} out to {mine.group or mine.address} denies them"
            if not lost.any():
                continue
            w = withheld.setdefault(m.index[name], {"prefixes": set(), "peers": set(), "why": set()})
            w["prefixes"] |= {prefixes[int(r)] for r in np.flatnonzero(lost)}
            w["peers"].add(peer)
            w["why"].add(why)
        for i, w in sorted(withheld.items()):
            ps = sorted(w["prefixes"], key=lambda p: m.prefixes[fam].position[p])
            peers = sorted(w["peers"])
            out.append(Finding(m.files[i], ps[0], f"{m.names[i]} holds {len(ps)} {fam} prefixes of {part} but does "
                               f"not pass them to {len(peers)} peers that take them from it in the design "
                               f"({', '.join(peers[:8])}{f' and {len(peers) - 8} more' if len(peers) > 8 else ''}): "
                               f"{'; '.join(sorted(w['why'])[:4])}; e.g. {', '.join(ps[:4])}", rule="tier-transit"))
    return out


def site_counts(model: Model, routes: np.ndarray, index: SiteIndex) -> dict[str, Any]:
    """`teton.verify.run.counts` of the whole site, and per cluster (and the tier): its switches, the sessions inside
    it and those to the tier, the switch x prefix routes at its switches (`routes`: per switch)."""
    out = counts(model, Solution.empty(model.n))
    out["routes"] = int(routes.sum())
    owner = [_cluster(n) or index.site for n in model.names]
    per: dict[str, dict[str, Any]] = {}
    for name in index.builds:
        cols = np.array([i for i in range(model.n) if owner[i] == name], dtype=np.int64)
        inside = {f: 0 for f in FAMILIES}
        tier = {f: 0 for f in FAMILIES}
        for s in model.sessions:
            a, b = owner[s.a], owner[s.b]
            if a == b == name:
                inside[s.family] += 1
            elif name in (a, b) and index.site in (a, b):
                tier[s.family] += 1
        per[name] = {"switches": len(cols), "sessions": {**inside, "total": sum(inside.values())},
                     "tier_sessions": {**tier, "total": sum(tier.values())},
                     "routes": int(routes[cols].sum()) if len(cols) else 0}
    out["clusters"] = {c: per[c] for c in index.clusters}
    out["tier"] = per[index.site] | {"name": index.site}
    return out


def models(merged: Fabric, views: Sequence[BgpView]) -> tuple[Model, Model, list[Finding]]:
    """(the files' model, the design's, the sessions' findings) of the site."""
    model, findings = build_model(views, merged)
    design, _ = build_model(design_views(merged), merged)
    _networks_apart(model, merged.backend)
    _networks_apart(design, merged.backend)
    return model, design, findings


def solved(model: Model, design: Model, mapper: Mapper = local_mapper) -> tuple[Checked, Checked]:
    """Both models solved for every prefix (the design's solution is the files' when they route alike)."""
    files = Checked.of(model, solve_all(model, np.arange(prefix_count(model)), Down.none(model), mapper))
    planned = Checked.of(design, files.solution if same_routing(model, design) else
                         solve_all(design, np.arange(prefix_count(design)), Down.none(design), mapper, count=False))
    return files, planned


def verify_site(out: Path, fail: Sequence[str] = (), fail_each: str | None = None,
                mapper: Mapper = local_mapper, whole: bool = False) -> Verified:
    """The whole report for the site's build folder `out` (`teton verify OUT`); TetonError on bad input.  Solved and
    checked one destination at a time (`by_destination`: the same report); `whole`: both models solved at once (the
    reference the tests hold it to; memory grows with switches x prefixes, the square of the site's size)."""
    t0 = time.monotonic()
    index = read_index(out)
    merged, _, views, read_findings = read_site(index)
    failure = parse_failures(fail, merged) if fail else None
    if fail_each is not None and not any(d.role == fail_each for d in merged.devices.values()):
        roles = sorted({d.role for d in merged.devices.values() if d.nos is not None})
        raise TetonError(f"--fail-each {fail_each}: the site has no device of that role (its switch roles: "
                         f"{', '.join(roles)})")
    t1 = time.monotonic()
    model, design, findings = models(merged, views)
    del views
    t2 = time.monotonic()
    network = merged.backend if fail_each == "bag" else None
    if not whole:
        return by_destination(out, index, merged, model, design, read_findings + findings, mapper, failure,
                              fail_each, network, t0, {"read": t1 - t0, "model": t2 - t1})
    files, planned = solved(model, design, mapper)
    t3 = time.monotonic()
    transit = [f for name, part in destinations(index, merged, model, design).items()
               for f in tier_transit(files, planned, name, part)]
    findings = read_findings + findings + site_rules(merged, list(index.clusters), files, planned) + transit + \
        model.unmodelled
    t4 = time.monotonic()
    routes = (files.solution.dist >= 0).sum(axis=0)
    result = Verified(str(out), site_counts(model, routes, index), findings,
                      seconds={"read": t1 - t0, "model": t2 - t1, "solve": t3 - t2, "rules": t4 - t3})
    return asked(result, model, design, merged, files, planned, mapper, failure, fail_each, t0, network=network)


def destinations(index: SiteIndex, merged: Fabric, model: Model, design: Model) -> dict[str, frozenset[str]]:
    """Every prefix of either model (and every one the design has a switch announce) by the build whose switch
    announces it in the design (else originates it in the files; else the tier's): the site's parts, clusters first
    in the index's order.  Each prefix is in exactly one part."""
    owner: dict[str, str] = {}
    for name, prefixes in sorted(design_originations(merged).items()):
        for p in sorted(prefixes):
            owner.setdefault(p, _cluster(name) or index.site)
    for m in (design, model):
        for fam in FAMILIES:
            fp = m.prefixes[fam]
            for k, p in enumerate(fp.table.prefixes):
                if p not in owner:
                    o = fp.originators[k]
                    owner[p] = (_cluster(m.names[o[0]]) or index.site) if o else index.site
    parts: dict[str, set[str]] = {name: set() for name in (*index.clusters, index.site)}
    for p, name in owner.items():
        parts[name].add(p)
    return {name: frozenset(ps) for name, ps in parts.items()}


def _ids(model: Model, part: frozenset[str]) -> np.ndarray:
    offsets = prefix_offsets(model)
    return np.array(sorted(offsets[f] + k for f in FAMILIES for k, p in enumerate(model.prefixes[f].table.prefixes)
                           if p in part), dtype=np.int64)


class _Sweep:
    """`--fail-each`'s tables summed over the parts: per failure (and before) each network's columns
    (`teton.verify.whatif.tier_columns`) and the racks' reach (`rack_ok`, kept as bits)."""

    SLICE = 2048        # rack prefixes whose bases are held at once (memory: SLICE x switches x ~40 bytes)

    def __init__(self, model: Model, merged: Fabric, role_name: str, network: str | None):
        from teton.fabric.roles import role as role_of

        self.model, self.merged, self.role = model, merged, role_name
        r0 = role_of(role_name)
        self.network = network if network is not None else (r0.network if r0 is not None else None)
        self.devices = sorted(n for n, d in merged.devices.items() if d.role == role_name)
        self.ids = set(rack_prefix_ids(model, merged, self.network).tolist())
        self.columns: dict[str | None, Columns] = {}
        self.ok: dict[str | None, np.ndarray] = {}
        self.downs = {name: down_of(model, Failure((name,))) for name in self.devices}
        self.shape: tuple[int, ...] = (0, 0)

    def _add(self, key: str | None, s: Sides) -> None:
        self.columns[key] = combine_columns(self.columns.get(key, {}), tier_columns(s, self.merged))
        held = self.ok.get(key)
        racks = rack_ok(s, self.merged, None if held is None else self._unpack(held))
        self.shape = racks.shape
        self.ok[key] = np.packbits(racks, axis=None)

    def _unpack(self, bits: np.ndarray) -> np.ndarray:
        return np.unpackbits(bits, count=self.shape[0] * self.shape[1]).astype(bool).reshape(self.shape)

    def part(self, files: Checked) -> None:
        """The part's rack prefixes (those of `files`' solution): before, and after each failure."""
        from teton.verify.incremental import fail_solution, solve_bases

        m = self.model
        ids = np.array(sorted(int(x) for x in files.solution.ids if int(x) in self.ids), dtype=np.int64)
        if not len(ids):
            return
        self._add(None, before_side(m, self.merged, files, ids))
        for start in range(0, len(ids), self.SLICE):
            bases = solve_bases(m, ids[start:start + self.SLICE])
            for name in self.devices:
                down = self.downs[name]
                self._add(name, sides(m, self.merged, fail_solution(m, bases, down), down, Failure((name,))))
            del bases

    def result(self) -> dict[str, Any]:
        m, none = self.model, Failure()
        base = bare(m, Down.none(m), none)
        before = tier_table(m, self.merged, base.down, none, self.columns.get(None, {}))
        ok0 = self.ok.get(None)
        rails0 = rail_pairs(self.merged, base, None if ok0 is None else self._unpack(ok0))
        rows = []
        for name in self.devices:
            failure, down = Failure((name,)), self.downs[name]
            after = tier_table(m, self.merged, down, failure, self.columns.get(name, {}))
            ok = self.ok.get(name)
            rails = rail_pairs(self.merged, bare(m, down, failure), None if ok is None else self._unpack(ok))
            rows.append(sweep_row(name, tables_report(before, rails0, after, rails, {}, failure.label)))
        return sweep_result(self.role, rows)


def by_destination(out: Path, index: SiteIndex, merged: Fabric, model: Model, design: Model,
                   findings: list[Finding], mapper: Mapper, failure: Failure | None, fail_each: str | None,
                   network: str | None, t0: float, seconds: dict[str, float]) -> Verified:
    """The site verified one destination at a time: the prefixes one build announces (a cluster's, then the
    tier's) solved over every switch of the site, in both models, and the rules run over them; only what a rule
    needs of every prefix is summed over the passes (the routes each session delivers, against its receiver's
    maximum-prefix; each switch's ECMP deviations; per `--fail-each` failure the tables of its report).  Exact:
    every prefix is searched on its own (`teton.verify.solve`), so the parts' answers are the whole's; the findings
    are put in the one-model report's order.  Memory: one part's switches x prefixes at a time."""
    parts = destinations(index, merged, model, design)
    alike = same_routing(model, design)
    none, none_d = Down.none(model), Down.none(design)
    received = {f: np.zeros(len(g), dtype=np.int64) for f, g in model.graphs.items()}
    routes = np.zeros(model.n, dtype=np.int64)
    found: dict[str, list[Finding]] = {r: [] for r in RULES}
    deviations: list[rules.Deviation] = []
    transit: list[Finding] = []
    edges = tier_edges(model)
    sweeping = _Sweep(model, merged, fail_each, network) if fail_each is not None else None
    solve_s = rules_s = 0.0
    for name, part in parts.items():
        ts = time.monotonic()
        sol = solve_all(model, _ids(model, part), none, mapper)
        planned_sol = sol if alike else solve_all(design, _ids(design, part), none_d, mapper, count=False)
        for f in FAMILIES:
            received[f] += sol.received[f]
        routes += (sol.dist >= 0).sum(axis=0)
        files, planned = Checked.of(model, sol, part), Checked.of(design, planned_sol, part)
        tr = time.monotonic()
        solve_s += tr - ts
        found["rack-reach"] += rules.rack_reach(merged, files, planned)
        deviations += rules.ecmp_deviations(merged, files, planned)
        found["loopback-reach"] += rules.loopback_reach(files, planned)
        if name in index.clusters:
            found["frontend-reach"] += rules.frontend_reach(_only(merged, name), files)
        found["link-prefix"] += rules.link_prefix(files)
        found["valley"] += rules.valleys(files)
        found["originations"] += rules.originations(merged, files)
        transit += tier_transit(files, planned, name, part, edges)
        rules_s += time.monotonic() - tr
        del planned, planned_sol
        if sweeping is not None:
            ts = time.monotonic()
            sweeping.part(files)
            seconds["sweep"] = seconds.get("sweep", 0.0) + time.monotonic() - ts
        del files, sol
    tr = time.monotonic()
    whole = Checked(model, Solution.empty(model.n, received), {})
    found["ecmp-width"] = rules.ecmp_findings(merged, model, deviations)
    found["maximum-prefix"] = rules.maximum_prefix(whole)
    ordered = _in_order(found, merged, model, design)
    rules_s += time.monotonic() - tr
    seconds.update({"solve": solve_s, "rules": rules_s})
    result = Verified(str(out), site_counts(model, routes, index), findings + ordered + transit + model.unmodelled,
                      seconds=seconds)
    if sweeping is not None:
        ts = time.monotonic()
        result.sweep = sweeping.result()
        seconds["sweep"] = seconds.get("sweep", 0.0) + time.monotonic() - ts
    if failure is not None:       # one failure: the rack prefixes' routes before and after, at once
        ts = time.monotonic()
        ids, ids_d = rack_prefix_ids(model, merged), rack_prefix_ids(design, merged)
        files = Checked.of(model, solve_all(model, ids, none, mapper, count=False))
        planned = Checked.of(design, files.solution if alike else solve_all(design, ids_d, none_d, mapper,
                                                                            count=False))
        result.whatif.append(what_if(model, design, merged, failure, files, planned, mapper))
        seconds["what-if"] = time.monotonic() - ts
    seconds["total"] = time.monotonic() - t0
    return result


RULES = ("rack-reach", "ecmp-width", "loopback-reach", "frontend-reach", "link-prefix", "valley", "originations",
         "maximum-prefix")


def _in_order(found: dict[str, list[Finding]], merged: Fabric, model: Model, design: Model) -> list[Finding]:
    """The passes' findings in the order `site_rules` gives them over the whole site."""
    def position(m: Model) -> dict[str, tuple[int, int]]:
        return {p: (j, k) for j, f in enumerate(FAMILIES) for k, p in enumerate(m.prefixes[f].table.prefixes)}

    at_m, at_d = position(model), position(design)
    racks = {p: k for k, (_, p) in reversed(list(enumerate(rules.rack_prefixes(merged))))}
    group = {p: (j, int(model.prefixes[f].group[k]), k) for p, (j, k) in at_m.items()
             for f in (FAMILIES[j],)}
    named = {model.files[i]: model.names[i] for i in range(model.n)}
    origin = found["originations"]
    unexpected = sorted((f for f in origin if f.rule == "unexpected-prefix"), key=lambda f: at_m[f.path])
    missing = sorted((f for f in origin if f.rule != "unexpected-prefix"), key=lambda f: (named[f.file], f.path))
    return [*sorted(found["rack-reach"], key=lambda f: racks[f.path]), *found["ecmp-width"],
            *sorted(found["loopback-reach"], key=lambda f: at_d[f.path]), *found["frontend-reach"],
            *sorted(found["link-prefix"], key=lambda f: at_m[f.path]),
            *sorted(found["valley"], key=lambda f: group[f.path]), *unexpected, *missing, *found["maximum-prefix"]]


def cluster_lines(result: Verified) -> list[str]:
    """One line per cluster and one for the tier: what was checked there."""
    c = result.counts
    out = []
    for name, x in [*c.get("clusters", {}).items(), *([(c["tier"]["name"], c["tier"])] if "tier" in c else [])]:
        tier = name not in c.get("clusters", {})
        out.append(f"  {'tier' if tier else 'cluster'} {name}: {x['switches']:,} switches, "
                   f"{x['sessions']['total']:,} sessions inside it, {x['tier_sessions']['total']:,} "
                   f"{'to the clusters' if tier else 'to the tier'}, {x['routes']:,} switch x prefix routes checked")
    return out
