"""Render a site: one build per cluster at OUT/<cluster>/, the tier's at OUT/<site>/, and OUT/site.json, the index
the site's readers take (`teton verify OUT`), written last.

The work is cut in pieces (`Piece`): a cluster's switches in `chunks` round-robin parts; each piece designs ITS
cluster itself from what the member needs (`Job`: its loaded spec and `SiteMember`, never the site's other Fabrics,
so a worker holds one cluster at a time) and renders its devices; the first piece of a cluster also renders every
fabric-wide file (fabric.json, cabling, hosts, the ANTA catalogs ...) and sends back the cluster's `attachment`
(its ATSWs and their links into the tier), its plan figures and its warnings.  Pieces run in this process one after
the other (`--dask off`) or on Dask workers (`teton.site.dask`); either way the files are the same, since every
device's files depend on the Fabric alone.

The client writes each piece into a staging folder inside OUT as it arrives (its memory bounded by a piece), designs
the tier from the attachments once every cluster is in, runs the rules across clusters, renders the tier, and only
when nothing failed publishes every build atomically (`teton.pipeline.output.publish`, each swapped whole), then
site.json (written to a temporary file and renamed).  Any error leaves OUT as it was; the staging folder is removed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from teton import targets
from teton.checks import errors
from teton.design.site import SiteMember
from teton.fabric.model import Fabric
from teton.fabric.plan import plan
from teton.findings import Finding, SpecError, TetonError
from teton.manifest import MANIFEST, is_teton_build, manifest_text
from teton.pipeline import design_spec, manifest_entries, render, spec_source
from teton.pipeline.output import OutputError, confined, inside, publish
from teton.site.design import attachment, members_of, tier_of
from teton.site.index import SITE_JSON, index_data, write_index
from teton.site.load import LoadedSite, load_site
from teton.site.rules import check_site
from teton.spec.model import Cluster
from teton.targets import Files, RenderContext, reference_folders
from teton.targets.base import DeviceTarget


@dataclass(frozen=True)
class Job:
    """One piece of work, all a worker needs (pickled to it): the member's loaded spec and its place in the site."""

    run: str                   # this render's id: a worker keeps the last Fabric it designed for it
    cluster: Cluster
    file: str                  # the cluster's spec file (findings name it)
    member: SiteMember
    chunk: int
    chunks: int
    cache: bool = False        # use the render cache of the worker's environment (TETON_CACHE)
    yang_dir: str | None = None


@dataclass(frozen=True)
class Piece:
    """What a job sends back."""

    cluster: str
    chunk: int
    files: dict[str, Files] = field(default_factory=dict)       # by target
    devices: int = 0                                            # switches rendered here
    total: int = 0                                              # the cluster's switches
    attachment: Fabric | None = None                            # chunk 0
    figures: dict[str, Any] | None = None                       # chunk 0
    warnings: list[Finding] = field(default_factory=list)       # chunk 0
    problems: list[Finding] = field(default_factory=list)


@dataclass(frozen=True)
class SiteBuild:
    out: Path
    site: str
    builds: dict[str, Path]             # by folder name: every cluster's, then the tier's
    files: int
    warnings: list[Finding]
    index: dict[str, Any]


@dataclass(frozen=True)
class Event:
    """Progress: a piece came in (`cluster` done when `done`), or the tier's step (`cluster` is the site's)."""

    cluster: str
    devices: int
    total: int
    done: bool
    clusters_done: int
    clusters: int


Progress = Callable[[Event], None]
Runner = Callable[[list[Job]], Iterable[Piece]]


# ------------------------------------------------------------------------------------------------------ the pieces


_LAST: tuple[tuple[str, str], Any] | None = None      # (run, cluster) -> Designed: one cluster per worker


def _designed(job: Job) -> Any:
    global _LAST
    key = (job.run, job.cluster.name)
    if _LAST is not None and _LAST[0] == key:
        return _LAST[1]
    _LAST = None                                        # the previous cluster's Fabric goes before this one's comes
    designed = design_spec(job.file, job.cluster, site=job.member)
    _LAST = (key, designed)
    return designed


def switch_names(fabric: Fabric) -> list[str]:
    """The switches a device target renders, sorted."""
    return sorted({d.name for t in targets.targets() if isinstance(t, DeviceTarget) for d in t.devices(fabric)})


def render_piece(job: Job) -> Piece:
    """Design the job's cluster (or reuse this worker's design of it) and render its piece; problems as values."""
    try:
        designed = _designed(job)
        fabric = designed.fabric
        cache = None
        if job.cache:
            from teton.pipeline.cache import RenderCache

            cache = RenderCache.from_env()
        ctx = RenderContext(folders=reference_folders({"--yang-dir": Path(job.yang_dir) if job.yang_dir else None}),
                            cache=cache)
        names = switch_names(fabric)
        if job.chunks <= 1:
            files = render(fabric, ctx)
            mine = names
        else:
            mine = names[job.chunk::job.chunks]
            files = {}
            if job.chunk == 0:                  # every fabric-wide file (and a device target's fabric-wide part)
                files = render(fabric, replace(ctx, devices=frozenset()))
            own = replace(ctx, devices=frozenset(mine))
            for t in targets.targets():
                if isinstance(t, DeviceTarget):
                    part = t.render(fabric, own)
                    if part:
                        files[t.name] = {**files.get(t.name, {}), **part}
        if job.chunk != 0:
            return Piece(job.cluster.name, job.chunk, files, len(mine), len(names))
        return Piece(job.cluster.name, 0, files, len(mine), len(names), attachment(fabric), plan(fabric),
                     list(designed.warnings))
    except SpecError as exc:
        return Piece(job.cluster.name, job.chunk, problems=list(exc.findings))
    except TetonError as exc:
        return Piece(job.cluster.name, job.chunk, problems=[Finding(job.file, "", str(exc), rule="io")])


def in_process(jobs: list[Job]) -> Iterator[Piece]:
    """`--dask off`: every job here, one after the other (each render on this machine's cores)."""
    for job in jobs:
        yield render_piece(job)


def jobs_for(loaded: LoadedSite, chunks: int = 1, *, cache: bool = False, yang_dir: Path | None = None,
             names: Iterable[str] | None = None) -> list[Job]:
    """Every piece of the site's clusters (or of the named ones): `chunks` per cluster, cluster by cluster."""
    run = uuid.uuid4().hex
    members = members_of(loaded)
    wanted = list(loaded.clusters) if names is None else list(names)
    return [Job(run, loaded.clusters[n], str(loaded.files[n]), members[n], k, max(1, chunks), cache,
                str(yang_dir) if yang_dir else None) for n in wanted for k in range(max(1, chunks))]


# ----------------------------------------------------------------------------------------------------- the staging


class Staged:
    """One build being assembled in a staging folder, piece by piece; its manifest written by `finish`."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.entries: dict[str, dict[str, Any]] = {}
        self.versions: dict[str, str] = {}
        self._made: set[Path] = set()
        folder.mkdir(parents=True)

    def add(self, rendered: dict[str, Files]) -> None:
        confined(rendered)
        entries, versions = manifest_entries(rendered)
        for rel in sorted(set(entries) & set(self.entries)):    # a device target's fabric-wide part, in every piece
            if entries[rel] != self.entries[rel]:
                raise OutputError(f"two pieces of the build {self.folder.name} wrote {rel} differently (a bug in "
                                  "teton: please report it); nothing was published")
        for files in rendered.values():
            for rel, content in sorted(files.items()):
                if rel in self.entries:
                    continue
                target = self.folder / rel
                if target.parent not in self._made:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    if not inside(target.parent, self.folder):
                        raise OutputError(f"the file path {rel!r} leads out of the build folder; nothing was "
                                          "published")
                    self._made.add(target.parent)
                target.write_text(content, encoding="utf-8")
        self.entries.update(entries)
        self.versions.update(versions)

    def finish(self, figures: dict[str, Any], source: dict[str, str] | None) -> None:
        (self.folder / MANIFEST).write_text(manifest_text(self.entries, figures, self.versions, source),
                                            encoding="utf-8")

    @property
    def files(self) -> int:
        return len(self.entries) + 1


def _move_into(staged: Path) -> Callable[[Path], None]:
    def fill(tmp: Path) -> None:
        for entry in sorted(os.listdir(staged)):
            os.rename(staged / entry, tmp / entry)
    return fill


def _refuse_early(out: Path, names: list[str], force: bool) -> None:
    """What `publish` would refuse, said before any work: a build folder that is a file or not a teton build."""
    if out.exists() and not out.is_dir():
        raise OutputError(f"{out} is a file, not a folder for the site's builds; use -o with another folder")
    if force:
        return
    for n in names:
        p = out / n
        if p.is_symlink() or not p.exists():
            continue
        if not p.is_dir():
            raise OutputError(f"{p} is a file, not a teton build folder; refusing to replace it; use --force or "
                              "another folder")
        if not is_teton_build(p) and any(p.iterdir()):
            raise OutputError(f"{p} is not a teton build (no manifest.json from teton); refusing to replace it; use "
                              "--force or another folder")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def site_source(loaded: LoadedSite) -> dict[str, str]:
    """What the tier's manifest records of its spec: the site and the sha256 of the loaded site spec."""
    return {"cluster": loaded.site.site, "sha256": hashlib.sha256(loaded.site.model_dump_json().encode()).hexdigest()}


def index_of(loaded: LoadedSite, out: Path) -> dict[str, Any]:
    """site.json: the site, its tier's build folder, each cluster's, and each build's manifest sha256."""
    name = loaded.site.site
    folders = [*loaded.clusters, name]
    return index_data(name, name, {c: c for c in loaded.clusters}, {f: _sha(out / f / MANIFEST) for f in folders})


# ---------------------------------------------------------------------------------------------------- the whole site


def render_site(spec: str | Path, out: Path, *, runner: Runner = in_process, chunks: int = 1, force: bool = False,
                cache: bool = False, yang_dir: Path | None = None, progress: Progress | None = None,
                loaded: LoadedSite | None = None) -> SiteBuild:
    """Render the site at `spec` into `out` (see the module's docstring); SpecError with every finding, OutputError
    when a folder cannot be replaced; nothing is published unless every build is complete."""
    loaded = loaded or load_site(spec)
    findings = check_site(loaded)
    if errors(findings):
        raise SpecError(findings)
    out = Path(out)
    name = loaded.site.site
    folders = [*loaded.clusters, name]
    _refuse_early(out, folders, force)
    out.mkdir(parents=True, exist_ok=True)
    staging = out / f".site-staging-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir()
        staged: dict[str, Staged] = {}
        left = {c: max(1, chunks) for c in loaded.clusters}
        attachments: dict[str, Fabric] = {}
        figures: dict[str, dict[str, Any]] = {}
        problems: list[Finding] = []
        done = 0
        for piece in runner(jobs_for(loaded, chunks, cache=cache, yang_dir=yang_dir)):
            c = piece.cluster
            left[c] -= 1
            if piece.problems:
                problems += piece.problems
            elif not problems:
                if c not in staged:
                    staged[c] = Staged(staging / c)
                staged[c].add(piece.files)
                if piece.chunk == 0:
                    assert piece.attachment is not None and piece.figures is not None
                    attachments[c] = piece.attachment
                    figures[c] = piece.figures
                    findings += piece.warnings
            done += left[c] == 0
            if progress:
                progress(Event(c, piece.devices, piece.total, left[c] == 0, done, len(folders)))
        if problems:
            raise SpecError(findings + problems)
        members = {c: attachments[c] for c in loaded.clusters}     # in the site's order
        tier, found = tier_of(loaded, members)
        findings += found
        if errors(findings):
            raise SpecError(findings)
        for c in loaded.clusters:
            staged[c].finish(figures[c], spec_source(loaded.clusters[c]))
        ctx = RenderContext(folders=reference_folders({"--yang-dir": yang_dir}))
        staged[name] = Staged(staging / name)
        staged[name].add(render(tier, ctx))
        staged[name].finish(plan(tier), site_source(loaded))
        if progress:
            progress(Event(name, len(tier.devices), len(tier.devices), True, len(folders), len(folders)))
        for f in folders:
            publish(out / f, _move_into(staging / f), force=force)
        index = index_of(loaded, out)
        try:
            write_index(out, index)
        except OSError as exc:
            raise OutputError(f"cannot write {out / SITE_JSON}: {exc.strerror or exc}") from exc
        return SiteBuild(out, name, {f: out / f for f in folders}, sum(s.files for s in staged.values()) + 1,
                         findings, index)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
