"""The incremental render: a content-addressed cache of rendered, vendor-validated files.

A device's files are a function of its slice of the Fabric (`teton.fabric.slice`: the device with its intents, its
model, its neighbours' roles, the fabric-wide facts) and of the code that renders them.  So an entry is keyed by

    sha256(layout, code fingerprint, target name, target version, render settings, slice digest)

where the code fingerprint covers every file of the teton package (the targets' templates are in it), the playbooks
folder beside it and the versions of the libraries that render or validate (pyavd, libyang, Jinja2, pydantic, PyYAML)
and of Python.  A target's `version` is in the key as well, so an entry is never trusted across target versions, nor
across an edit of any code that could change what it renders.  Only files that passed the vendor's validation are
stored.

Layout under the cache folder (default `$XDG_CACHE_HOME/teton/render`, i.e. `~/.cache/teton/render`; `TETON_CACHE_DIR`
moves it, `TETON_CACHE=off` turns it off):

    v1/devices/ab/<key>     one device's files for one target: a header line (paths, sizes, CRC) then the bytes
    v1/blobs/ab/<sha256>    a file by the sha256 of its text (fabric-wide outputs: fabric.json, cabling.csv ...)
    v1/records/ab/<key>     one spec's render: the devices and their digests, the blobs of the other files, the
                            figures and warnings (`teton.build.record`)
    v1/facts/ab/<key>       small JSON documents other layers derive from one slice (`teton diff`'s device facts)

Every write goes to a temporary name and is renamed into place, so concurrent renders and a killed render leave only
complete entries; an entry that does not read back whole (size or checksum) is a miss and is removed.  Deleting the
folder, or any part of it, is always safe: what is missing is rendered again.  Hits and misses are counted across the
forked render workers (shared counters) and reported by `teton render` and `teton diff`.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import multiprocessing as mp
import os
import sys
import zlib
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import suppress
from functools import cache
from pathlib import Path
from typing import Any

import teton
from teton.fabric.model import Fabric
from teton.fabric.slice import DigestMemo, device_digest
from teton.targets import DeviceTarget, Files, RenderContext, Target

LAYOUT = "v1"
ENV_DIR = "TETON_CACHE_DIR"
ENV_SWITCH = "TETON_CACHE"
_OFF = {"0", "off", "no", "false"}
_MAGIC = b"teton-render-entry 2\n"
_LIBRARIES = ("pyavd", "libyang", "jinja2", "pydantic", "pyyaml")
_SOURCE_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".j2", ".ini", ".md", ".cfg"}
_HITS, _MISSES, _STORED = 0, 1, 2
_FABRICS_REMEMBERED = 4


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "teton" / "render"


def _files_under(root: Path) -> Iterator[Path]:
    if not root.is_dir():
        return
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        for f in sorted(files):
            p = Path(folder) / f
            if p.suffix in _SOURCE_SUFFIXES:
                yield p


@cache
def code_fingerprint() -> str:
    """sha256 of everything that renders: teton's sources, data and templates (in the target packages), the playbooks
    folder beside the package, and the versions of the rendering and validating libraries and of Python."""
    h = hashlib.sha256()
    package = Path(teton.__file__).resolve().parent
    roots = [package, package.parents[1] / "playbooks"]   # the targets' templates are in their packages
    for root in roots:
        for p in _files_under(root):
            h.update(str(p.relative_to(root)).encode() + b"\0")
            h.update(p.read_bytes() + b"\0")
    for lib in _LIBRARIES:
        try:
            version = importlib.metadata.version(lib)
        except importlib.metadata.PackageNotFoundError:
            version = "-"
        h.update(f"{lib}={version}\0".encode())
    h.update(sys.version.encode())
    return h.hexdigest()


@cache
def _module_source(name: str) -> str:
    """sha256 of the file of module `name`: where a target's class is defined (one registered from outside the package
    is not in the code fingerprint)."""
    module = sys.modules.get(name)
    path = getattr(module, "__file__", None)
    if not path:
        return "-"
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "-"


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def render_settings(ctx: RenderContext) -> list[Any]:
    """What of the render context can change a rendered or validated file."""
    yang = ctx.yang_dir or os.environ.get("TETON_SONIC_YANG_DIR") or ""
    return [ctx.validate, str(Path(yang).resolve()) if yang else ""]


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps([LAYOUT, code_fingerprint(), *parts], separators=(",", ":")).encode()).hexdigest()


class RenderCache:
    """The cache folder; implements `teton.targets.base.DeviceCache` for the per-device render."""

    def __init__(self, root: Path | str):
        self.root = Path(root).expanduser()
        self._base = self.root / LAYOUT
        self._counts = mp.RawArray("q", 3)   # hits, misses, stored: shared with the forked render workers
        self._lock = mp.Lock()
        self._memos: OrderedDict[int, tuple[Fabric, DigestMemo]] = OrderedDict()
        code_fingerprint()   # here, once: render workers are forked and must all see the same code

    @classmethod
    def from_env(cls) -> RenderCache | None:
        """The cache the CLI uses: $TETON_CACHE_DIR or the default folder; None when $TETON_CACHE is off."""
        if os.environ.get(ENV_SWITCH, "").strip().lower() in _OFF:
            return None
        return cls(os.environ.get(ENV_DIR) or default_dir())

    # ------------------------------------------------------------------------------------------------ statistics

    def _count(self, which: int, n: int = 1) -> None:
        with self._lock:
            self._counts[which] += n

    def stats(self) -> dict[str, Any]:
        return {"dir": str(self.root), "hits": self._counts[_HITS], "misses": self._counts[_MISSES],
                "stored": self._counts[_STORED]}

    def count_hits(self, n: int) -> None:
        self._count(_HITS, n)

    def reset_stats(self) -> None:
        with self._lock:
            for i in range(len(self._counts)):
                self._counts[i] = 0

    # ------------------------------------------------------------------------------------------- per-device files

    def entry_key(self, target: Target, ctx: RenderContext, digest: str) -> str:
        cls = type(target)
        return _key("device", target.name, target.version, f"{cls.__module__}.{cls.__qualname__}",
                    _module_source(cls.__module__), render_settings(ctx), digest)

    def digest(self, fabric: Fabric, device: str) -> str:
        """The slice digest of `device`; shared objects are hashed once per fabric (the last few fabrics are kept)."""
        hit = self._memos.get(id(fabric))
        if hit is None or hit[0] is not fabric:
            hit = (fabric, DigestMemo())
            self._memos[id(fabric)] = hit
            while len(self._memos) > _FABRICS_REMEMBERED:
                self._memos.popitem(last=False)
        return device_digest(fabric, device, hit[1])

    def lookup(self, target: DeviceTarget, fabric: Fabric, device: str,
               ctx: RenderContext) -> tuple[str, Files | None]:
        """(entry key, the device's files if cached); counts a hit or a miss."""
        key = self.entry_key(target, ctx, self.digest(fabric, device))
        files = self.read_entry(key)
        self._count(_HITS if files is not None else _MISSES)
        return key, files

    def store(self, key: str, files: Files) -> None:
        self.write_entry(key, files)
        self._count(_STORED)

    def read_entry(self, key: str, known: dict[str, tuple[str, int]] | None = None) -> Files | None:
        """A device's files; with `known`, also each file's sha256 and size in bytes, by path, into it."""
        path = self._path("devices", key)
        data = _read(path)
        if data is None:
            return None
        try:
            if not data.startswith(_MAGIC):
                raise ValueError("not an entry")
            end = data.index(b"\n", len(_MAGIC))
            head = json.loads(data[len(_MAGIC):end])
            body = memoryview(data)[end + 1:]
            if len(body) != sum(f[1] for f in head["files"]) or zlib.crc32(body) != head["crc"]:
                raise ValueError("truncated or damaged")
            files: Files = {}
            at = 0
            for rel, n, sha in head["files"]:
                files[rel] = str(body[at:at + n], "utf-8")
                at += n
                if known is not None:
                    known[rel] = (sha, n)
            return files
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            with suppress(OSError):
                os.unlink(path)
            return None

    def write_entry(self, key: str, files: Files) -> None:
        parts = [text.encode("utf-8") for text in files.values()]
        body = b"".join(parts)
        head = {"files": [[rel, len(b), hashlib.sha256(b).hexdigest()] for rel, b in zip(files, parts, strict=True)],
                "crc": zlib.crc32(body)}
        self._write(self._path("devices", key), _MAGIC + json.dumps(head).encode() + b"\n" + body)

    # ------------------------------------------------------------------------------------ blobs, records, facts

    def read_blob(self, sha: str) -> str | None:
        path = self._path("blobs", sha)
        data = _read(path)
        if data is None:
            return None
        if hashlib.sha256(data).hexdigest() != sha:
            with suppress(OSError):
                os.unlink(path)
            return None
        return data.decode("utf-8")

    def write_blob(self, text: str) -> str:
        data = text.encode("utf-8")
        sha = hashlib.sha256(data).hexdigest()
        path = self._path("blobs", sha)
        if not os.path.exists(path):
            self._write(path, data)
        return sha

    def read_json(self, kind: str, key: str) -> Any:
        """A small JSON document (`kind`: records, facts), or None when missing or unreadable."""
        data = _read(self._path(kind, key))
        try:
            return None if data is None else json.loads(data)
        except (ValueError, RecursionError):
            return None

    def write_json(self, kind: str, key: str, data: Any) -> None:
        self._write(self._path(kind, key), json.dumps(data, sort_keys=True, separators=(",", ":")).encode())

    def key(self, *parts: Any) -> str:
        """A key under this cache's layout and code fingerprint (for records and facts)."""
        return _key(*parts)

    # ------------------------------------------------------------------------------------------------- storage

    def _path(self, kind: str, key: str) -> str:
        return f"{self._base}/{kind}/{key[:2]}/{key}"

    def _write(self, path: str, data: bytes) -> None:
        """Write atomically (temporary name, then rename); a cache that cannot be written is only slower."""
        folder, name = os.path.split(path)
        tmp = f"{folder}/.{name}.{os.getpid()}.tmp"
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except OSError:
            with suppress(OSError):
                os.unlink(tmp)
