"""One build: spec -> checks -> Fabric -> checks -> every target rendered and vendor-validated -> a build folder,
written atomically with its manifest.  The CLI, the twin (`twin up` of a spec), `render --check`, `teton diff` and the
tests call this module; deploy and the Pulumi program only read the folder it writes.

- `load_and_design(spec)`: load the spec, run the spec rules (and "every NOS has a target"), design, run the fabric
  rules and what each target says it cannot spell; SpecError with every error, each with file, line and spec path.
- `render(fabric, ctx, only)`: {target name: files}, every switch config validated by its vendor's schema.
- `write(out, rendered, figures, ...)`: publish the folder (`teton.pipeline.output.publish`: refuses what is not a
  teton build, swaps atomically, serializes writers) with `manifest.json`: sha256 and target of every file, the plan's
  figures, the targets' versions, the spec it came from.  Every path a target returns is checked to stay inside the
  folder before anything is written (`teton.pipeline.output.confined`).  With `only`, the other targets' files of the
  previous build are kept as they were: only when that build came from the same spec, and the cross-device checks
  of `validate --rendered` pass on the assembled build before it is published.
- `build(spec, ...)`: all of the above.  With a `cache` (`teton.pipeline.cache`), devices whose inputs did not change
  come from the cache, and a spec rendered before is replayed from its record without designing (`record`).
- `render_spec(spec, ...)`: load, design and render in memory (what `build`, `render --check` and `diff` share).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teton import targets
from teton.checks import check_fabric, check_spec, errors
from teton.checks.ib_rules import ib_live
from teton.design import design
from teton.design.site import SiteMember
from teton.fabric.model import Fabric
from teton.fabric.plan import plan
from teton.findings import Finding, SpecError
from teton.manifest import MANIFEST, manifest_text, read_manifest
from teton.pipeline.cache import RenderCache
from teton.pipeline.output import OutputError, confined, publish, unsafe_path
from teton.pipeline.record import (
    Record,
    device_index,
    load_record,
    paused_gc,
    record_key,
    record_warnings,
    replay_files,
    save_record,
)
from teton.pipeline.staging import Sink, Stager
from teton.pipeline.staging import sha256 as _sha
from teton.spec.load import load_spec, spec_lines, with_lines
from teton.spec.model import Cluster
from teton.targets import Files, RenderContext, reference_folders
from teton.targets.parallel import aside, workers
from teton.targets.schedule import forks, render_targets
from teton.validate.rendered import validate_rendered

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Designed:
    cluster: Cluster
    fabric: Fabric
    warnings: list[Finding]


@dataclass(frozen=True)
class Build:
    path: Path
    files: int                      # files written, manifest included
    figures: dict[str, Any]
    warnings: list[Finding]
    rendered: tuple[str, ...]       # targets rendered this time
    kept: tuple[str, ...]           # targets whose files were kept from the previous build (`only`)
    replayed: bool = False          # every file came from the cache's record of this spec (nothing was designed)


@dataclass(frozen=True)
class Rendered:
    """A spec rendered in memory: its files by target, figures and warnings; `fabric` is None when replayed."""

    cluster: Cluster
    fabric: Fabric | None
    files: dict[str, Files]
    figures: dict[str, Any]
    warnings: list[Finding]
    record: Record | None = None
    known: dict[str, tuple[str, int]] | None = None      # replayed: each file's sha256 and size, from the cache


def load_and_design(path: str | Path, *, timeout: float | None = None) -> Designed:
    """Load, check and design the spec at `path`; raises SpecError with every error found.  `timeout` bounds a
    Python spec's run (see `teton.spec.load.load_spec`)."""
    return design_spec(path, load_spec(path, timeout))


def design_spec(path: str | Path, cluster: Cluster, site: SiteMember | None = None) -> Designed:
    """Check and design `cluster`, loaded from the spec at `path` (findings name it, with lines); `site`: as a member
    of a site (`teton.design.site`).  Garbage collection is paused while it runs (`paused_gc`: as in a render)."""
    with paused_gc():
        fabric, found = _design_unchecked(path, cluster, site)
        return _checked(path, cluster, fabric, found, fabric_findings(fabric, str(path), cluster))


def _design_unchecked(path: str | Path, cluster: Cluster, site: SiteMember | None = None,
                      ) -> tuple[Fabric, list[Finding]]:
    """`design_spec` up to the fabric's checks: the spec's checks (SpecError on an error) and the design."""
    file = str(path)
    findings = check_spec(cluster, file) + list(targets.check_nos(cluster, file)) + list(
        targets.check_port_naming(cluster, file))
    if errors(findings):
        raise SpecError(with_lines(findings, spec_lines(path)))
    return design(cluster, Path(file).parent, site), findings


def fabric_findings(fabric: Fabric, file: str, cluster: Cluster) -> list[Finding]:
    """The fabric's rules and what each target says it cannot spell (`design_spec`'s checks after the design)."""
    return check_fabric(fabric, file, cluster) + targets.check_fabric(fabric, file)


def _checks_and_plan(fabric: Fabric, file: str, cluster: Cluster) -> tuple[list[Finding], dict[str, Any] | None]:
    """What a forked render's aside computes (`render_spec`): the fabric's findings (`fabric_findings`) and its plan's
    figures (None if `plan` raised: the parent computes it again, and raises, after the render as without the aside).
    The plan is a pure function of the Fabric, which nothing changes once designed, and its figures pickle as they are
    (plain dicts, Counters, numbers, str): the same figures.  24k RoCE: the plan's ~0.8 s of CPU moves from the
    parent's serial end to the aside, which runs beside the parent's EOS warm-ups before the pool forks."""
    found = fabric_findings(fabric, file, cluster)
    try:
        return found, plan(fabric)
    except Exception:  # noqa: BLE001 - raised again by the parent's own plan(fabric)
        return found, None


def _checked(path: str | Path, cluster: Cluster, fabric: Fabric, found: list[Finding],
             more: list[Finding]) -> Designed:
    """`design_spec`'s end: the spec's findings and the fabric's, with lines; SpecError with all if any is an error."""
    findings = found + more
    findings = with_lines(findings, spec_lines(path)) if findings else findings
    if errors(findings):
        raise SpecError(findings)
    return Designed(cluster, fabric, findings)


def render(fabric: Fabric, ctx: RenderContext, only: tuple[str, ...] | None = None,
           progress: Progress | None = None, sink: Sink | None = None, stage: Stager | None = None,
           ) -> dict[str, Files]:
    """{target name: its files} for every registered target (or only the named ones), each validated: one list of
    tasks (device chunks of every device target, every fabric-wide target) on all cores (`teton.targets.schedule`);
    `sink`: handed each task's files as it ends; `stage`: where the workers write theirs (`render_targets`)."""
    chosen = [t for t in targets.targets() if not only or t.name in only]
    return render_targets(fabric, ctx, chosen, progress, sink=sink, stage=stage)


def _inside(rel: object) -> bool:
    """A manifest path that stays inside the build folder (a hand-made manifest must not reach outside it)."""
    return unsafe_path(rel) is None


def spec_source(cluster: Cluster) -> dict[str, str]:
    """What the manifest records of the spec a build came from: its cluster and the sha256 of the loaded spec."""
    return {"cluster": cluster.name, "sha256": _sha(cluster.model_dump_json())}


def _same_spec(out: Path, previous: dict[str, Any], source: dict[str, str] | None) -> None:
    """`--only` keeps another render's files: refuse unless that render came from the same spec."""
    if source is None:
        return
    was = previous.get("spec")
    if was == source:
        return
    if isinstance(was, dict) and was.get("cluster") != source["cluster"]:
        what = f"of cluster {was.get('cluster')!r}, not {source['cluster']!r}"
    elif isinstance(was, dict):
        what = "from another version of this spec"
    else:
        what = "without a record of its spec (an older teton, or a design-only build)"
    raise OutputError(f"refusing to render --only into {out}: the build there was rendered {what}, and keeping its "
                      "other targets' files would publish a mixed build; render all targets (without --only) or use "
                      "-o with another folder")


def _assembled_checks(out: Path, tmp: Path, rendered: dict[str, Files]) -> None:
    """The cross-device checks of `validate --rendered` over a build assembled from this render and kept files."""
    found = errors(validate_rendered(tmp, vendor=False))
    if found:
        raise SpecError([*found, Finding(str(out), "", f"the build assembled from --only {', '.join(rendered)} and "
                                         "the previous build's other targets fails the checks above; nothing was "
                                         "published: render all targets", rule="only")])


def manifest_entries(rendered: dict[str, Files], known: dict[str, tuple[str, int]] | None = None,
                     ) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """The manifest's entry of every file (sha256, bytes, target) and each target's version; `known`: sha256 and
    size of files that need no hashing again (from the render cache)."""
    entries: dict[str, dict[str, Any]] = {}
    for name, files in rendered.items():
        for rel, content in files.items():
            hit = known.get(rel) if known else None
            if hit is None:
                data = content.encode("utf-8")
                hit = (_sha(data), len(data))
            entries[rel] = {"sha256": hit[0], "bytes": hit[1], "target": name}
    return entries, {name: targets.get(name).version for name, files in rendered.items() if files}


def write(out: Path, rendered: dict[str, Files], figures: dict[str, Any], *, force: bool = False,
          only: tuple[str, ...] | None = None,
          known: dict[str, tuple[str, int]] | None = None,
          source: dict[str, str] | None = None) -> tuple[int, tuple[str, ...]]:
    """Publish `rendered` into `out` with its manifest; (files written, targets kept from the previous build).
    `source`: the spec's record (`spec_source`), kept in the manifest and compared by `only`."""
    confined(rendered)
    written = {rel for files in rendered.values() for rel in files}
    versions = {name: targets.get(name).version for name, files in rendered.items() if files}
    keep: dict[str, dict[str, Any]] = {}
    previous = read_manifest(out) if only else None
    if previous is not None:
        _same_spec(out, previous, source)
        for rel, entry in previous["files"].items():
            owner = entry.get("target") if isinstance(entry, dict) else None
            if owner not in rendered and rel not in written and _inside(rel):
                keep[rel] = dict(entry)
        for name, version in (previous.get("targets") or {}).items():
            if name not in rendered and isinstance(version, str):
                versions[name] = version
    kept = tuple(sorted({e["target"] for e in keep.values() if e.get("target")}))

    def fill(tmp: Path) -> None:
        entries = Stager(tmp).finish(rendered, known)
        root = out.resolve()
        for rel in sorted(keep):
            src, dst = out / rel, tmp / rel
            if src.is_file() and not src.is_symlink() and src.resolve().is_relative_to(root):
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)
        (tmp / MANIFEST).write_text(manifest_text({**keep, **entries}, figures, versions, source), encoding="utf-8")
        if keep:
            _assembled_checks(out, tmp, rendered)

    publish(out, fill, force=force)
    return len(written) + len(keep) + 1, kept


def write_rendering(out: Path, produce: Callable[[Stager], Rendered], *, force: bool = False,
                    source: dict[str, str] | None = None) -> tuple[int, Rendered]:
    """`write` of a whole build (no `only`) whose files are written while it renders: `produce(stager)` renders
    inside `publish`'s lock and staging folder, its forked workers writing their tasks' files into it themselves
    (`Stager.write`) and handing what they do not write to `stager` (`put`) as each task ends, so the files of the
    first tasks are on disk while the workers render the rest; then its final files complete the folder
    (`Stager.finish`: what a device target's `finish` added or a later task changed) and its manifest.  The same
    folder as `write(out, produced.files, ...)` (with the files the workers wrote): a failed render or a refused path
    leaves `out` as it was (the staging folder is removed), the lock is held from the render's start.  (files
    written, what `produce` returned)."""
    box: list[tuple[int, Rendered]] = []

    def fill(tmp: Path) -> None:
        stager = Stager(tmp)
        try:
            r = produce(stager)
        except BaseException:
            stager.close()
            raise
        entries = stager.finish(r.files, r.known)
        versions = {name: targets.get(name).version for name in stager.targets(r.files)}
        (tmp / MANIFEST).write_text(manifest_text(entries, r.figures, versions, source), encoding="utf-8")
        box.append((len(entries) + 1, r))

    publish(out, fill, force=force)
    return box[0]


Through = Callable[[Cluster, Callable[[Stager | None], Rendered]], Rendered]


def render_spec(spec: str | Path, *, only: tuple[str, ...] | None = None, yang_dir: Path | None = None,
                progress: Progress | None = None, timeout: float | None = None,
                cache: RenderCache | None = None, live: bool = False, through: Through | None = None) -> Rendered:
    """Load, check, design and render `spec` in memory.  With a cache: a spec rendered before (same content, same
    code) is replayed from its record without designing; otherwise unchanged devices come from the cache, and the
    render is recorded.  `live`: the build is for the real fabric, so what only a simulation can run (synthetic
    InfiniBand GUIDs) is an error.  `through(cluster, make)`: once the spec is loaded and designed (its errors
    raised), the render itself is `make(stager)` called by `through` (a build's writer: `build`), else `make(None)`;
    the files its workers write into the build (`Stager.write`) are then in the stager, not in `Rendered.files`."""
    ctx = RenderContext(folders=reference_folders({"--yang-dir": yang_dir}), cache=cache)
    workers()       # a bad $TETON_WORKERS is an error even when the cache leaves nothing to render
    with paused_gc():
        cluster = load_spec(spec, timeout)
        run: Through = through or (lambda _, make: make(None))
        if live and (refused := list(ib_live(cluster, str(spec)))):
            raise SpecError(with_lines(refused, spec_lines(spec)))
        key = record_key(cache, cluster, ctx, Path(spec).parent) if cache is not None else None
        record = load_record(cache, key) if cache is not None and key is not None else None
        if cache is not None and record is not None and record.cluster == cluster.name:
            known: dict[str, tuple[str, int]] = {}
            files = replay_files(cache, record, ctx, known=known)
            if files is not None:
                if progress:
                    progress("cache")
                if only:
                    files = {t: f for t, f in files.items() if t in only}
                replayed = Rendered(cluster, None, files, record.figures, record_warnings(record, spec), record, known)
                return run(cluster, lambda _: replayed)
        fabric, found = _design_unchecked(spec, cluster)
        chosen = [t for t in targets.targets() if not only or t.name in only]
        checks = aside(lambda: _checks_and_plan(fabric, str(spec), cluster)) if forks(fabric, ctx, chosen) else None
        designed = _checked(spec, cluster, fabric, found, fabric_findings(fabric, str(spec), cluster)) \
            if checks is None else None

        def make(sink: Stager | None) -> Rendered:
            nonlocal designed
            # every device's slice digest, for the record, made before the workers fork: they inherit them for their
            # cache lookups (a 24k render made them twice, the parent's ~1.1 s after the workers had ended)
            index = device_index(cache, fabric) if cache is not None and key is not None and not only else None

            def watch(target: str, files: Files) -> None:   # the fabric's errors as soon as the checks are in
                nonlocal designed
                if designed is None and checks is not None and checks.ready():
                    designed = _checked(spec, cluster, fabric, found, checks.result()[0])
                if sink is not None:
                    sink(target, files)

            try:
                files = render(fabric, ctx, only, progress, watch, sink)
            except Exception:
                if designed is None and checks is not None:     # the checks' errors first, as without the aside
                    designed = _checked(spec, cluster, fabric, found, checks.result()[0])
                raise
            if designed is None and checks is not None:
                designed = _checked(spec, cluster, fabric, found, checks.result()[0])
            assert designed is not None
            ahead = checks.result()[1] if checks is not None else None
            figures = ahead if ahead is not None else plan(fabric)
            saved = record
            if cache is not None and key is not None and not only:
                saved = save_record(cache, key, fabric, files, figures, designed.warnings, index,
                                    staged=sink.staged if sink is not None else None)
            return Rendered(cluster, fabric, files, figures, designed.warnings, saved)

        return run(cluster, make)


def build(spec: str | Path, out: Path | None = None, *, only: tuple[str, ...] | None = None,
          yang_dir: Path | None = None, force: bool = False, progress: Progress | None = None,
          timeout: float | None = None, cache: RenderCache | None = None, live: bool = False) -> Build:
    """Design `spec` and write its build folder (default build/<cluster>/); `cache`, `live`: see `render_spec`.  A
    whole build's files are written as they are rendered (`write_rendering`); with `only`, after (`write`)."""
    if only:
        r = render_spec(spec, only=only, yang_dir=yang_dir, progress=progress, timeout=timeout, cache=cache, live=live)
        if progress:
            progress("writing")
        out = Path(out or Path("build") / r.cluster.name)
        count, kept = write(out, r.files, r.figures, force=force, only=only, known=r.known,
                            source=spec_source(r.cluster))
        return Build(out, count, r.figures, r.warnings, tuple(r.files), kept, replayed=r.fabric is None)
    where: list[tuple[Path, int]] = []

    def through(cluster: Cluster, make: Callable[[Stager | None], Rendered]) -> Rendered:
        def produce(stager: Stager) -> Rendered:
            rendered = make(stager)
            if progress:
                progress("writing")
            return rendered

        folder = Path(out or Path("build") / cluster.name)
        count, rendered = write_rendering(folder, produce, force=force, source=spec_source(cluster))
        where.append((folder, count))
        return rendered

    r = render_spec(spec, yang_dir=yang_dir, progress=progress, timeout=timeout, cache=cache, live=live,
                    through=through)
    return Build(where[0][0], where[0][1], r.figures, r.warnings, tuple(r.files), (), replayed=r.fabric is None)


def build_fabric(fabric: Fabric, out: Path, *, only: tuple[str, ...] | None = None, yang_dir: Path | None = None,
                 force: bool = False, progress: Progress | None = None,
                 warnings: list[Finding] | None = None, cache: RenderCache | None = None) -> Build:
    ctx = RenderContext(folders=reference_folders({"--yang-dir": yang_dir}), cache=cache)
    rendered = render(fabric, ctx, only, progress)
    if progress:
        progress("writing")
    figures = plan(fabric)
    count, kept = write(Path(out), rendered, figures, force=force, only=only)
    return Build(Path(out), count, figures, list(warnings or []), tuple(rendered), kept)
