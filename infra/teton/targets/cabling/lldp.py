"""Collected LLDP, read: what each device's ports see, from the files an operator (or the twin) gathered.

One file per device, named after it (`z01-r001-rtsw.json`, `.lldp.json`, `.txt` or no extension), in one of the
shapes the devices print:

- `lldpctl -f json` (lldpd, on a server or inside SONiC's lldp container): `{"lldp": {"interface": ...}}`, an
  interface being one object by name or a list of one-key objects (as lldpd prints one or several), its chassis
  keyed by the system name; `-f json0` (every value a list) is read too;
- SONiC's `show lldp table` as JSON: a list of its rows (`LocalPort`, `RemoteDevice`, `RemotePortID`, ...), or an
  object holding that list; SONiC's APPL_DB `LLDP_ENTRY_TABLE` (`{"LLDP_ENTRY_TABLE:Ethernet0": {"lldp_rem_sys_name":
  ..., "lldp_rem_port_id": ...}}`, a `value` level allowed) is read too;
- EOS `show lldp neighbors | json`: `{"lldpNeighbors": [{"port", "neighborDevice", "neighborPort"}]}`.

A problem is an `LldpError` naming the file and where in it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, NamedTuple

from teton.findings import TetonError

MAX_FILE_BYTES = 64 << 20
MAX_FILES = 200_000
SUFFIXES = (".lldp.json", ".json", ".txt")


class Seen(NamedTuple):
    port: str          # the local port as the file names it
    system: str        # the neighbour's system name ("" when it sent none)
    port_id: str       # the neighbour's port id


class LldpError(ValueError, TetonError):
    def __init__(self, path: str, where: str, problem: str):
        super().__init__(f"{path}: {where + ': ' if where else ''}{problem}")
        self.path, self.where, self.problem = path, where, problem


def _one(value: Any) -> Any:
    """json0 wraps every value in a list: its first element."""
    while isinstance(value, list) and value:
        value = value[0]
    return value


def _text(value: Any) -> str:
    value = _one(value)
    if isinstance(value, dict):
        value = _one(value.get("value", ""))
    return "" if value is None else str(value)


def _lldpctl(data: dict[str, Any], path: str) -> list[Seen]:
    lldp = _one(data.get("lldp"))
    if not isinstance(lldp, dict):
        raise LldpError(path, "lldp", "is not an object")
    interfaces = lldp.get("interface", [])
    items: list[tuple[str, Any]] = []
    for entry in interfaces if isinstance(interfaces, list) else [interfaces]:
        if not isinstance(entry, dict):
            raise LldpError(path, "lldp.interface", "holds something that is not an object")
        if "name" in entry and ("chassis" in entry or "port" in entry):      # json0
            items.append((_text(entry["name"]), entry))
        else:
            items += list(entry.items())
    out = []
    for name, body in items:
        where = f"lldp.interface.{name}"
        body = _one(body)
        if not isinstance(body, dict):
            raise LldpError(path, where, "is not an object")
        chassis = _one(body.get("chassis", {}))
        system = ""
        if isinstance(chassis, dict):
            if "name" in chassis:                                           # json0
                system = _text(chassis["name"])
            else:
                names = [k for k, v in chassis.items() if isinstance(v, dict) and k not in ("id", "descr")]
                system = names[0] if names else ""
        port = _one(body.get("port", {}))
        if not isinstance(port, dict) or "id" not in port:
            raise LldpError(path, f"{where}.port", "has no port id")
        out.append(Seen(str(name), system, _text(port["id"])))
    return out


def _field(row: dict[str, Any], *names: str) -> str:
    folded = {k.replace(" ", "").replace("_", "").lower(): v for k, v in row.items()}
    for n in names:
        if n in folded:
            return _text(folded[n])
    return ""


def _rows(rows: list[Any], path: str, where: str) -> list[Seen]:
    out = []
    for k, row in enumerate(rows):
        if not isinstance(row, dict):
            raise LldpError(path, f"{where}[{k}]", "is not an object")
        local = _field(row, "localport", "port", "localinterface")
        if not local:
            raise LldpError(path, f"{where}[{k}]", "names no local port (LocalPort)")
        out.append(Seen(local, _field(row, "remotedevice", "neighbordevice", "remotesystemname"),
                        _field(row, "remoteportid", "neighborport", "remoteport")))
    return out


def parse(text: str, path: str) -> list[Seen]:
    """What one file says its device's ports see."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise LldpError(path, "", f"is not JSON: {exc}") from None
    return parse_data(data, path)


def parse_data(data: Any, path: str) -> list[Seen]:
    """What one device's LLDP JSON, already read (a transport's answer: `teton verify live`), says its ports see;
    `path` names it in an error."""
    if isinstance(data, list):
        return _rows(data, path, "")
    if not isinstance(data, dict):
        raise LldpError(path, "", "is neither lldpctl's, SONiC's nor EOS's LLDP JSON")
    if "lldp" in data:
        return _lldpctl(data, path)
    if "lldpNeighbors" in data:
        if not isinstance(data["lldpNeighbors"], list):
            raise LldpError(path, "lldpNeighbors", "is not a list")
        return _rows(data["lldpNeighbors"], path, "lldpNeighbors")
    for key in ("rows", "neighbors", "neighbours", "table"):
        if isinstance(data.get(key), list):
            return _rows(data[key], path, key)
    entries = {k: v for k, v in data.items() if k.startswith("LLDP_ENTRY_TABLE:")}
    if entries or not data:
        out = []
        for key, row in sorted(entries.items()):
            row = row.get("value", row) if isinstance(row, dict) else row
            if not isinstance(row, dict):
                raise LldpError(path, key, "is not an object")
            out.append(Seen(key.split(":", 1)[1], _text(row.get("lldp_rem_sys_name", "")),
                            _text(row.get("lldp_rem_port_id", ""))))
        return out
    raise LldpError(path, "", "is neither lldpctl's, SONiC's nor EOS's LLDP JSON (no lldp, lldpNeighbors, rows or "
                    "LLDP_ENTRY_TABLE)")


def read_dir(folder: Path) -> dict[str, tuple[str, list[Seen]]]:
    """{device (the file's name without its extension): (the file, what it says)} of every file in `folder`."""
    if not folder.is_dir():
        raise LldpError(str(folder), "", "is not a folder")
    out: dict[str, tuple[str, list[Seen]]] = {}
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    if len(files) > MAX_FILES:
        raise LldpError(str(folder), "", f"holds {len(files):,} files, more than {MAX_FILES:,}")
    for p in files:
        device = next((p.name.removesuffix(x) for x in SUFFIXES if p.name.endswith(x)), p.name)
        if device in out:
            raise LldpError(str(p), "", f"a second file for {device} (the first: {out[device][0]})")
        if p.stat().st_size > MAX_FILE_BYTES:
            raise LldpError(str(p), "", f"is larger than {MAX_FILE_BYTES >> 20} MiB")
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise LldpError(str(p), "", f"cannot be read: {exc}") from None
        out[device] = (str(p), parse(text, str(p)))
    return out
