"""The ZTP inventory: which MAC address each switch of a build has, from the vendor's shipping manifest or a scan at
the dock, as CSV `device,mac[,serial]`.

A line is data: every field has a grammar (a device of the build that has a NOS, a unicast MAC in any of the usual
spellings, a serial of letters, digits and `._-`), the file is bounded (size, line length, rows), and every problem
names the file and the line (rule ztp-inventory).  A first line `device,mac[,serial]` is a header; blank lines and
lines starting with `#` are skipped.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path

from teton.fabric.model import Fabric
from teton.findings import Finding, SpecError, TetonError
from teton.limits import MAX_DEVICES
from teton.ztp.index import read_capped

MAX_BYTES = 64 * 1024 * 1024
MAX_LINE = 1024
MAX_ERRORS = 50          # findings reported at most; the rest are counted
_MAC = re.compile(r"^(?:[0-9a-f]{2}([:-]?)(?:[0-9a-f]{2}\1){4}[0-9a-f]{2}|[0-9a-f]{4}\.[0-9a-f]{4}\.[0-9a-f]{4})$")
_SERIAL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
_HEADER = ("device", "mac", "serial")


@dataclass(frozen=True, slots=True)
class InventoryRow:
    device: str
    mac: str                  # aa:bb:cc:dd:ee:ff
    serial: str | None
    line: int


def normal_mac(text: str) -> str | None:
    """`text` as aa:bb:cc:dd:ee:ff when it is a unicast MAC address (colons, hyphens, dots or none), else None."""
    t = text.strip().lower()
    if not _MAC.fullmatch(t):
        return None
    digits = re.sub(r"[^0-9a-f]", "", t)
    if int(digits[:2], 16) & 1 or digits == "0" * 12:
        return None            # multicast or broadcast, or all zeros: no switch's port
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))


def _shown(value: str) -> str:
    return repr(value[:64] + ("..." if len(value) > 64 else ""))


def read_inventory(path: Path, fabric: Fabric) -> list[InventoryRow]:
    """The rows of `path` for the switches of `fabric`; SpecError naming each bad line, TetonError when the file
    cannot be read or is too large."""
    shown = str(path)
    data = read_capped(path, MAX_BYTES, "an inventory is one short line `device,mac[,serial]` per switch")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TetonError(f"{shown}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    problems: list[Finding] = []
    rows: list[InventoryRow] = []
    by_device: dict[str, int] = {}
    by_mac: dict[str, tuple[int, str]] = {}

    def bad(line: int, message: str, field: str = "line") -> None:
        problems.append(Finding(shown, field, message, rule="ztp-inventory", line=line))

    # lines end at "\n" only (and a "\r" before it): str.splitlines would also break at \v, \f, \x1c-\x1e, \x85
    # and \u2028, which an editor does not, and every later line number would be off
    for n, raw in enumerate((x.removesuffix("\r") for x in text.split("\n")), start=1):
        if len(raw) > MAX_LINE:
            bad(n, f"longer than {MAX_LINE} characters")
            continue
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        try:
            fields = [x.strip() for x in next(csv.reader(io.StringIO(raw)), [])]
        except csv.Error:      # a carriage return inside the line: csv reads it as a line break
            bad(n, "a carriage return inside the line; a line ends with \\n or \\r\\n")
            continue
        if not rows and not by_device and tuple(x.lower() for x in fields) in (_HEADER[:2], _HEADER):
            continue
        if len(fields) not in (2, 3):
            bad(n, f"{len(fields)} field{'s' if len(fields) != 1 else ''}; a line is device,mac[,serial]")
            continue
        device, mac_text, serial = fields[0], fields[1], fields[2] if len(fields) == 3 and fields[2] else None
        d = fabric.devices.get(device)
        if d is None:
            bad(n, f"device {_shown(device)} is not in the build (cluster {fabric.name!r})", "device")
            continue
        if d.nos is None:
            bad(n, f"{device} is a {d.role}, not a switch: only switches are provisioned by ZTP", "device")
            continue
        mac = normal_mac(mac_text)
        if mac is None:
            bad(n, f"{_shown(mac_text)} is not a unicast MAC address (aa:bb:cc:dd:ee:ff, aa-bb-..., aabb.ccdd.eeff)",
                "mac")
            continue
        if serial is not None and not _SERIAL.fullmatch(serial):
            bad(n, f"serial {_shown(serial)}: letters, digits, '.', '_', '-', at most 64", "serial")
            continue
        if device in by_device:
            bad(n, f"{device} is listed twice (also on line {by_device[device]})", "device")
            continue
        if mac in by_mac:
            line, other = by_mac[mac]
            bad(n, f"MAC {mac} is listed twice (also on line {line}, for {other})", "mac")
            continue
        if len(rows) >= MAX_DEVICES:
            bad(n, f"more than {MAX_DEVICES} rows")
            break
        by_device[device], by_mac[mac] = n, (n, device)
        rows.append(InventoryRow(device, mac, serial, n))
    if problems:
        more = len(problems) - MAX_ERRORS
        shown_problems = problems[:MAX_ERRORS]
        if more > 0:
            shown_problems.append(Finding(shown, "", f"{more} more bad lines", rule="ztp-inventory"))
        raise SpecError(shown_problems)
    return rows
