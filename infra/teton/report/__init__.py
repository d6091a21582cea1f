"""`teton docs`: one self-contained HTML page of a cluster, for people.

The page (`page.page`) holds the cluster drawn (`diagrams.cluster_svg`: tiers, zones, spine planes, storage, with
counts), one drawing per zone (`diagrams.zone_svg`: racks, rack switches, spine switches, rails), the plan's figures
(`teton.fabric.plan`), the bill of materials, `teton verify`'s results and what-if table (through the providers of
`teton.report.sections`: "not available" until one is given), and an index of every device with links to its files
in the build.  Diagrams are plain SVG written here (`svg`), inline, deterministic byte for byte; nothing is fetched
when the page is viewed.  `change_svg` draws the cluster of a change (`teton diff --diagram`): the devices it adds,
removes or touches outlined by class, with a legend.

The report takes a Fabric and, for the links, the build folder it came from; it reads nothing else, so it sits
below the targets (which may provide sections) and above the build folder.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from teton.buildfolder import BuildFolder
from teton.fabric.model import Fabric
from teton.report.diagrams import change_svg
from teton.report.page import page
from teton.report.sections import Provider, Table, Unavailable, register, unregister

__all__ = ["INDEX", "Provider", "change_svg", "Table", "Unavailable", "register", "unregister", "write_report"]

INDEX = "index.html"


def write_report(fabric: Fabric, out: Path, build: BuildFolder | None = None,
                 providers: Mapping[str, Provider] | None = None) -> Path:
    """Write the report into folder `out` (created if need be) as index.html, atomically; its path."""
    out.mkdir(parents=True, exist_ok=True)
    text = page(fabric, str(out), build, providers)
    fd, tmp = tempfile.mkstemp(prefix=".index-", suffix=".html", dir=out)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, out / INDEX)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return out / INDEX
