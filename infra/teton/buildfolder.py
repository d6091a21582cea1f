"""A build folder, as one type: where teton writes each file of a build and how every reader reads one back.

The layout lives here and nowhere else: the manifest (`teton.manifest` holds its format), the Fabric's file, each
device's folder of files, the subnet manager's folder and the hosts' variables.  Targets spell the paths they write
with the functions below; validate --rendered, render --check, diff, the twin, deploy and drift read through a
`BuildFolder`, which reads each file through one method (`bytes`), so that the bounds a reader needs (sizes, where a
symlink may lead, which names may become paths) are kept in one place.

A `BuildFolder` is a folder on disk, or a render still in memory ({path: text}); it parses the Fabric once and keeps
it.  Every problem names the file, relative to the folder (`BuildFileError`, a `TetonError`).
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teton.fabric.model import Fabric
from teton.fabric.serialize import DEVICE_TYPES, FORMAT, FabricFormatError, load_fabric, typed
from teton.findings import TetonError
from teton.limits import MAX_DEVICES, MAX_SWITCH_MODELS
from teton.manifest import MANIFEST, read_manifest

__all__ = ["ANTA_DIR", "ANTA_INVENTORY", "DEVICES", "FABRIC_JSON", "HOST_VARS_DIR", "MANIFEST", "SUBNET_MANAGER_DIR",
           "BuildFileError", "BuildFolder", "Placement", "SubnetManager", "anta_catalog_path", "device_dir",
           "device_of", "device_path", "host_vars_path", "is_device_file"]

FABRIC_JSON = "fabric.json"            # the whole Fabric (`teton.fabric.serialize`), what every reader designs from
DEVICES = "devices"                    # one folder of files per switch, named after it
SUBNET_MANAGER_DIR = "ib"              # InfiniBand: the subnet manager's files (the OpenSM target's)
HOST_VARS_DIR = "ansible/host_vars"    # one variables file per host (the Ansible target's)
ANTA_DIR = "anta"                      # an ANTA test catalog per EOS switch and their inventory (the EOS target's)
ANTA_INVENTORY = f"{ANTA_DIR}/inventory.yml"

# A device's name becomes a folder name: a name, never a path (no "/", not "." or "..", no control character).
DEVICE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")

# What a reader reads at most, by file: the 24k cluster's fabric.json is 41 MB, its largest other file 10 MB and a
# device's files a few hundred kB; a folder that holds more is not a teton build.
MiB = 1024 * 1024
MAX_FABRIC_JSON = 1024 * MiB
MAX_DEVICE_FILE = 64 * MiB
MAX_FILE = 512 * MiB
MAX_TOTAL = 16 * 1024 * MiB
READ_CHUNK = 4 * MiB
# fabric.json names each device once ("name" is a key of every device record, and of every switch model's): a file
# naming more than MAX_DEVICES is refused while it is read, before it is parsed into memory (2 million device records
# would take gigabytes as Python objects)
NAME_KEY = b'"name"'
MAX_FABRIC_NAMES = MAX_DEVICES + MAX_SWITCH_MODELS


# ------------------------------------------------------------------------------------------------------ the layout

def device_dir(device: str) -> str:
    """The folder of a device's files, relative to the build folder; BuildFileError when `device` is no name."""
    if not DEVICE_NAME.fullmatch(device):
        raise BuildFileError(FABRIC_JSON, f"device name {device[:80]!r} is not a name (letters, digits, '_.-', "
                             "64 at most, starting with a letter or a digit)")
    return f"{DEVICES}/{device}"


def device_path(device: str, file: str) -> str:
    """The path of one of a device's files (`file`: its name in the device's folder, "frr.conf")."""
    return f"{device_dir(device)}/{file}"


def size_cap(rel: str) -> int:
    """The most a reader reads of the file `rel`."""
    if rel == FABRIC_JSON:
        return MAX_FABRIC_JSON
    return MAX_DEVICE_FILE if is_device_file(rel) else MAX_FILE


def is_device_file(rel: str) -> bool:
    """True when `rel` is one device's file (not a fabric-wide one)."""
    return rel.startswith(f"{DEVICES}/")


def device_of(rel: str) -> str | None:
    """The device whose folder holds `rel`, or None for a fabric-wide file."""
    parts = rel.split("/")
    return parts[1] if len(parts) >= 3 and parts[0] == DEVICES else None


def host_vars_path(host: str) -> str:
    """The variables file of one host."""
    return f"{HOST_VARS_DIR}/{host}.json"


def anta_catalog_path(device: str) -> str:
    """The ANTA test catalog of one switch (named after it, so `teton diff` files it under the switch)."""
    return f"{ANTA_DIR}/{device_dir(device).rpartition('/')[2]}.yml"


# ------------------------------------------------------------------------------------------------------ the reader

def _read(f: Any, rel: str, cap: int, root: Path | None) -> bytes:
    """At most cap + 1 bytes of `f`, in chunks; fabric.json's device names counted as they come."""
    if rel != FABRIC_JSON:
        return bytes(f.read(cap + 1))
    chunks: list[bytes] = []
    size = names = 0
    tail = b""
    while size <= cap and (chunk := f.read(min(READ_CHUNK, cap + 1 - size))):
        size += len(chunk)
        window = tail + chunk
        names += window.count(NAME_KEY)
        tail = window[-(len(NAME_KEY) - 1):]
        if names > MAX_FABRIC_NAMES:
            raise BuildFileError(rel, f"names more than {MAX_FABRIC_NAMES} devices and switch models "
                                 f"(MAX_DEVICES is {MAX_DEVICES}): not read further", root)
        chunks.append(chunk)
    return b"".join(chunks)


class BuildFileError(TetonError):
    """A file of a build folder is missing or unreadable; `path` is relative to the build folder."""

    def __init__(self, path: str, problem: str, root: Path | None = None):
        super().__init__(f"{root / path if root is not None else path}: {problem}")
        self.path, self.problem = path, problem


@dataclass(frozen=True)
class Placement:
    """A device as deploy needs it: where it sits and how it is reached (not the whole Fabric)."""

    name: str
    role: str
    nos: str | None
    zone: int | None
    rack: str
    mgmt: str | None


@dataclass(frozen=True)
class SubnetManager:
    """Where the design runs the subnet manager of an InfiniBand backend."""

    hosts: tuple[str, ...]             # master first
    config_dir: str
    synthetic_guids: bool = True       # no hardware GUIDs: a simulation build (a live deploy refuses it)
    hcas: tuple[str, ...] = ()         # the HCA each host's instance binds, as `hosts`


class BuildFolder:
    """The files of a build, by path relative to its folder: on disk (`root`), or in memory right after a render
    (`files`).  The Fabric is read once and kept."""

    def __init__(self, root: Path | str | None = None, files: Mapping[str, str] | None = None):
        self.root = Path(root) if root is not None else None
        self._files = files
        self._fabric: Fabric | None = None
        self._raw: dict[str, Any] | None = None

    @classmethod
    def open(cls, root: Path | str) -> BuildFolder:
        """The build folder `root`; TetonError when it has no teton manifest."""
        folder = cls(root)
        if folder.manifest() is None:
            raise TetonError(f"{root} is not a teton build folder (no manifest.json): run `teton render SPEC` first")
        return folder

    def __repr__(self) -> str:
        return f"BuildFolder({str(self.root) if self.root is not None else f'<{len(self._files or {})} files>'})"

    # ------------------------------------------------------------------------------------------ files

    def _where(self, rel: str) -> Path:
        assert self.root is not None
        return self.root / rel

    def exists(self, rel: str) -> bool:
        if self._files is not None:
            return rel in self._files
        return self._where(rel).is_file()

    def bytes(self, rel: str) -> bytes:
        """The content of `rel`: every read of a file of the build comes through here.  On disk, the file must be a
        regular file inside the folder (a symlink may not lead out of it) of at most `size_cap(rel)` bytes."""
        if self._files is not None:
            if rel not in self._files:
                raise BuildFileError(rel, "missing")
            return self._files[rel].encode("utf-8")
        path = self._confined(rel)
        cap = size_cap(rel)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise BuildFileError(rel, "missing", self.root) from None
        except OSError as exc:
            raise BuildFileError(rel, f"cannot be read: {exc.strerror or exc}", self.root) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise BuildFileError(rel, "is not a regular file", self.root)
            if st.st_size > cap:
                raise BuildFileError(rel, f"is {st.st_size} bytes, more than a reader reads ({cap})", self.root)
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = _read(f, rel, cap, self.root)
            if len(data) > cap:
                raise BuildFileError(rel, f"is more than {cap} bytes, more than a reader reads", self.root)
            return data
        except OSError as exc:
            raise BuildFileError(rel, f"cannot be read: {exc.strerror or exc}", self.root) from None
        finally:
            os.close(fd)

    def _confined(self, rel: str) -> Path:
        """The file `rel` on disk, once it is known to stay inside the folder (after every symlink)."""
        parts = rel.split("/")
        if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\0" in rel:
            raise BuildFileError(rel[:200], "is not a path inside the build folder", self.root)
        assert self.root is not None
        path = self.root / rel
        try:
            real, top = path.resolve(), self.root.resolve()
        except (OSError, RuntimeError) as exc:    # a symlink loop
            raise BuildFileError(rel, f"cannot be read: {exc}", self.root) from None
        if not real.is_relative_to(top):
            raise BuildFileError(rel, "is a symlink that leads out of the build folder", self.root)
        if real != top / rel:
            raise BuildFileError(rel, "is reached through a symlink (teton writes none)", self.root)
        return real

    def text(self, rel: str) -> str:
        if self._files is not None and rel in self._files:
            return self._files[rel]
        try:
            return self.bytes(rel).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BuildFileError(rel, f"cannot be read: {exc}", self.root) from None

    def json(self, rel: str) -> Any:
        try:
            return json.loads(self.text(rel))
        except (ValueError, RecursionError) as exc:
            raise BuildFileError(rel, f"is not valid JSON: {exc}", self.root) from None

    def paths(self, hidden: bool = True) -> list[str]:
        """Every file of the build (anything that is not a folder), relative and sorted; without `hidden`, no file or
        folder whose name starts with a dot."""
        if self._files is not None:
            found = list(self._files)
        else:
            assert self.root is not None
            found = []
            total = 0
            for top, dirs, names in os.walk(self.root):
                if not hidden:
                    dirs[:] = [d for d in dirs if not d.startswith(".")]
                    names = [n for n in names if not n.startswith(".")]
                base = Path(top).relative_to(self.root)
                for n in names:
                    total += os.lstat(os.path.join(top, n)).st_size
                    found.append((base / n).as_posix())
                if total > MAX_TOTAL:
                    raise BuildFileError(".", f"holds more than {MAX_TOTAL} bytes: not a teton build", self.root)
        return sorted(found)

    def folder_texts(self, rel_dir: str) -> dict[str, str]:
        """{path: text} of the files directly in the folder `rel_dir` (none when it is missing)."""
        prefix = rel_dir.rstrip("/") + "/"
        if self._files is not None:
            names = [rel for rel in self._files if rel.startswith(prefix) and "/" not in rel[len(prefix):]]
        else:
            folder = self._where(rel_dir)
            names = [prefix + p.name for p in folder.iterdir() if p.is_file()] if folder.is_dir() else []
        return {rel: self.text(rel) for rel in sorted(names)}

    def device_files(self, device: str) -> dict[str, str]:
        """{file name: text} of a device's files; BuildFileError when the build has none (rendered with --only?)."""
        prefix = device_dir(device) + "/"
        files = {rel[len(prefix):]: text for rel, text in self.folder_texts(device_dir(device)).items()}
        if not files:
            raise BuildFileError(device_dir(device), f"is missing: the build has no files for {device} "
                                 "(rendered with --only?)", self.root)
        return files

    def host_vars(self, hosts: list[str]) -> dict[str, str]:
        """{path: text} of the variables files of `hosts` that the build has."""
        paths = [host_vars_path(h) for h in sorted(hosts)]
        return {rel: self.text(rel) for rel in paths if self.exists(rel)}

    # ------------------------------------------------------------------------------------------ what they say

    def manifest(self) -> dict[str, Any] | None:
        """The manifest, or None when there is none or it is unreadable."""
        if self._files is not None:
            try:
                data = json.loads(self._files[MANIFEST])
            except (KeyError, ValueError, RecursionError):
                return None
            return data if isinstance(data, dict) and isinstance(data.get("files"), dict) else None
        assert self.root is not None
        return read_manifest(self.root)

    def fabric(self) -> Fabric:
        """The Fabric the build was rendered from; FabricFormatError or BuildFileError."""
        if self._fabric is None:
            fabric = load_fabric(self.text(FABRIC_JSON))
            for name in fabric.devices:     # each becomes a path (devices/<name>/) to every reader of the Fabric
                device_dir(name)
            self._fabric = fabric
        return self._fabric

    def snapshot(self, dest: Path) -> BuildFolder:
        """A copy of the build at `dest` (a new folder), every file read through `bytes` (bounded, confined: a
        symlink that leads out is refused, as is one to a folder: teton writes no symlink)."""
        if self.root is None:
            raise TetonError("an in-memory build has no folder to snapshot")
        for top, dirs, _ in os.walk(self.root):
            for d in dirs:
                if os.path.islink(os.path.join(top, d)):
                    rel = (Path(top) / d).relative_to(self.root).as_posix()
                    raise BuildFileError(rel, "is a symlink to a folder (teton writes none)", self.root)
        dest.mkdir(parents=True)
        for rel in self.paths():
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.bytes(rel))
        return BuildFolder(dest)

    def _head(self) -> dict[str, Any]:
        """fabric.json's records as JSON (cheaper than the Fabric when a reader needs only names and places)."""
        if self._raw is None:
            data = self.json(FABRIC_JSON)
            try:
                head = data["fabric"]
                if head.get("format") != FORMAT:
                    raise BuildFileError(FABRIC_JSON, f"is format {head.get('format')!r}; this teton reads {FORMAT}: "
                                         "render the spec again", self.root)
            except (KeyError, TypeError, AttributeError) as exc:
                raise BuildFileError(FABRIC_JSON, f"cannot be read: {exc!r}", self.root) from None
            self._raw = data
        return self._raw

    def cluster(self) -> str:
        """The cluster's name."""
        if self._fabric is not None:
            return self._fabric.name
        try:
            return str(self._head()["fabric"]["cluster"])
        except (KeyError, TypeError) as exc:
            raise BuildFileError(FABRIC_JSON, f"cannot be read: {exc!r}", self.root) from None

    def placements(self) -> list[Placement]:
        """Every device's placement, straight from fabric.json's device records (building the whole Fabric of the
        24k cluster costs seconds a preview should not spend)."""
        fields = {k: DEVICE_TYPES[k] for k in ("name", "role", "nos", "zone", "rack", "mgmt")}
        try:
            placed = [Placement(d["name"], d["role"], d["nos"], d["zone"], d["rack"], d["mgmt"])
                      for k, d in enumerate(self._head()["devices"]) if typed(d, fields, f"devices[{k}]")]
        except FabricFormatError as exc:
            raise BuildFileError(FABRIC_JSON, str(exc), self.root) from None
        except (KeyError, TypeError) as exc:
            raise BuildFileError(FABRIC_JSON, f"cannot be read: {exc!r}", self.root) from None
        seen: set[str] = set()
        for p in placed:
            if not isinstance(p.name, str) or p.name in seen:
                raise BuildFileError(FABRIC_JSON, f"device {str(p.name)[:80]!r} is listed twice or is no name",
                                     self.root)
            device_dir(p.name)
            seen.add(p.name)
        return placed

    def subnet_manager(self) -> SubnetManager:
        """Where the subnet manager runs (no hosts when the design has none)."""
        try:
            data = self._head()["fabric"].get("subnet_manager") or {}
            return SubnetManager(tuple(i[0] for i in data.get("instances", [])),
                                 data.get("config_dir", "/etc/opensm"), data.get("synthetic_guids", True) is not False,
                                 tuple(str(i[1]) for i in data.get("instances", [])))
        except (KeyError, TypeError, AttributeError, IndexError) as exc:
            raise BuildFileError(FABRIC_JSON, f"cannot be read: {exc!r}", self.root) from None

