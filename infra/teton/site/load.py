"""Load a site spec: the site (YAML, bounded like a cluster spec) and every cluster it names, each cluster spec's data
with the site's `overrides` merged in and its `name` set to the site's name for it, then checked as a cluster spec.
Every problem is a Finding naming the file and path; a cluster's findings name the cluster's file, with the site's
entry for it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teton import limits
from teton.findings import Finding, SpecError
from teton.spec.load import check_shape, load_data, validate_as
from teton.spec.model import Cluster
from teton.spec.site import Site


@dataclass(frozen=True)
class LoadedSite:
    path: Path
    site: Site
    clusters: dict[str, Cluster]           # in the site's order (its slots)
    files: dict[str, Path]                 # each cluster's spec file


def is_site_spec(path: str | Path) -> bool:
    """Whether the file at `path` is a site spec, without checking it: YAML whose top level has `clusters` and `bag`,
    or Python that binds `site` (read, not run)."""
    p = Path(path)
    if p.suffix == ".py" and p.is_file():
        from teton.spec.pyspec import binds

        return binds(p, "site")
    if p.suffix not in (".yaml", ".yml", ".json") or not p.is_file():
        return False
    try:
        data, _ = load_data(p)
    except SpecError:
        return False
    return isinstance(data, dict) and "clusters" in data and "bag" in data


def merged(base: Any, over: Any) -> Any:
    """`over` merged into `base`: mappings key by key, recursively; anything else replaced."""
    if isinstance(base, dict) and isinstance(over, dict):
        out = dict(base)
        for k, v in over.items():
            out[k] = merged(base.get(k), v) if k in base else v
        return out
    return over


def load_site(path: str | Path, timeout: float | None = None) -> LoadedSite:
    """The site at `path` and its clusters; SpecError with every finding."""
    path = Path(path)
    data, lines = load_data(path, timeout, binding="site")
    site = validate_as(Site, data, str(path), lines)
    findings: list[Finding] = []
    clusters: dict[str, Cluster] = {}
    files: dict[str, Path] = {}
    root = path.parent.resolve()
    for k, entry in enumerate(site.clusters):
        where = f"clusters[{k}]"
        if entry.name in clusters:
            findings.append(Finding(str(path), f"{where}.name", f"cluster {entry.name!r} is named twice",
                                    line=lines.get(("clusters", k, "name")), rule="site-names"))
            continue
        file = path.parent / entry.spec    # its grammar has no "..": a symbolic link may still lead out
        if not file.resolve().is_relative_to(root):
            findings.append(Finding(str(path), f"{where}.spec", f"{entry.spec!r}: a cluster spec is a file inside "
                                    f"the site spec's folder {root}", line=lines.get(("clusters", k, "spec")),
                                    rule="site-names"))
            continue
        try:
            cdata, clines = load_data(file, timeout)
            cdata = merged(cdata, {**entry.overrides, "name": entry.name})
            check_shape(cdata, str(file))
            clusters[entry.name] = validate_as(Cluster, cdata, f"{file} (as {entry.name} of {path})", clines)
            files[entry.name] = file
        except SpecError as exc:
            findings += exc.findings
    if len(site.clusters) > site.room.clusters:
        findings.append(Finding(str(path), "room.clusters", f"the site names {len(site.clusters)} clusters, more "
                                f"than its room ({site.room.clusters})", rule="site-room"))
    if findings:
        raise SpecError(findings[:limits.MAX_SCHEMA_FINDINGS])
    return LoadedSite(path, site, clusters, files)
