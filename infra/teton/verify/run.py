"""`teton verify BUILD`: read every switch's BGP back from the build's files, model the whole cluster's routing, assert
what the design promises, and optionally what failures cost.

1. Each switch target reads its devices' BGP views (`DeviceTarget.read_bgp_views`); fabric.json gives only roles,
   zones, racks, the cabling (link speeds, failures) and what to assert.
2. `build_model` (sessions from both ends, prefixes, policies, origin groups); the design's own intents make the
   second model, of what it promises (`teton.verify.expected`).
3. Both are solved in chunks of prefixes (`solve`, mapped by a `Mapper`: in this process, or on Dask workers,
   `teton.verify.distributed`), every prefix of every switch.
4. The rules (`teton.verify.rules`) over both; with failures, the what-if report (`teton.verify.whatif`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from teton import targets
from teton.buildfolder import FABRIC_JSON, BuildFileError, BuildFolder
from teton.fabric.bgpview import FAMILIES, BgpView
from teton.fabric.model import Fabric
from teton.fabric.serialize import FabricFormatError
from teton.findings import Finding, TetonError
from teton.targets import DeviceTarget
from teton.verify.expected import design_views
from teton.verify.model import Model, build_model, same_routing
from teton.verify.rules import Checked, check_all
from teton.verify.solve import Down, Solution, prefix_count, prefix_offsets, solve
from teton.verify.whatif import Failure, down_of, parse_failures, rack_prefix_ids, report, sides

CHUNK = 1024        # prefixes per task
Mapper = Callable[[Model, Sequence[np.ndarray], Down, bool], list[Solution]]


def local_mapper(model: Model, chunks: Sequence[np.ndarray], down: Down, count: bool = True) -> list[Solution]:
    """Every chunk in this process (`count`: also the routes each session delivers)."""
    return [solve(model, c, down, count) for c in chunks]


def chunks_of(model: Model, ids: np.ndarray, size: int = CHUNK) -> list[np.ndarray]:
    """`ids` in chunks of about `size` prefixes that keep each origin group whole (a group split over two chunks
    would be searched twice; the answer is the same either way)."""
    if not len(ids):
        return [ids]
    offsets = prefix_offsets(model)
    key = np.empty(len(ids), dtype=np.int64)
    for k, fam in enumerate(FAMILIES):
        size_f = len(model.prefixes[fam].table)
        sel = (ids >= offsets[fam]) & (ids < offsets[fam] + size_f)
        key[sel] = model.prefixes[fam].group[ids[sel] - offsets[fam]].astype(np.int64) + k * (1 << 40)
    order = np.argsort(key, kind="stable")
    ids, key = ids[order], key[order]
    cuts = [0]
    for k in range(size, len(ids), size):
        while k < len(ids) and key[k] == key[k - 1]:
            k += 1
        if k < len(ids) and k > cuts[-1]:
            cuts.append(k)
    cuts.append(len(ids))
    return [ids[a:b] for a, b in zip(cuts, cuts[1:], strict=False) if b > a]


def merge(parts: Sequence[Solution], model: Model) -> Solution:
    """One solution of the chunks' (in chunk order); `received` summed."""
    received = {f: sum((p.received[f] for p in parts), np.zeros(len(model.graphs[f]), dtype=np.int64))
                for f in FAMILIES}
    return Solution(np.concatenate([p.ids for p in parts]), np.concatenate([p.dist for p in parts]),
                    np.concatenate([p.width for p in parts]), np.concatenate([p.bandwidth for p in parts]),
                    np.concatenate([p.valley for p in parts]), received)


def solve_all(model: Model, ids: np.ndarray, down: Down, mapper: Mapper, count: bool = True) -> Solution:
    return merge(mapper(model, chunks_of(model, ids), down, count), model)


@dataclass
class Verified:
    build: str
    counts: dict[str, Any]
    findings: list[Finding]
    whatif: list[dict[str, Any]] = field(default_factory=list)
    sweep: dict[str, Any] | None = None
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"build": self.build, "ok": self.ok, "counts": self.counts,
                               "findings": [f.as_dict() for f in self.findings],
                               "seconds": {k: round(v, 2) for k, v in self.seconds.items()}}
        if self.whatif:
            out["whatif"] = self.whatif
        if self.sweep is not None:
            out["sweep"] = self.sweep
        return out


def load(build: Path) -> tuple[BuildFolder, Fabric]:
    if not build.is_dir():
        raise TetonError(f"{build}: no such build folder")
    source = BuildFolder(build)
    try:
        return source, source.fabric()
    except BuildFileError as exc:
        raise TetonError(f"{build}/{exc.path}: {exc.problem}") from None
    except FabricFormatError as exc:
        raise TetonError(f"{build}/{FABRIC_JSON}: {exc}") from None


def read_views(source: BuildFolder, fabric: Fabric) -> tuple[list[BgpView], list[Finding]]:
    views: list[BgpView] = []
    findings: list[Finding] = []
    for t in targets.targets():
        if isinstance(t, DeviceTarget):
            v, f = t.read_bgp_views(source, fabric)
            views += v
            findings += f
    return views, findings


def counts(model: Model, solution: Solution, site: bool = False) -> dict[str, Any]:
    """What was checked; `site`: a member's or the tier's build, with the count of its sessions to the site's other
    builds (`site_sessions`: configured here, agreed by what this build can tell, proven by the site's verify)."""
    fams = {f: sum(1 for s in model.sessions if s.family == f) for f in FAMILIES}
    out: dict[str, Any] = {"switches": model.n, "sessions": {**fams, "total": sum(fams.values())},
           "prefixes": {f: len(model.prefixes[f].table) for f in FAMILIES} | {"total": prefix_count(model)},
           "routes": int((solution.dist >= 0).sum()),
           "held": sum(len(h) for f in FAMILIES for h in model.prefixes[f].held.values())}
    if site:
        out["site_sessions"] = len(model.outside)
    return out


def verify(build: Path, fail: Sequence[str] = (), fail_each: str | None = None,
           mapper: Mapper = local_mapper) -> Verified:
    """The whole report for `build`; TetonError on bad input (a file, a --fail argument)."""
    t0 = time.monotonic()
    source, fabric = load(Path(build))
    failure = parse_failures(fail, fabric) if fail else None
    if fail_each is not None and not any(d.role == fail_each for d in fabric.devices.values()):
        roles = sorted({d.role for d in fabric.devices.values() if d.nos is not None})
        raise TetonError(f"--fail-each {fail_each}: the build has no device of that role (its switch roles: "
                         f"{', '.join(roles)})")
    views, read_findings = read_views(source, fabric)
    t1 = time.monotonic()
    model, findings = build_model(views, fabric)
    design, _ = build_model(design_views(fabric), fabric)
    t2 = time.monotonic()
    none, none_d = Down.none(model), Down.none(design)
    files = Checked.of(model, solve_all(model, np.arange(prefix_count(model)), none, mapper))
    alike = same_routing(model, design)          # the files route as the design: its solution is theirs
    planned = Checked.of(design, files.solution if alike else
                         solve_all(design, np.arange(prefix_count(design)), none_d, mapper, count=False))
    t3 = time.monotonic()
    findings = read_findings + findings + check_all(fabric, files, planned) + model.unmodelled
    t4 = time.monotonic()
    result = Verified(str(build), counts(model, files.solution, bool(fabric.externals)), findings,
                      seconds={"read": t1 - t0, "model": t2 - t1, "solve": t3 - t2, "rules": t4 - t3})
    return asked(result, model, design, fabric, files, planned, mapper, failure, fail_each, t0)


def asked(result: Verified, model: Model, design: Model, fabric: Fabric, files: Checked, planned: Checked,
          mapper: Mapper, failure: Failure | None, fail_each: str | None, t0: float,
          network: str | None = None) -> Verified:
    """`result` with the what-if questions asked (`failure`, the `fail_each` sweep over `network`'s prefixes, None:
    every rack's) and their times; the total time since `t0`."""
    t4 = time.monotonic()
    if failure is not None:
        result.whatif.append(what_if(model, design, fabric, failure, files, planned, mapper))
        result.seconds["what-if"] = time.monotonic() - t4
    if fail_each is not None:
        t5 = time.monotonic()
        result.sweep = sweep(model, fabric, fail_each, files, mapper, network=network)
        result.seconds["sweep"] = time.monotonic() - t5
    result.seconds["total"] = time.monotonic() - t0
    return result


def before_side(model: Model, fabric: Fabric, base: Checked, ids: np.ndarray) -> Any:
    at = {int(x): k for k, x in enumerate(base.solution.ids)}
    rows = np.array([at[int(i)] for i in ids], dtype=np.int64)
    sol = Solution(ids, base.solution.dist[rows], base.solution.width[rows], base.solution.bandwidth[rows],
                   base.solution.valley[rows], base.solution.received)
    return sides(model, fabric, sol, Down.none(model), Failure())


def _rack_side(model: Model, fabric: Fabric, base: Checked, failure: Failure, mapper: Mapper,
               ) -> tuple[Any, Any]:
    ids = rack_prefix_ids(model, fabric)
    down = down_of(model, failure)
    after_sol = solve_all(model, ids, down, mapper, count=False)
    return before_side(model, fabric, base, ids), sides(model, fabric, after_sol, down, failure)


def what_if(model: Model, design: Model, fabric: Fabric, failure: Failure, files: Checked, planned: Checked,
            mapper: Mapper) -> dict[str, Any]:
    before, after = _rack_side(model, fabric, files, failure, mapper)
    if same_routing(model, design):
        design_after = sides(design, fabric, after.solution, after.down, failure)
    else:
        _, design_after = _rack_side(design, fabric, planned, failure, mapper)
    return report(before, after, design_after, fabric)


_TOWARDS = (("racks", "paths", "bandwidth_gbps"),
            ("other clusters", "paths_to_other_clusters", "bandwidth_to_other_clusters_gbps"))


def _drop(tiers: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The tier that kept the smallest share of its paths (None: none lost any), towards any other rack's prefix or,
    in a site, towards another cluster's (`towards`): a BAG switch's loss narrows an ATSW's paths into the tier only,
    which its fewest paths towards every rack (its own cluster's) do not show.  Equal shares: the racks' first."""
    hurt = [(p[1] / p[0], k, t["network"], t["zone"] or 0, t["role"], t, towards, p, t[bw])
            for t in tiers for k, (towards, key, bw) in enumerate(_TOWARDS)
            if (p := t.get(key)) and p[0] and p[1] is not None and p[1] < p[0]]
    if not hurt:
        return None
    *_, t, towards, paths, bandwidth = min(hurt, key=lambda x: x[:5])
    return {"network": t["network"], "zone": t["zone"], "role": t["role"], "towards": towards, "paths": paths,
            "bandwidth_gbps": bandwidth}


def sweep(model: Model, fabric: Fabric, role_name: str, files: Checked, mapper: Mapper,
          network: str | None = None) -> dict[str, Any]:
    """Every single failure of a device of `role_name`, and the worst of them: the rack prefixes of its network (or
    of `network`: a site's aggregation tier carries its backend's), each failure patched onto one solved base
    (`teton.verify.incremental`)."""
    from teton.fabric.roles import role as role_of
    from teton.verify.incremental import fail_solution, solve_bases

    devices = swept(fabric, role_name)
    r0 = role_of(role_name)
    if network is None:
        network = r0.network if r0 is not None else None
    ids = rack_prefix_ids(model, fabric, network)
    before = before_side(model, fabric, files, ids)
    bases = solve_bases(model, ids)
    rows = []
    for name in devices:
        failure = Failure((name,))
        down = down_of(model, failure)
        after = sides(model, fabric, fail_solution(model, bases, down), down, failure)
        r = report(before, after, None, fabric)
        rows.append(sweep_row(name, r))
    return sweep_result(role_name, rows)


def swept(fabric: Fabric, role_name: str) -> list[str]:
    """The devices a `--fail-each role_name` sweep fails one at a time: every device of that role, by name."""
    return sorted(n for n, d in fabric.devices.items() if d.role == role_name)


def sweep_row(name: str, r: dict[str, Any]) -> dict[str, Any]:
    """One failure's line of a sweep, from its report."""
    return {"failed": name, "pairs_lost": r["pairs_lost"], "drop": _drop(r["tiers"]),
            "worst_oversubscription": r["worst_oversubscription"],
            "unreached_routes": sum(t["unreached_routes"] for t in r["tiers"])}


def sweep_result(role_name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A sweep's report from its lines: the worst of them first."""

    def share(x: dict[str, Any]) -> float:
        return x["drop"]["paths"][1] / x["drop"]["paths"][0] if x["drop"] else 1.0

    worst = min(rows, key=lambda x: (-x["pairs_lost"], -x["unreached_routes"], share(x),
                                     -(x["worst_oversubscription"] or 0), x["failed"])) if rows else None
    return {"role": role_name, "failures": len(rows), "worst": worst,
            "worst_oversubscription": max((x["worst_oversubscription"] or 0 for x in rows), default=None),
            "each": rows}
