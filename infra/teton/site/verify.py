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
from teton.verify.expected import design_views
from teton.verify.model import Model, build_model, same_routing
from teton.verify.rules import Checked
from teton.verify.run import Mapper, Verified, asked, counts, load, local_mapper, read_views, solve_all
from teton.verify.solve import Down, prefix_count
from teton.verify.whatif import parse_failures


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


def site_counts(model: Model, files: Checked, index: SiteIndex) -> dict[str, Any]:
    """`teton.verify.run.counts` of the whole site, and per cluster (and the tier): its switches, the sessions inside
    it and those to the tier, the switch x prefix routes at its switches."""
    out = counts(model, files.solution)
    owner = [_cluster(n) or index.site for n in model.names]
    per: dict[str, dict[str, Any]] = {}
    routes = (files.solution.dist >= 0).sum(axis=0)
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
                mapper: Mapper = local_mapper) -> Verified:
    """The whole report for the site's build folder `out` (`teton verify OUT`); TetonError on bad input."""
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
    t2 = time.monotonic()
    files, planned = solved(model, design, mapper)
    t3 = time.monotonic()
    findings = read_findings + findings + site_rules(merged, list(index.clusters), files, planned) + model.unmodelled
    t4 = time.monotonic()
    result = Verified(str(out), site_counts(model, files, index), findings,
                      seconds={"read": t1 - t0, "model": t2 - t1, "solve": t3 - t2, "rules": t4 - t3})
    return asked(result, model, design, merged, files, planned, mapper, failure, fail_each, t0,
                 network=merged.backend if fail_each == "bag" else None)


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
