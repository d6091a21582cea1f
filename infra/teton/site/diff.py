"""`teton diff SITE_A SITE_B`: per cluster, `teton diff`'s engine (`teton.diff.engine.compare`) over the member's
Fabric in A and in B, each designed as a member of its site (no render cache: a cache record knows the cluster spec,
not the site it sits in); a cluster only in B is a new cluster, only in A a removed one; then the tier, file by file
(its BAG switches' files and its fabric-wide files), rendered from each site's tier.

A site's members are compared in the site's order, at most two at once (the next designed while the one before
renders its fabric-wide files in the background): a few members' Fabrics in memory, never the site's.  A member whose
spec and place in the site are the same on both sides is designed once for both (`same_inputs`).
"""

from __future__ import annotations

import dataclasses
import json
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from teton.checks import errors
from teton.design.site import SiteMember
from teton.diff import DiffResult
from teton.diff.engine import compare
from teton.diff.sides import Side
from teton.diff.textdiff import FileDiff, unified
from teton.diff.verdict import verdict
from teton.fabric.model import Fabric
from teton.findings import Finding, SpecError
from teton.pipeline import design_spec, render
from teton.pipeline.record import paused_gc
from teton.site.design import attachment, members_of, tier_of
from teton.site.load import LoadedSite, load_site
from teton.site.rules import check_site
from teton.targets import RenderContext, reference_folders


@dataclass
class SiteDiff:
    old: str
    new: str
    clusters: dict[str, DiffResult] = field(default_factory=dict)     # in both sites
    added: dict[str, int] = field(default_factory=dict)               # only in B: its devices
    removed: dict[str, int] = field(default_factory=dict)             # only in A
    tier: list[FileDiff] = field(default_factory=list)
    warnings: list[Finding] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.removed or self.tier or any(r.changed for r in self.clusters.values()))

    def headline(self) -> str:
        changed = [c for c, r in self.clusters.items() if r.changed]
        return (f"site diff: {len(self.added)} new cluster(s), {len(self.removed)} removed, {len(changed)} of "
                f"{len(self.clusters)} changed, {len(self.tier)} file(s) of the tier change")

    def as_dict(self) -> dict[str, Any]:
        return {"old": self.old, "new": self.new, "changed": self.changed,
                "clusters": {c: json.loads(r.render("json")) for c, r in self.clusters.items()},
                "new_clusters": self.added, "removed_clusters": self.removed,
                "tier": [{"path": f.path, "added": f.added, "removed": f.removed, "lines": f.lines} for f in self.tier]}

    def render(self, fmt: str) -> str:
        if fmt == "json":
            return json.dumps(self.as_dict(), indent=1, sort_keys=True) + "\n"
        md = fmt == "markdown"
        lines = [f"{'### ' if md else ''}teton diff of sites: {self.old} -> {self.new}", ""]
        for c, n in self.added.items():
            lines.append(f"{'- ' if md else ''}cluster {c}: new cluster ({n:,} devices)")
        for c, n in self.removed.items():
            lines.append(f"{'- ' if md else ''}cluster {c}: removed ({n:,} devices)")
        for c, r in self.clusters.items():
            if not r.changed:
                lines.append(f"{'- ' if md else ''}cluster {c}: unchanged")
        for c, r in self.clusters.items():
            if r.changed:
                lines += ["", f"{'#### ' if md else '== '}cluster {c}: {r.level}", r.render(fmt).rstrip("\n")]
        lines += ["", f"{'#### ' if md else '== '}the tier: {len(self.tier)} file(s) change"]
        for f in self.tier:
            lines.append(f"{f.path}: +{f.added} -{f.removed}")
            if md:
                lines += ["```diff", *f.lines, "```"]
            else:
                lines += list(f.lines)
        return "\n".join(lines) + "\n"


def _tier_files(loaded: LoadedSite, attached: dict[str, Fabric], ctx: RenderContext) -> dict[str, str]:
    tier, found = tier_of(loaded, attached)
    if errors(found):
        raise SpecError(found)
    return {rel: text for files in render(tier, ctx).values() for rel, text in files.items()}


def same_inputs(a: LoadedSite, b: LoadedSite, name: str, ma: dict[str, SiteMember], mb: dict[str, SiteMember],
                ) -> bool:
    """Whether member `name` is designed from the same inputs on both sides, so that one design serves both: the same
    cluster spec (as loaded), the same place in its site (`SiteMember`: slot, tier, pools, prefix limit) and, where
    its design reads a file beside the spec (an InfiniBand GUID map), the same folder.  `design` is a function of
    these (tests/site/test_plan_diff.py holds a diff of members designed once equal to one of members designed on
    each side)."""
    ca, cb = a.clusters[name], b.clusters[name]
    if ca != cb or ma[name] != mb[name]:
        return False
    beside = getattr(ca.backend, "guid_map", None) is not None
    return not beside or a.files[name].parent.resolve() == b.files[name].parent.resolve()


def _as_new_side(sa: Side, sb: Side) -> Side:
    """The new side of a member designed from the same inputs as its old side `sa` (waited for): `sa`'s design and
    files under `sb`'s label and spec, its warnings naming the new side as a design of `sb` would."""
    warnings = [dataclasses.replace(f, file=sb.label) if f.file == sa.label else f for f in sa.warnings]
    return dataclasses.replace(sa, label=sb.label, spec=sb.spec, cluster=sb.cluster, site=sb.site,
                               warnings=warnings, _pending=None)


def diff_sites(old: str | Path, new: str | Path, *, cache: object = None, yang_dir: Path | None = None,
               context: int = 3) -> SiteDiff:
    """Compare the site specs `old` and `new`; SpecError with every finding of either.  Garbage collection is paused
    as in a cluster's diff (a 24k member's design takes about half as long without)."""
    del cache     # a member's design depends on its site: not in a cache record's key
    with paused_gc():
        return _diff_sites(old, new, yang_dir, context)


def _diff_sites(old: str | Path, new: str | Path, yang_dir: Path | None, context: int) -> SiteDiff:
    """`diff_sites`.  A member on both sides is designed here (on one side only where `same_inputs`) while the
    member before it finishes beside it: its fabric-wide files rendered in the background (`Side.start`), then
    compared; at most two members are in flight at once.  Results and warnings come in the sites' order."""
    ctx = RenderContext(folders=reference_folders({"--yang-dir": yang_dir}))
    a, b = load_site(old), load_site(new)
    for loaded in (a, b):
        found = check_site(loaded)
        if errors(found):
            raise SpecError(found)
    ma, mb = members_of(a), members_of(b)
    result = SiteDiff(str(old), str(new))
    attached: tuple[dict[str, Fabric], dict[str, Fabric]] = ({}, {})
    order = [*a.clusters, *(c for c in b.clusters if c not in a.clusters)]
    warned: dict[str, list[Finding]] = {}
    running: deque[tuple[str, Side, Side, bool]] = deque()

    def end(name: str, sa: Side, sb: Side, shared: bool) -> None:
        try:
            if shared:
                sb = _as_new_side(sa.wait(), sb)
            comparison = compare(sa.wait(), sb.wait(), context)
            assert sa.fabric is not None and sb.fabric is not None
            attached[0][name], attached[1][name] = attachment(sa.fabric), attachment(sb.fabric)
        finally:
            sa.close()
            sb.close()
        level, reasons = verdict(comparison)
        result.clusters[name] = DiffResult(comparison, level, reasons, sa.warnings + sb.warnings)
        warned[name] = sb.warnings

    try:
        for name in order:
            if name not in b.clusters:
                designed = design_spec(a.files[name], a.clusters[name], site=ma[name])
                result.removed[name] = len(designed.fabric.devices)
                attached[0][name] = attachment(designed.fabric)
                continue
            if name not in a.clusters:
                designed = design_spec(b.files[name], b.clusters[name], site=mb[name])
                result.added[name] = len(designed.fabric.devices)
                attached[1][name] = attachment(designed.fabric)
                warned[name] = designed.warnings
                continue
            shared = same_inputs(a, b, name, ma, mb)
            sa = Side(str(old), a.files[name], a.clusters[name], ctx, None, site=ma[name])
            sb = Side(str(new), b.files[name], b.clusters[name], ctx, None, site=mb[name])
            running.append((name, sa, sb, shared))
            sa.start(False)
            if not shared:
                sb.start(False)
            while len(running) > 1:
                end(*running.popleft())
        while running:
            end(*running.popleft())
    finally:
        for _, sa, sb, _ in running:
            sa.close()
            sb.close()
    result.warnings = [w for name in order for w in warned.get(name, [])]
    # the tier is designed from its members in the site's order (as `teton render SITE` does), whichever ended first
    fa = _tier_files(a, {n: attached[0][n] for n in a.clusters if n in attached[0]}, ctx)
    fb = _tier_files(b, {n: attached[1][n] for n in b.clusters if n in attached[1]}, ctx)
    for rel in sorted(set(fa) | set(fb)):
        d = unified(rel, fa.get(rel), fb.get(rel), context)
        if d is not None:
            result.tier.append(d)
    return result
