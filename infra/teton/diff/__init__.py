"""`teton diff OLD NEW`: what a spec change does to every device, file and session, and how risky it is.

Each side is a spec file or `GIT_REF:path` (`sides`).  Both are rendered through the one build path
(`teton.pipeline`), with the render cache when given: a side rendered before is replayed without designing, and of the
devices only those whose inputs differ between the sides are rendered (`engine`).  The result groups per-device
unified diffs by tier and zone, sums up devices, lines, BGP sessions, addresses and hosts (`report`), and weighs the
blast radius (`verdict`).

    result = diff_specs("main:inventory/x.yaml", "inventory/x.yaml", cache=RenderCache.from_env())
    result.level, result.devices_changed, result.render("markdown")

With `diagram=True` the result holds the diagram of what changes (`report.change_diagram`: an SVG), which the
markdown shows from `Links.report_url` when given.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from teton.diff.engine import Comparison, compare
from teton.diff.report import MARKDOWN_FILE_LINES, MARKDOWN_LIMIT, Links, as_json, as_markdown, as_text, change_diagram
from teton.diff.sides import Side, SpecFiles
from teton.diff.verdict import Reason, verdict
from teton.findings import Finding
from teton.pipeline.cache import RenderCache
from teton.pipeline.record import paused_gc
from teton.targets import RenderContext, reference_folders

__all__ = ["DiffResult", "Links", "diff_specs"]

EXIT_SAME, EXIT_CHANGED, EXIT_REFUSED = 0, 1, 2


@dataclass(frozen=True)
class DiffResult:
    comparison: Comparison
    level: str                     # none, low, medium, high
    reasons: list[Reason]
    warnings: list[Finding]
    diagram: str | None = None     # the SVG of what changes (diff_specs(..., diagram=True))

    @property
    def devices_changed(self) -> list[str]:
        return [d.name for d in self.comparison.devices]

    @property
    def changed(self) -> bool:
        c = self.comparison
        return bool(c.devices or c.files or c.head)

    def render(self, fmt: str, limit: int = MARKDOWN_LIMIT, file_lines: int = MARKDOWN_FILE_LINES,
               links: Links | None = None) -> str:
        """The report as text, markdown (`limit` characters at most, `file_lines` diff lines per file, `links` to the
        report and the diagram) or JSON."""
        if fmt == "json":
            return as_json(self.comparison, self.level, self.reasons)
        if fmt == "markdown":
            return as_markdown(self.comparison, self.level, self.reasons, limit, file_lines, links)
        return as_text(self.comparison, self.level, self.reasons)

    def exit_code(self, allow_high: bool = False) -> int:
        """0: nothing changes; 1: something does; 2: the verdict is HIGH and not allowed (errors exit 2 as well)."""
        if self.level == "high" and not allow_high:
            return EXIT_REFUSED
        return EXIT_CHANGED if self.changed else EXIT_SAME


def diff_specs(old: str, new: str, *, cache: RenderCache | None = None, yang_dir: Path | None = None,
               timeout: float | None = None, context: int = 3, diagram: bool = False) -> DiffResult:
    """Compare the specs `old` and `new` (files or GIT_REF:path), with the diagram of what changes when `diagram`;
    SpecError/TetonError on bad input."""
    ctx = RenderContext(folders=reference_folders({"--yang-dir": yang_dir}), cache=cache)
    sides: list[Side] = []
    with SpecFiles() as specs, paused_gc():
        try:
            sides.append(Side.open(old, specs.resolve(old), ctx, timeout))
            sides.append(Side.open(new, specs.resolve(new), ctx, timeout))
            a, b = sides
            digests = a.replayed or b.replayed     # else the two designed sides compare slices, no hashing
            a.start(digests)        # designed while ...
            b.start(digests)        # ... the old side's files render in the background
            for side, other in ((a, b), (b, a)):
                if side.replayed and not other.replayed:
                    side.read_back()    # while the other side's files render
            comparison = compare(a.wait(), b.wait(), context)
            svg = change_diagram(comparison) if diagram else None     # (a side's spec file is still there)
        finally:
            for side in sides:
                side.close()
    level, reasons = verdict(comparison)
    return DiffResult(comparison, level, reasons, a.warnings + b.warnings, svg)
