"""One side of a diff: a spec file, or `GIT_REF:path` read with `git show` (no checkout), rendered through the one build
path.

A side is what the diff compares: every device with its role, placement and slice digest, the files that are not one
device's (fabric.json, cabling.csv, hosts/..., a NOS's per-SKU files), and on demand the files and facts of the
devices that changed.  With a cache, a side rendered before (by `teton render` or an earlier diff) is replayed from its
record without designing; otherwise it is designed once, its fabric-wide files are rendered, and only the devices
whose inputs differ from the other side are rendered (their files come from the cache when it has them).
"""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from teton import targets
from teton.buildfolder import BuildFileError, BuildFolder, is_device_file
from teton.design.site import SiteMember
from teton.diff.background import Background
from teton.diff.facts import facts_of
from teton.fabric.model import Fabric
from teton.fabric.plan import plan
from teton.fabric.serialize import FabricFormatError
from teton.fabric.slice import DigestMemo, device_digest, device_slice, head_digests
from teton.findings import Finding, SpecError, TetonError
from teton.pipeline import Designed, design_spec, render
from teton.pipeline.cache import RenderCache
from teton.pipeline.record import (
    DeviceInfo,
    Record,
    device_index,
    load_record,
    record_key,
    record_warnings,
    replay_files,
    save_record,
)
from teton.spec.load import load_spec
from teton.spec.model import Cluster
from teton.targets import DeviceTarget, Files, RenderContext

GIT_TIMEOUT_S = 60


@dataclass
class Side:
    label: str                                  # as the user gave it
    spec: Path                                  # the file loaded (a temporary copy for GIT_REF:path)
    cluster: Cluster
    ctx: RenderContext
    cache: RenderCache | None
    index: dict[str, DeviceInfo] = field(default_factory=dict)
    head: dict[str, str] = field(default_factory=dict)
    device_targets: dict[str, list[str]] = field(default_factory=dict)   # per-device target -> its devices
    others: dict[str, Files] = field(default_factory=dict)                # target -> files not of one device
    warnings: list[Finding] = field(default_factory=list)
    fabric: Fabric | None = None
    record: Record | None = None
    replayed: bool = False
    _pending: Background[tuple[dict[str, DeviceInfo], dict[str, Files]]] | None = None
    _memo: DigestMemo = field(default_factory=DigestMemo)
    _read: Fabric | None = None                 # a replayed side's Fabric read back ahead (`read_back`)
    site: SiteMember | None = None              # a member of a site: designed as one (`teton.site.diff`; no cache)

    # ------------------------------------------------------------------------------------------------ loading

    @classmethod
    def open(cls, label: str, spec: Path, ctx: RenderContext, timeout: float | None) -> Side:
        """Load the spec; replay its render from the cache when it was recorded (else `start` designs it)."""
        cluster = _relabel(lambda: load_spec(spec, timeout), spec, label)
        side = cls(label, spec, cluster, ctx, ctx.cache if isinstance(ctx.cache, RenderCache) else None)
        if side.cache is not None:
            side._replay()
        return side

    def start(self, digests: bool = True) -> Side:
        """Design a side that was not replayed; its fabric-wide files (and, with `digests`, every device's digest)
        are computed in the background.  Without `digests` the diff compares slices (both sides designed), and the
        digests are computed after the result is sent, for the cache's record."""
        if not self.replayed:
            self._design(wait=False, digests=digests)
        return self

    @classmethod
    def load(cls, label: str, spec: Path, ctx: RenderContext, timeout: float | None) -> Side:
        return cls.open(label, spec, ctx, timeout).start()

    def digest(self, name: str) -> str:
        """The slice digest of device `name` (computed here when the background work left it for later)."""
        info = self.index[name]
        if info.digest:
            return info.digest
        assert self.fabric is not None
        if self.cache is not None:
            return self.cache.digest(self.fabric, name)
        return device_digest(self.fabric, name, self._memo)

    def same(self, other: Side, name: str) -> bool:
        """Device `name` has the same slice on both sides (so identical files)."""
        if self.fabric is not None and other.fabric is not None:
            return device_slice(self.fabric, name) == device_slice(other.fabric, name)
        return self.digest(name) == other.digest(name)

    def wait(self) -> Side:
        """Wait for the work `load` left running in the background (a designed side's digests and files)."""
        if self._pending is not None:
            self.index, self.others = self._pending.result()
        return self

    def close(self) -> None:
        """Wait for the background process to end (it records the side in the cache after sending its result)."""
        if self._pending is not None:
            pending, self._pending = self._pending, None
            pending.close()

    def _key(self) -> str | None:
        """The side's record key; None when its spec cannot be recorded (`teton.pipeline.record.spec_inputs`)."""
        assert self.cache is not None
        return record_key(self.cache, self.cluster, self.ctx, self.spec.parent)

    def _replay(self) -> bool:
        assert self.cache is not None
        key = self._key()
        record = load_record(self.cache, key) if key is not None else None
        if record is None or record.cluster != self.cluster.name:
            return False
        files = replay_files(self.cache, record, self.ctx, names=set())
        if files is None:
            return False
        self.record, self.replayed = record, True
        self.index, self.head, self.device_targets = record.devices, record.head, record.device_targets
        self.others = files
        self.warnings = _relabel_findings(record_warnings(record, self.spec), self.spec, self.label)
        return True

    def _design(self, wait: bool = True, digests: bool = True) -> None:
        """Design this side; its digests and fabric-wide files are computed in a forked process (`wait`: here)."""
        designed: Designed = _relabel(lambda: design_spec(self.spec, self.cluster, site=self.site),
                                            self.spec, self.label)
        fabric = designed.fabric
        self.fabric, self.warnings = fabric, _relabel_findings(designed.warnings, self.spec, self.label)
        self.head = head_digests(fabric)
        self.device_targets = {t.name: [d.name for d in t.devices(fabric)]
                               for t in targets.targets() if isinstance(t, DeviceTarget)}
        self.record, self.replayed = None, False
        self.close()
        self._pending = Background(lambda: self._index_and_others(designed, digests),
                                   lambda found: self._remember(designed, *found))
        if wait:
            self.wait()

    def _index_and_others(self, designed: Designed,
                          digests: bool) -> tuple[dict[str, DeviceInfo], dict[str, Files]]:
        """Every device's placement (and digest) and every file that is not one device's."""
        fabric = designed.fabric
        index = self._index(fabric, digests)
        rendered = _relabel(lambda: render(fabric, dataclasses.replace(self.ctx, devices=frozenset())),
                            self.spec, self.label)
        others = {t: {rel: text for rel, text in files.items() if not is_device_file(rel)}
                  for t, files in rendered.items()}
        return index, others

    def _index(self, fabric: Fabric, digests: bool) -> dict[str, DeviceInfo]:
        if digests and self.cache is not None:
            return device_index(self.cache, fabric)
        return {n: DeviceInfo(d.role, d.zone, d.rack, d.plane, d.nos,
                              device_digest(fabric, n, self._memo) if digests else "")
                for n, d in fabric.devices.items()}

    def _remember(self, designed: Designed, index: dict[str, DeviceInfo], others: dict[str, Files]) -> None:
        """Record the side in the cache, so that the next diff or render of this spec replays it."""
        if self.cache is not None:
            fabric = designed.fabric
            if any(not i.digest for i in index.values()):
                index = device_index(self.cache, fabric)
            if (key := self._key()) is not None:
                save_record(self.cache, key, fabric, others, plan(fabric), designed.warnings, index)

    # ------------------------------------------------------------------------------------------ what changed

    def device_files(self, names: set[str]) -> dict[str, Files]:
        """{target: files} of the per-device targets, for the devices `names` only."""
        if not names:
            return {}
        if self.fabric is None and self.cache is not None and self.record is not None:
            files = replay_files(self.cache, self.record, self.ctx, names=names, others=False)
            if files is not None:
                return {t: {rel: text for rel, text in f.items() if is_device_file(rel)} for t, f in files.items()
                        if t in self.device_targets}
        fabric = self.get_fabric()
        only = tuple(self.device_targets)
        ctx = dataclasses.replace(self.ctx, devices=frozenset(names))
        rendered = _relabel(lambda: render(fabric, ctx, only), self.spec, self.label)
        return {t: {rel: text for rel, text in files.items() if is_device_file(rel)} for t, files in rendered.items()}

    def facts(self, names: list[str]) -> dict[str, dict[str, Any]]:
        digests = {n: self.digest(n) for n in names}
        found = facts_of(names, digests, self.fabric, self.cache)
        if found is None:
            found = facts_of(names, digests, self.get_fabric(), self.cache)
        assert found is not None
        return found

    def read_back(self) -> None:
        """A replayed side's Fabric read back now, for `get_fabric` to give later: a diff of a rendered base (its
        record in the cache) and a designed side does it while the designed side's files render in the background,
        since the changed devices' facts on the base are not in the cache unless a diff made them (the 24k's
        fabric.json takes ~4.7 s).  Nothing else changes: until `get_fabric` is called the side stays replayed."""
        if self.fabric is None and self._read is None:
            self._read = self._fabric_json()

    def _fabric_json(self) -> Fabric | None:
        built = BuildFolder(files={rel: text for files in self.others.values() for rel, text in files.items()})
        try:
            return built.fabric()
        except (BuildFileError, FabricFormatError):
            return None

    def get_fabric(self) -> Fabric:
        """The side's Fabric: a replayed side reads its fabric.json back (the exact round trip), which is faster than
        designing it again; without one, it is designed."""
        if self.fabric is None:
            self.fabric = self._read if self._read is not None else self._fabric_json()
        if self.fabric is None:
            self._design()
        assert self.fabric is not None
        return self.fabric


def _relabel_findings(findings: list[Finding], spec: Path, label: str) -> list[Finding]:
    return [dataclasses.replace(f, file=label) if f.file == str(spec) else f for f in findings]


def _relabel(fn: Any, spec: Path, label: str) -> Any:
    """fn(), with findings that name the loaded file naming the side as the user gave it."""
    try:
        return fn()
    except SpecError as exc:
        raise SpecError(_relabel_findings(exc.findings, spec, label)) from None


# ----------------------------------------------------------------------------------------------------- GIT_REF:path


class SpecFiles:
    """Where each side's spec is read from; `GIT_REF:path` is written to a temporary folder for as long as it lives."""

    def __init__(self) -> None:
        self._tmp: Path | None = None

    def __enter__(self) -> SpecFiles:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)

    def resolve(self, given: str) -> Path:
        """A spec file as given, or the text of `REF:path` in git (path as `git show` takes it: from the repository's
        top, or `./` for the current folder)."""
        path = Path(given)
        if path.is_file() or ":" not in given:
            return path
        ref, _, inside = given.partition(":")
        if not ref or not inside:
            raise TetonError(f"{given}: give a spec file or GIT_REF:path")
        if ref.startswith("-"):              # never an option of git's, whatever follows
            raise TetonError(f"{given}: a git ref does not start with '-'")
        try:                                 # --end-of-options: the user's value is a revision, never an option
            shown = subprocess.run(["git", "show", "--end-of-options", f"{ref}:{inside}"], capture_output=True,
                                   timeout=GIT_TIMEOUT_S, check=False)
        except FileNotFoundError:
            raise TetonError(f"{given}: git is not installed, so GIT_REF:path cannot be read") from None
        except subprocess.TimeoutExpired:
            raise TetonError(f"{given}: git show took more than {GIT_TIMEOUT_S} s") from None
        if shown.returncode != 0:
            why = shown.stderr.decode("utf-8", "replace").strip().splitlines()
            raise TetonError(f"{given}: git show failed: {why[-1] if why else 'exit ' + str(shown.returncode)}")
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="teton-diff-"))
        folder = self._tmp / str(len(list(self._tmp.iterdir())))
        folder.mkdir()
        out = folder / Path(inside).name
        out.write_bytes(shown.stdout)
        return out
