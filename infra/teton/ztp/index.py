"""`ztp-index.json`: what a ZTP folder serves, to whom, and how the bring-up is counted.

    {"format": 1, "generator": "teton", "cluster": NAME, "server": BASE_URL,
     "devices": {NAME: {"nos", "tier", "zone", "plane", "mac", "serial", "address", "entry", "files"}},
     "not_provisionable": {NAME: {"nos", "tier", "zone", "plane"}}}

`files` are the names in the device's folder (`devices/<name>/<file>`, the build's layout) that the server hands to
that device and only to it; `entry` is the one DHCP points at (SONiC's ztp.json, EOS's bootstrap, FBOSS's fetch
script); `address` its designed management address (no prefix length), the only client the server answers for it
unless told otherwise.  A device is provisioned once every one of its files has been fetched.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from teton.buildfolder import DEVICE_NAME
from teton.findings import TetonError

INDEX = "ztp-index.json"
FORMAT = 1
MAX_INDEX = 64 * 1024 * 1024
FILE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")   # a file in a device's folder: a name, never a path


@dataclass(frozen=True, slots=True)
class ZtpDevice:
    name: str
    nos: str
    tier: str                 # the device's role: rtsw, ctsw, atsw, fe-rsw, fsw, ssw ...
    zone: int | None
    plane: str                # backend or frontend
    mac: str | None           # None: not provisionable yet (no inventory row)
    serial: str | None
    address: str | None       # designed management address, no prefix length
    entry: str | None         # the file DHCP points at
    files: tuple[str, ...]    # what the server hands to this device, by name in its folder


@dataclass(frozen=True)
class ZtpIndex:
    cluster: str
    server: str
    devices: dict[str, ZtpDevice]            # provisionable: a MAC is known
    not_provisionable: dict[str, ZtpDevice]  # no inventory row yet

    def dumps(self) -> str:
        def rec(d: ZtpDevice, full: bool) -> dict[str, Any]:
            r = asdict(d)
            del r["name"]
            r["files"] = list(d.files)
            return r if full else {k: r[k] for k in ("nos", "tier", "zone", "plane")}
        doc = {"format": FORMAT, "generator": "teton", "cluster": self.cluster, "server": self.server,
               "devices": {n: rec(d, True) for n, d in sorted(self.devices.items())},
               "not_provisionable": {n: rec(d, False) for n, d in sorted(self.not_provisionable.items())}}
        return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def read_capped(path: Path, cap: int, what: str) -> bytes:
    """The bytes of `path`, at most `cap` of them; TetonError saying what the file should have been."""
    try:
        with open(path, "rb") as f:
            data = f.read(cap + 1)
    except OSError as exc:
        raise TetonError(f"{path}: cannot be read ({exc.strerror}): {what}") from None
    if len(data) > cap:
        raise TetonError(f"{path}: larger than {cap // (1024 * 1024)} MiB: {what}")
    return data


def load_index(folder: Path) -> ZtpIndex:
    """The index of a ZTP folder written by `teton ztp`; TetonError naming the problem."""
    path = folder / INDEX
    data = read_capped(path, MAX_INDEX, "not a ZTP folder written by `teton ztp`")
    try:
        doc = json.loads(data)
        if doc.get("format") != FORMAT or doc.get("generator") != "teton":
            raise ValueError(f"format {doc.get('format')!r}; this teton reads format {FORMAT}")
        devices = {n: ZtpDevice(n, r["nos"], r["tier"], r["zone"], r["plane"], r["mac"], r["serial"], r["address"],
                                r["entry"], tuple(r["files"])) for n, r in doc["devices"].items()}
        waiting = {n: ZtpDevice(n, r["nos"], r["tier"], r["zone"], r["plane"], None, None, None, None, ())
                   for n, r in doc["not_provisionable"].items()}
        for d in (*devices.values(), *waiting.values()):
            if not DEVICE_NAME.fullmatch(d.name):
                raise ValueError(f"device name {d.name[:80]!r} is not a name")
            bad = [f for f in d.files if not isinstance(f, str) or not FILE_NAME.fullmatch(f)]
            if bad or (d.entry is not None and d.entry not in d.files):
                raise ValueError(f"device {d.name}: file {(bad or [str(d.entry)])[0]!r} is not one of its files' names")
        return ZtpIndex(str(doc["cluster"]), str(doc["server"]), devices, waiting)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TetonError(f"{path}: not a ZTP index written by this teton ({exc})") from None
