"""A spec's render, remembered: what `teton render` of an unchanged spec and `teton diff` of a side seen before read
instead of designing and rendering again.

A record is keyed by the loaded spec (its canonical JSON, so a reformatted YAML file or the equivalent Python spec
give the same key), the code fingerprint, the registered targets and the render settings (`teton.pipeline.cache`).
It holds no file of a device: for each device, its role, placement and slice digest, from which the cache key of its
files follows; for every other file (fabric.json, cabling.csv, hosts/..., a NOS's per-SKU files) the sha256 of its
blob; the plan's figures; the spec and fabric warnings (without file and line: those come from the spec file at hand).

`replay` rebuilds every target's files from a record when every entry and blob is still in the cache, and says None
otherwise (the caller designs and renders as usual: a cache is never needed, only faster).
"""

from __future__ import annotations

import gc
import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from teton import targets
from teton.fabric.model import Fabric
from teton.fabric.slice import head_digests
from teton.findings import Finding
from teton.pipeline.cache import RenderCache, render_settings
from teton.spec.load import spec_lines, with_lines
from teton.spec.model import Cluster
from teton.targets import DeviceTarget, Files, RenderContext
from teton.targets.base import Staged

FORMAT = 1


class DeviceInfo(NamedTuple):
    role: str
    zone: int | None
    rack: str
    plane: str
    nos: str | None
    digest: str                    # slice digest (teton.fabric.slice)


@dataclass(frozen=True)
class Record:
    cluster: str
    devices: dict[str, DeviceInfo]                 # every device of the Fabric, by name
    head: dict[str, str]                           # fabric-wide field -> digest
    device_targets: dict[str, list[str]]           # per-device target -> the devices it renders
    files: dict[str, dict[str, str]]               # target -> {path: blob sha256} of its other files
    figures: dict[str, Any]
    warnings: list[list[Any]]                      # [spec path, message, rule, severity]


@contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic garbage collection while a Fabric is built and rendered: hundreds of thousands of long-lived records
    make every collection walk them (the 24k design takes about half as long without), and they hold no cycles."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _strings(x: Any) -> Iterator[str]:
    if isinstance(x, str):
        yield x
    elif isinstance(x, dict):
        for v in x.values():
            yield from _strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from _strings(v)


_INPUT_MAX = 64 * 1024 * 1024      # a file a spec names (a GUID map of a 24k cluster is a few MB)
_CHUNK = 1024 * 1024


def _file_digest(path: Path) -> str | None:
    """sha256 of the regular file at `path`, read in chunks up to `_INPUT_MAX`; None when it is not a regular file
    once opened (no FIFO or device is ever waited on: opened non-blocking) or is larger."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _INPUT_MAX:
            return None
        h = hashlib.sha256()
        seen = 0
        while chunk := os.read(fd, _CHUNK):
            seen += len(chunk)
            if seen > _INPUT_MAX:
                return None
            h.update(chunk)
        return h.hexdigest()
    finally:
        os.close(fd)


def spec_inputs(cluster: Cluster, spec_dir: Path) -> list[list[str]] | None:
    """[name, sha256] of every file the spec names (a string of the spec that is the path of a file, relative to the
    spec's folder: an InfiniBand GUID map ...): the design reads them, so a record depends on their content.

    Bounded: only regular files are opened (a folder, FIFO or device never is), and only those inside the spec's
    folder of at most 64 MiB are hashed.  A string naming any other regular file (outside the folder, or larger)
    makes the spec unrecordable (None): it is designed and rendered every time rather than keyed by a partial hash."""
    found: dict[str, str] = {}
    root = Path(os.path.realpath(spec_dir))
    for s in _strings(cluster.model_dump(mode="json")):
        if not s or len(s) > 4096 or "\0" in s or s in found:
            continue
        path = spec_dir / s
        try:
            if not stat.S_ISREG(os.stat(path).st_mode):
                continue
            if not Path(os.path.realpath(path)).is_relative_to(root):
                return None
            digest = _file_digest(path)
        except (OSError, ValueError):
            continue
        if digest is None:
            return None
        found[s] = digest
    return [[k, v] for k, v in sorted(found.items())]


def record_key(cache: RenderCache, cluster: Cluster, ctx: RenderContext, spec_dir: Path) -> str | None:
    """The key of the spec's record; None when the spec cannot be recorded (see `spec_inputs`)."""
    inputs = spec_inputs(cluster, spec_dir)
    if inputs is None:
        return None
    versions = [[t.name, t.version] for t in targets.targets()]
    return cache.key("record", FORMAT, cluster.model_dump_json(), inputs, versions, render_settings(ctx))


def device_index(cache: RenderCache, fabric: Fabric) -> dict[str, DeviceInfo]:
    return {n: DeviceInfo(d.role, d.zone, d.rack, d.plane, d.nos, cache.digest(fabric, n))
            for n, d in fabric.devices.items()}


def device_paths(target: DeviceTarget, fabric: Fabric) -> tuple[list[str], tuple[str, ...]]:
    """(the devices a per-device target renders, the path prefixes of their folders)."""
    names = [d.name for d in target.devices(fabric)]
    return names, tuple(DeviceTarget.path(n, "") for n in names)


def save_record(cache: RenderCache, key: str, fabric: Fabric, rendered: dict[str, Files], figures: dict[str, Any],
                warnings: list[Finding], index: dict[str, DeviceInfo] | None = None,
                staged: dict[str, dict[str, Staged]] | None = None) -> Record:
    """Remember a render (every target rendered; a per-device target's device files may be a subset, `teton diff`).
    `staged`: files a build's workers wrote (`teton.pipeline.staging.Stager.write`), which stored their blobs."""
    device_targets: dict[str, list[str]] = {}
    files: dict[str, dict[str, str]] = {}
    for t in targets.targets():
        if t.name not in rendered:
            continue
        prefixes: tuple[str, ...] = ()
        if isinstance(t, DeviceTarget):
            names, prefixes = device_paths(t, fabric)
            device_targets[t.name] = names
        files[t.name] = {rel: cache.write_blob(text) for rel, text in rendered[t.name].items()
                         if not rel.startswith(prefixes)}
        files[t.name].update({rel: s.sha256 for rel, s in (staged or {}).get(t.name, {}).items()
                              if not rel.startswith(prefixes)})
    record = Record(fabric.name, index if index is not None else device_index(cache, fabric), head_digests(fabric),
                    device_targets, files, figures,
                    [[f.path, f.message, f.rule, f.severity] for f in warnings])
    cache.write_json("records", key, {"format": FORMAT, "cluster": record.cluster,
                                      "devices": {n: list(i) for n, i in record.devices.items()},
                                      "head": record.head, "device_targets": record.device_targets,
                                      "files": record.files, "figures": record.figures,
                                      "warnings": record.warnings})
    return record


def load_record(cache: RenderCache, key: str) -> Record | None:
    data = cache.read_json("records", key)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        return None
    try:
        return Record(data["cluster"], {n: DeviceInfo(*i) for n, i in data["devices"].items()}, data["head"],
                      data["device_targets"], data["files"], data["figures"], data["warnings"])
    except (KeyError, TypeError, ValueError):
        return None


def record_warnings(record: Record, spec: str | Path) -> list[Finding]:
    found = [Finding(str(spec), path, message, rule=rule, severity=severity)
             for path, message, rule, severity in record.warnings]
    return with_lines(found, spec_lines(spec)) if found else found


def replay_files(cache: RenderCache, record: Record, ctx: RenderContext, names: set[str] | None = None,
                 others: bool = True, known: dict[str, tuple[str, int]] | None = None) -> dict[str, Files] | None:
    """Every target's files from the cache (with `names`, only those devices' files; without `others`, no file that
    is not one device's); None when an entry or a blob is missing.  `known` gets each file's sha256 and size."""
    out: dict[str, Files] = {}
    entries = 0
    for t in targets.targets():
        if t.name not in record.files:
            return None
        files: Files = {}
        if isinstance(t, DeviceTarget):
            for name in record.device_targets.get(t.name, []):
                if names is not None and name not in names:
                    continue
                entry = cache.read_entry(cache.entry_key(t, ctx, record.devices[name].digest), known)
                if entry is None:
                    return None
                files.update(entry)
                entries += 1
        for rel, sha in (record.files[t.name] if others else {}).items():
            text = cache.read_blob(sha)
            if text is None:
                return None
            files[rel] = text
            if known is not None:
                known[rel] = (sha, len(text.encode("utf-8")) if not text.isascii() else len(text))
        out[t.name] = files
    cache.count_hits(entries)
    return out
