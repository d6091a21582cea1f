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
                            figures and warnings (`teton.pipeline.record`)
    v1/facts/ab/<key>       small JSON documents other layers derive from one slice (`teton diff`'s device facts)
    v1/locks/<name>         empty files locked (`flock`) by a process making what another would make too
                            (`one_at_a_time`: the EOS switches' ANTA catalogs, shared by the two sides of a diff)

Every write goes to a temporary name and is renamed into place, so concurrent renders and a killed render leave only
complete entries.  Deleting the folder, or any part of it, is always safe: what is missing is rendered again.  Hits
and misses are counted across the forked render workers (shared counters) and reported by `teton render` and
`teton diff`.

Trust model (docs/cache.md): the cache is a cache, never a source of truth.  Whoever can write the cache folder (a
shared or CI cache, another user, a restored archive) must not be able to change what a build holds.  So every
device entry and every JSON document (records, facts) carries an HMAC-SHA256 under a per-user key kept outside the
cache, over its kind, its key (the hash of its inputs) and its bytes: an entry is replayed only if it was written by
a holder of that key for exactly those inputs.  Blobs are content-addressed (read back only when their sha256 is the
name a MAC'd record gave).  The key is `$TETON_CACHE_KEY` (at least 32 characters) or the file
`$XDG_CONFIG_HOME/teton/cache.key` (`~/.config/teton/cache.key`), 32 random bytes created 0600 on first use; a key
file that others can read or write, or that is not the user's own regular file, is not used, and without a usable
key the cache is neither read nor written.  An entry that fails its MAC (damaged, older format, written by someone
without the key) is a miss: it is rendered again, counted as `untrusted` and said once by the CLI.  `render --check`
reads nothing from the cache at all: what it compares against is what the targets render now.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import importlib.metadata
import json
import multiprocessing as mp
import os
import re
import secrets
import stat
import sys
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import cache
from pathlib import Path
from typing import Any

from teton import environment
from teton.fabric.model import Fabric
from teton.fabric.slice import DigestMemo, device_digest
from teton.targets import DeviceTarget, Files, RenderContext, Target, targets

LAYOUT = "v1"
ENV_DIR = "TETON_CACHE_DIR"
ENV_SWITCH = "TETON_CACHE"
ENV_KEY = "TETON_CACHE_KEY"
_KEY_MIN = 32
_KEY_FILE_MAX = 4096
_OFF = {"0", "off", "no", "false"}
_MAGIC = b"teton-render-entry 3\n"
_MAC_HEX = 64
_LOCK_NAME = re.compile(r"[a-z][a-z0-9-]{0,63}")
_LIBRARIES = ("pyavd", "anta", "libyang", "jinja2", "pydantic", "pyyaml")
_SOURCE_SUFFIXES = {".py", ".yaml", ".yml", ".json", ".j2", ".ini", ".md", ".cfg"}
_HITS, _MISSES, _STORED, _UNTRUSTED = 0, 1, 2, 3
_FABRICS_REMEMBERED = 4


def default_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "teton" / "render"


def key_file() -> Path:
    """Where the per-user cache key is kept: outside the cache folder, in the user's configuration."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "teton" / "cache.key"


def _read_key_file(path: Path) -> bytes:
    """The key in `path`: the user's own regular file, private to them; ValueError saying why not."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid():
            raise ValueError(f"{path} is not a regular file of this user")
        if st.st_mode & 0o077:
            raise ValueError(f"{path} can be read or written by others (chmod 600 it)")
        data = os.read(fd, _KEY_FILE_MAX + 1).strip()
    finally:
        os.close(fd)
    if len(data) < _KEY_MIN or len(data) > _KEY_FILE_MAX:
        raise ValueError(f"{path} does not hold a key of {_KEY_MIN} to {_KEY_FILE_MAX} characters")
    return data


def load_key() -> tuple[bytes | None, str]:
    """(the cache key, "") or (None, why there is none): `$TETON_CACHE_KEY`, else the key file (created on first
    use with 32 random bytes, 0600 in a 0700 folder)."""
    given = environment.get(ENV_KEY)
    if given is not None:
        if len(given.strip()) < _KEY_MIN:
            return None, f"${ENV_KEY} is shorter than {_KEY_MIN} characters"
        return given.strip().encode("utf-8"), ""
    path = key_file()
    for _ in range(2):
        try:
            return _read_key_file(path), ""
        except FileNotFoundError:
            pass
        except (OSError, ValueError) as exc:
            return None, f"cache key {exc if isinstance(exc, ValueError) else f'{path}: {exc.strerror}'}"
        try:
            os.makedirs(path.parent, mode=0o700, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue        # another run created it meanwhile: read it
        except OSError as exc:
            return None, f"cannot create the cache key {path}: {exc.strerror}"
        try:
            os.write(fd, secrets.token_hex(32).encode() + b"\n")
        finally:
            os.close(fd)
    return None, f"cannot read the cache key {path}"


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
    package = Path(__file__).resolve().parents[1]   # teton's package (not `import teton`: the API is above)
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


def render_settings(ctx: RenderContext, of: Sequence[Target] | None = None) -> list[Any]:
    """What of the render context can change a rendered or validated file of the targets `of` (default: every
    registered one): whether it validates, and the reference data folders given for what they declare (by the caller
    or their environment variables; one found by the targets' own lookup is not given and so not in the key)."""
    given: dict[str, str] = {}
    for target in targets() if of is None else of:
        for data in target.reference:
            folder = data.given(ctx.folder(data))
            if folder is not None:
                given[data.name] = str(folder[0].resolve())
    return [ctx.validate, dict(sorted(given.items()))]


def _key(*parts: Any) -> str:
    return hashlib.sha256(json.dumps([LAYOUT, code_fingerprint(), *parts], separators=(",", ":")).encode()).hexdigest()


class RenderCache:
    """The cache folder; implements `teton.targets.base.DeviceCache` for the per-device render."""

    def __init__(self, root: Path | str, key: bytes | None = None, *, reads: bool = True):
        """`key`: the MAC key (default `load_key()`); without one, the cache is neither read nor written.  With
        `reads=False`, nothing is read from the cache (every lookup a miss) but fresh renders are stored."""
        self.root = Path(root).expanduser()
        self._base = self.root / LAYOUT
        self._mac_key, self.problem = (key, "") if key is not None else load_key()
        self._reads = reads and self._mac_key is not None
        self._counts = mp.RawArray("q", 4)   # hits, misses, stored, untrusted: shared with the forked render workers
        self._lock = mp.Lock()
        # per fabric: the digests of its shared objects and of its devices (a Fabric is never changed once designed)
        self._memos: OrderedDict[int, tuple[Fabric, DigestMemo, dict[str, str]]] = OrderedDict()
        code_fingerprint()   # here, once: render workers are forked and must all see the same code

    @classmethod
    def from_env(cls) -> RenderCache | None:
        """The cache the CLI uses: $TETON_CACHE_DIR or the default folder; None when $TETON_CACHE is off."""
        if (environment.get(ENV_SWITCH) or "").strip().lower() in _OFF:
            return None
        return cls(environment.get(ENV_DIR) or default_dir())

    def writer(self) -> RenderCache:
        """The same cache folder and key, never read (`render --check`: nothing replayed is trusted there)."""
        return RenderCache(self.root, self._mac_key, reads=False) if self._mac_key is not None else self

    def _mac(self, kind: str, key: str, data: bytes | memoryview) -> bytes:
        assert self._mac_key is not None
        h = hmac.new(self._mac_key, f"{LAYOUT}\0{kind}\0{key}\0".encode(), hashlib.sha256)
        h.update(data)
        return h.hexdigest().encode()

    def _signed(self, kind: str, key: str, data: bytes) -> bytes | None:
        """The bytes after the MAC line of a stored `data`, when the MAC is this key's for (kind, key, bytes)."""
        end = data.find(b"\n", 0, _MAC_HEX + 1)
        body = memoryview(data)[end + 1:]
        if end != _MAC_HEX or not hmac.compare_digest(data[:end], self._mac(kind, key, body)):
            self._count(_UNTRUSTED)
            return None
        return bytes(body)

    # ------------------------------------------------------------------------------------------------ statistics

    def _count(self, which: int, n: int = 1) -> None:
        with self._lock:
            self._counts[which] += n

    def stats(self) -> dict[str, Any]:
        return {"dir": str(self.root), "hits": self._counts[_HITS], "misses": self._counts[_MISSES],
                "stored": self._counts[_STORED], "untrusted": self._counts[_UNTRUSTED], "problem": self.problem}

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
                    _module_source(cls.__module__), render_settings(ctx, [target]), digest)

    def digest(self, fabric: Fabric, device: str) -> str:
        """The slice digest of `device`, made once per fabric, its shared objects hashed once (the last few fabrics
        are kept): a render's workers inherit what the parent made before they forked (`device_index`)."""
        hit = self._memos.get(id(fabric))
        if hit is None or hit[0] is not fabric:
            hit = (fabric, DigestMemo(), {})
            self._memos[id(fabric)] = hit
            while len(self._memos) > _FABRICS_REMEMBERED:
                self._memos.popitem(last=False)
        found = hit[2].get(device)
        if found is None:
            found = hit[2][device] = device_digest(fabric, device, hit[1])
        return found

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

    @contextmanager
    def one_at_a_time(self, what: str, *, wait: bool = True) -> Iterator[bool]:
        """An exclusive lock (`flock`) on `v1/locks/<what>` for as long as the block runs, which gets whether this
        process holds it: with `wait`, always (after waiting for the holder: what it stored is then in the cache);
        without, False at once when another process holds it.  The kernel lets it go with its holder, a killed one
        too; where the folder cannot be written, the block runs holding nothing (the cache is an optimisation, never
        a gate)."""
        if not _LOCK_NAME.fullmatch(what):
            raise ValueError(f"lock name {what!r}")
        try:
            folder = self._base / "locks"
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder / what, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            yield False
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
                held = True
            except BlockingIOError:
                held = False
            yield held
        finally:
            with suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def read_entry(self, key: str, known: dict[str, tuple[str, int]] | None = None) -> Files | None:
        """A device's files; with `known`, also each file's sha256 and size in bytes, by path, into it.  None when
        missing, damaged or not MAC'd with this user's key for this key (see the trust model)."""
        if not self._reads:
            return None
        data = _read(self._path("devices", key))
        if data is None:
            return None
        if not data.startswith(_MAGIC):
            self._count(_UNTRUSTED)
            return None
        signed = self._signed("devices", key, data[len(_MAGIC):])
        if signed is None:
            return None
        try:
            end = signed.index(b"\n")
            head = json.loads(signed[:end])
            body = memoryview(signed)[end + 1:]
            if len(body) != sum(f[1] for f in head["files"]):
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
            self._count(_UNTRUSTED)
            return None

    def write_entry(self, key: str, files: Files) -> None:
        parts = [text.encode("utf-8") for text in files.values()]
        head = {"files": [[rel, len(b), hashlib.sha256(b).hexdigest()] for rel, b in zip(files, parts, strict=True)]}
        signed = json.dumps(head).encode() + b"\n" + b"".join(parts)
        self._write_signed("devices", key, signed, _MAGIC)

    # ------------------------------------------------------------------------------------ blobs, records, facts

    def read_blob(self, sha: str) -> str | None:
        """A file by its sha256 (content-addressed: only a MAC'd record names which blob a build holds)."""
        if not self._reads:
            return None
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
        self.put_blob(data, sha)
        return sha

    def put_blob(self, data: bytes, sha: str) -> None:
        """`write_blob` of a file already encoded and hashed (`sha`: its sha256, which `read_blob` checks)."""
        path = self._path("blobs", sha)
        if self._mac_key is not None and not os.path.exists(path):
            self._write(path, data)

    def read_json(self, kind: str, key: str) -> Any:
        """A small JSON document (`kind`: records, facts), or None when missing, unreadable or not MAC'd."""
        data = _read(self._path(kind, key)) if self._reads else None
        signed = None if data is None else self._signed(kind, key, data)
        try:
            return None if signed is None else json.loads(signed)
        except (ValueError, RecursionError):
            return None

    def write_json(self, kind: str, key: str, data: Any) -> None:
        self._write_signed(kind, key, json.dumps(data, sort_keys=True, separators=(",", ":")).encode())

    def key(self, *parts: Any) -> str:
        """A key under this cache's layout and code fingerprint (for records and facts)."""
        return _key(*parts)

    # ------------------------------------------------------------------------------------------------- storage

    def _path(self, kind: str, key: str) -> str:
        return f"{self._base}/{kind}/{key[:2]}/{key}"

    def _write_signed(self, kind: str, key: str, data: bytes, magic: bytes = b"") -> None:
        """Store `data` under (kind, key) with its MAC line (nothing without a key)."""
        if self._mac_key is not None:
            self._write(self._path(kind, key), magic + self._mac(kind, key, data) + b"\n" + data)

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
