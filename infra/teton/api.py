"""teton as a library: the verbs `import teton` offers (docs/api.md).

    spec = teton.load("inventory/lab.yaml")      # Cluster, or teton.Error carrying the findings
    fabric = teton.design(spec)                   # Fabric (a spec path works too)
    figures = teton.plan(spec)                    # what `teton plan --json` prints
    build = teton.render(spec, "build/lab")       # BuildFolder, published atomically
    findings = teton.validate(spec)               # list[Finding]; teton.validate_build(build) too
    report = teton.verify(build)                  # report.ok, report.findings
    changes = teton.diff("old.yaml", "new.yaml")  # DiffResult

Each verb calls what the matching CLI command calls (`teton.pipeline`, `teton.validate.rendered`, `teton.verify.run`,
`teton.diff`, `teton.report`), so the library and the CLI cannot disagree; nothing here prints or exits.  Every error
is a `teton.Error` (`teton.findings.TetonError`); a spec's is a `SpecError` with `.findings` (file, line, path).

The heavy imports (pydantic models, the targets, pyavd, libyang, numpy) happen inside the verbs: importing this module
costs nothing.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from teton.findings import Finding, SpecError, TetonError

if TYPE_CHECKING:
    from teton.buildfolder import BuildFolder
    from teton.diff import DiffResult
    from teton.fabric.model import Fabric
    from teton.spec.model import Cluster
    from teton.verify.run import Verified

__all__ = ["Error", "Finding", "SpecError", "design", "diff", "load", "plan", "render", "report", "validate",
           "validate_build", "verify"]

Error = TetonError
"""The root of every exception teton raises; a spec's problems are a `SpecError` (a subclass) with `.findings`."""

PathLike: TypeAlias = "str | os.PathLike[str]"
Spec: TypeAlias = "Cluster | str | os.PathLike[str]"
Build: TypeAlias = "BuildFolder | str | os.PathLike[str]"

NO_FILE = "<spec>"   # what findings name as the file of a Cluster built in Python (not loaded by `load`)

_SOURCES: dict[int, str] = {}   # id(Cluster) -> the file `load` read it from, while the Cluster lives


# ------------------------------------------------------------------------------------------------------------- spec


def load(path: PathLike, *, timeout: float | None = None) -> Cluster:
    """The spec at `path` (YAML, JSON or a Python spec), parsed and schema-checked; `SpecError` (a `teton.Error`)
    with every finding, each naming the file, line and spec path.  `timeout` bounds a Python spec's run (seconds)."""
    from teton.spec.load import load_spec

    cluster = load_spec(os.fspath(path), timeout)
    _SOURCES[id(cluster)] = os.fspath(path)
    weakref.finalize(cluster, _SOURCES.pop, id(cluster), None)
    return cluster


def _designed(spec: Spec) -> Any:
    """`teton.pipeline.Designed` of `spec`: a path is loaded as `teton validate` / `plan` load it; a Cluster is
    checked and designed as if loaded from the file `load` read it from (else findings name `NO_FILE`)."""
    from teton.pipeline import design_spec, load_and_design
    from teton.spec.model import Cluster

    if isinstance(spec, Cluster):
        return design_spec(_SOURCES.get(id(spec), NO_FILE), spec)
    return load_and_design(os.fspath(spec))


def design(spec: Spec) -> Fabric:
    """The Fabric of `spec` (a Cluster or a spec's path), after every spec and fabric rule; `SpecError` when a rule
    fails.  Warnings are not raised: `validate` lists them."""
    fabric: Fabric = _designed(spec).fabric
    return fabric


def plan(source: Fabric | Spec) -> dict[str, Any]:
    """The figures of a cluster.  From a spec (a Cluster or a path): exactly what `teton plan --json` prints, the
    figures with the room report ("room") and the bill of materials ("bom").  From a Fabric: the figures and "bom"
    (the room needs the spec)."""
    from teton.fabric.model import Fabric

    if isinstance(source, Fabric):
        from teton.fabric.bom import bom
        from teton.fabric.plan import plan as figures

        out = figures(source)
        out["bom"] = bom(source)
        return out
    from teton.pipeline.figures import plan_figures

    return plan_figures(_designed(source))


def validate(spec: Spec) -> list[Finding]:
    """Every finding of `spec` (a Cluster or a path), as `teton validate SPEC` reports them: errors and warnings,
    each with file, line and spec path.  Bad input is returned, not raised; a `teton.Error` other than the spec's
    findings (a file that cannot be read is a finding too) still raises."""
    try:
        warnings: list[Finding] = _designed(spec).warnings
    except SpecError as exc:
        return list(exc.findings)
    return list(warnings)


# ------------------------------------------------------------------------------------------------------------ build


def render(source: Fabric | Spec, out: PathLike, *, only: Sequence[str] | None = None, force: bool = False,
           yang_dir: PathLike | None = None, cache: bool = False, live: bool = False) -> BuildFolder:
    """Render every target (or `only` these) into the build folder `out`, published atomically with its manifest, as
    `teton render SPEC -o OUT` does; the folder, opened.  `source` is a spec's path (what the CLI renders), a Cluster or
    a Fabric (designed already).  `force` replaces a folder that is not a teton build; `cache` uses the render cache
    ($TETON_CACHE_DIR, as the CLI does unless --no-cache; a spec's path only replays); `live` refuses what only a
    simulation runs (a spec's path only).  `SpecError` or `teton.Error` when it cannot."""
    from teton.buildfolder import BuildFolder
    from teton.fabric.model import Fabric
    from teton.pipeline import build, build_fabric

    chosen = tuple(only) if only else None
    yang = Path(yang_dir) if yang_dir is not None else None
    rcache = _cache() if cache else None
    if isinstance(source, str | os.PathLike):
        result = build(os.fspath(source), Path(out), only=chosen, yang_dir=yang, force=force, cache=rcache, live=live)
    else:
        if live:
            raise TetonError("render(..., live=True) takes a spec's path (the live checks read the spec)")
        warnings: list[Finding] = []
        if isinstance(source, Fabric):
            fabric = source
        else:
            designed = _designed(source)
            fabric, warnings = designed.fabric, designed.warnings
        result = build_fabric(fabric, Path(out), only=chosen, yang_dir=yang, force=force, cache=rcache,
                              warnings=warnings)
    return BuildFolder.open(result.path)


def _cache() -> Any:
    from teton.pipeline.cache import RenderCache

    return RenderCache.from_env()


def _root(build: Build) -> Path:
    from teton.buildfolder import BuildFolder

    if isinstance(build, BuildFolder):
        if build.root is None:
            raise TetonError("an in-memory BuildFolder has no folder to check: render it to a folder first")
        return build.root
    return Path(build)


def validate_build(build: Build, *, yang_dir: PathLike | None = None) -> list[Finding]:
    """Every finding of a rendered build folder, as `teton validate --rendered BUILD` checks it: vendor schemas (SONiC
    YANG, pyavd, FBOSS) and the cross-device rules.  `teton.Error` when it is no build folder."""
    from teton.validate.rendered import validate_rendered

    return validate_rendered(_root(build), Path(yang_dir) if yang_dir is not None else None)


def verify(build: Build, *, fail: Sequence[str] = (), fail_each: str | None = None,
           dask: str | None = None, dask_tls: tuple[PathLike, PathLike, PathLike] | None = None) -> Verified:
    """`teton verify BUILD`: the routing proved from the build's switch configs (of a site's build folder, with its
    site.json: every cluster's and the tier's at once); `.ok`, `.findings`, `.counts`,
    `.to_json()`.  `fail` (devices or links) and `fail_each` (a role) ask what-if questions; `dask` is --dask
    (a scheduler's address, "local" or "off"; default: a LocalCluster when the build is large); `dask_tls` the
    (CA, certificate, key) PEM files of a tls:// scheduler.  A Dask scheduler and its workers are trusted code (the
    client unpickles what they send): a plain tcp:// one gets a `UserWarning`."""
    import warnings

    from teton.verify.distributed import DaskTls, insecure, mapper_for
    from teton.verify.run import verify as verify_build

    root = _root(build)
    tls = DaskTls(*(Path(p) for p in dask_tls)) if dask_tls is not None else None
    if (warning := insecure(dask, tls)) is not None:
        warnings.warn(warning, UserWarning, stacklevel=2)
    with mapper_for(dask, root, tls) as mapper:
        from teton.site.index import is_site_build

        if is_site_build(root):          # a site's build folder: every cluster's build and the tier's at once
            from teton.site.verify import verify_site

            return verify_site(root, tuple(fail), fail_each, mapper)
        return verify_build(root, tuple(fail), fail_each, mapper)


def diff(old: PathLike, new: PathLike, *, context: int = 3, cache: bool = False,
         yang_dir: PathLike | None = None, diagram: bool = False) -> DiffResult:
    """`teton diff OLD NEW` (each a file or GIT_REF:path): `.level` (none, low, medium, high), `.reasons`,
    `.devices_changed`, `.changed`, `.render("text" | "markdown" | "json")`, `.exit_code()`; with `diagram` the SVG of
    what changes in `.diagram`.  `SpecError` or `teton.Error` on bad input."""
    from teton.diff import diff_specs

    return diff_specs(os.fspath(old), os.fspath(new), cache=_cache() if cache else None,
                      yang_dir=Path(yang_dir) if yang_dir is not None else None, context=context, diagram=diagram)


def report(source: Build, out_dir: PathLike, *, what_if: Sequence[str] = (), verify: bool = True,
           cache: bool = False) -> Path:
    """`teton docs SOURCE -o OUT_DIR`: the self-contained HTML report of a build folder (or of a spec's path, rendered
    first into OUT_DIR/build/); the path of its index.html."""
    from teton.buildfolder import FABRIC_JSON, BuildFolder
    from teton.fabric.serialize import FabricFormatError
    from teton.pipeline import build as build_spec
    from teton.report import write_report
    from teton.verify.sections import report_providers

    out = Path(out_dir)
    if isinstance(source, BuildFolder) or Path(source).is_dir():
        folder = BuildFolder.open(_root(source))
    else:
        folder = BuildFolder.open(build_spec(os.fspath(source), out / "build", cache=_cache() if cache else None).path)
    assert folder.root is not None
    try:
        fabric = folder.fabric()
    except FabricFormatError as exc:
        raise TetonError(f"{folder.root / FABRIC_JSON}: {exc}") from None
    return write_report(fabric, out, folder, report_providers(folder.root, tuple(what_if), verify))
