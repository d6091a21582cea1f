"""The files of a ZTP folder as the server hands them out (`teton ztp serve`): which device and file a request path
names and whether this client may have it, and the file's bytes, read when asked (no symlink followed, size-capped),
checked against the manifest's sha256 and with its secret references resolved in memory by its NOS target's resolver.
A refusal is a `Refused` with the HTTP status it answers."""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import re
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from teton import targets
from teton.buildfolder import DEVICE_NAME, DEVICES
from teton.findings import TetonError
from teton.manifest import MANIFEST, read_manifest
from teton.secrets import PREFIX, SecretError, resolve
from teton.ztp.index import FILE_NAME, ZtpDevice, load_index

MAX_FILE = 64 * 1024 * 1024
_SHA256 = re.compile(r"[0-9a-f]{64}")
IP = ipaddress.IPv4Address | ipaddress.IPv6Address


def client_ip(text: str) -> IP | None:
    """A client's address as compared with a device's: no zone id, an IPv4-mapped IPv6 address as IPv4."""
    try:
        a = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    return (a.ipv4_mapped or a) if isinstance(a, ipaddress.IPv6Address) else a


class Refused(TetonError):
    """A request answered with `status` for `reason` (no request data unescaped in it)."""

    def __init__(self, status: int, reason: str, device: str | None = None, file: str | None = None) -> None:
        super().__init__(reason)
        self.status, self.reason, self.device, self.file = status, reason, device, file


class DeviceFiles:
    """A ZTP folder's device files: `open()` holds the folder (every read is relative to it), `close()` lets go."""

    def __init__(self, folder: Path, *, any_client: bool, secrets: Mapping[str, str], max_file: int = MAX_FILE) -> None:
        self.folder = folder
        self.index = load_index(folder)
        manifest = read_manifest(folder)
        if manifest is None:
            raise TetonError(f"{folder / MANIFEST}: missing or not a teton manifest; not a folder `teton ztp` wrote")
        self.hashes = _hashes(folder, manifest, self.index.devices.values())
        self.addresses = {n: _address(folder, d) for n, d in self.index.devices.items()}
        self.targets = {nos: targets.nos_target(nos) for nos in sorted({d.nos for d in self.index.devices.values()})}
        self.any_client = any_client
        self.secrets = dict(secrets)
        self.max_file = max_file
        self._root = -1

    def open(self) -> None:
        self._root = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)

    def close(self) -> None:
        if self._root >= 0:
            os.close(self._root)
            self._root = -1

    def device_file(self, path: str, client: str) -> tuple[ZtpDevice, str]:
        """The device and file `path` names, if this client may have it; Refused(404) otherwise."""
        parts = path.split("/")
        if len(parts) != 4 or parts[0] or parts[1] != DEVICES or not DEVICE_NAME.fullmatch(parts[2]) \
                or not FILE_NAME.fullmatch(parts[3]):
            raise Refused(404, "not a device's file")
        name, file = parts[2], parts[3]
        d = self.index.devices.get(name)
        if d is None:
            why = "is not provisionable (no MAC known)" if name in self.index.not_provisionable else "is no device"
            raise Refused(404, f"{name} {why}", name, file)
        if file not in d.files:
            raise Refused(404, f"{file} is not one of {name}'s files", name, file)
        if not self.any_client:
            want, got = self.addresses[name], client_ip(client)
            if want is None or got != want:
                raise Refused(404, f"client {client} is not {name}'s address {want or '(none designed)'}", name, file)
        return d, file

    def content(self, d: ZtpDevice, file: str) -> bytes:
        """The file as the device gets it: read, checked against the manifest, its secrets resolved."""
        raw = self._read(d, file)
        target = self.targets[d.nos]
        build = [f for f in d.files if f in getattr(target, "files", ())] if target is not None else []
        rel = f"{DEVICES}/{d.name}/{file}"
        try:
            if file in build:    # with the device's other build files: a NOS may derive one file from another (EOS)
                texts = {f"{DEVICES}/{d.name}/{f}": raw if f == file else self._read(d, f) for f in build}
                if not any(PREFIX.encode() in t for t in texts.values()):
                    return raw
                assert target is not None
                out = target.resolve_secrets({p: t.decode() for p, t in texts.items()}, self.secrets)[rel]
            elif PREFIX.encode() not in raw:
                return raw
            else:
                out = resolve(raw.decode(), self.secrets, (lambda v: json.dumps(v)[1:-1]) if file.endswith(".json")
                              else None)
        except SecretError as exc:
            raise Refused(503, f"{exc.args[0]}", d.name, file) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise Refused(500, f"{rel}: its secret references cannot be resolved ({type(exc).__name__})",
                          d.name, file) from None
        if PREFIX in out:
            raise Refused(500, f"{rel}: a secret reference is left after {d.nos}'s resolver", d.name, file)
        return out.encode()

    def _read(self, d: ZtpDevice, file: str) -> bytes:
        rel = f"{DEVICES}/{d.name}/{file}"
        changed = "the folder was changed after `teton ztp` wrote it"
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            top = os.open(DEVICES, flags | os.O_DIRECTORY, dir_fd=self._root)
            try:
                sub = os.open(d.name, flags | os.O_DIRECTORY, dir_fd=top)
            finally:
                os.close(top)
            try:
                fd = os.open(file, flags | os.O_NONBLOCK, dir_fd=sub)
            finally:
                os.close(sub)
        except OSError as exc:
            raise Refused(500, f"{rel}: cannot be opened ({exc.strerror}); {changed}", d.name, file) from None
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_size > self.max_file:
                raise Refused(500, f"{rel}: not a regular file of at most {self.max_file} bytes; {changed}",
                              d.name, file)
            with os.fdopen(fd, "rb", closefd=False) as f:
                data = f.read(self.max_file + 1)
        except OSError as exc:
            raise Refused(500, f"{rel}: cannot be read ({exc.strerror})", d.name, file) from None
        finally:
            os.close(fd)
        if len(data) > self.max_file or hashlib.sha256(data).hexdigest() != self.hashes[rel]:
            raise Refused(500, f"{rel}: its sha256 is not the manifest's; {changed}", d.name, file)
        return data


def _hashes(folder: Path, manifest: dict[str, Any], devices: Iterable[ZtpDevice]) -> dict[str, str]:
    """{relpath: sha256} of every file the index serves, from the manifest; TetonError when one is not listed."""
    files = manifest["files"]
    out: dict[str, str] = {}
    for d in devices:
        for f in d.files:
            rel = f"{DEVICES}/{d.name}/{f}"
            entry = files.get(rel)
            sha = entry.get("sha256") if isinstance(entry, dict) else None
            if not isinstance(sha, str) or not _SHA256.fullmatch(sha):
                raise TetonError(f"{folder / MANIFEST}: no sha256 for {rel}, which ztp-index.json serves; not a "
                                 "folder `teton ztp` wrote (write it again)")
            out[rel] = sha
    return out


def _address(folder: Path, d: ZtpDevice) -> IP | None:
    if d.address is None:
        return None
    a = client_ip(d.address)
    if a is None:
        raise TetonError(f"{folder}/ztp-index.json: device {d.name}'s address {d.address[:64]!r} is not an address")
    return a
