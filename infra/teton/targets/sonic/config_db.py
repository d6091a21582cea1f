"""SONiC Config DB of one switch (`config_db.json`), spelled from the Fabric's device and its intents.

Built as plain dicts in Config DB's own shape (tables of `key -> {field: string}`), validated against SONiC's YANG
models (`teton.targets.sonic.validate`) before it is written: metadata, the full port map, addresses, then the QoS and
buffers (`qos`), the ECMP hash and counters (`qos.policy_tables`) and the management plane (`management`).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from teton.catalogue.naming import PortPlace
from teton.catalogue.ports import Port
from teton.fabric.intent import Routing
from teton.fabric.model import Device, Interface
from teton.fabric.neighbours import Neighbour
from teton.spec.model import SwitchModel
from teton.targets.sonic.management import mgmt_tables
from teton.targets.sonic.qos import policy_tables, qos_tables, shared_qos_tables


def port_alias(model: SwitchModel, port: Port) -> str:
    """A port's alias (the front-panel name): what SONiC's lldpmgrd announces as the LLDP port id."""
    return alias(port.slot, port.position, model.slots)


def alias(slot: int, position: int, slots: int) -> str:
    return f"eth{slot}/{position}/1" if slots > 1 else f"Ethernet{position}/1"


def lldp_port_id(name: str, place: PortPlace, slots: int) -> str:
    """lldpmgrd: `configure ports <name> lldp portidsubtype local <alias>`."""
    return alias(place.slot, place.position, slots)


def _ports(model: SwitchModel, device: Device, mtu_default: int) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    slots = model.slots
    for port, i in device.port_map():
        entry = {"alias": alias(port.slot, port.position, slots), "index": str(port.ordinal + 1),
                 "lanes": ",".join(map(str, port.lanes)),
                 "speed": str((i.speed_gbps if i else port.speed_gbps) * 1000), "fec": "rs",
                 "mtu": str(i.mtu if i else mtu_default), "admin_status": "up" if i else "down"}
        if i:
            entry["description"] = f"{i.peer}:{i.peer_port}"
        out[port.name] = entry
    return out


def _breakouts(device: Device) -> dict[str, dict[str, str]]:
    """Each port's breakout mode: unbroken at its native speed (the catalogue lists the modes it also supports)."""
    return {p.name: {"brkout_mode": f"1x{p.speed_gbps}G"} for p in device.ports
            if f"1x{p.speed_gbps}G" in p.breakouts or not p.breakouts}


DEVICE_TYPE = {"rtsw": "BackEndToRRouter", "ctsw": "BackEndLeafRouter", "atsw": "BackEndSpineRouter",
               "fe-rsw": "ToRRouter", "fsw": "LeafRouter", "ssw": "SpineRouter"}
BASIC_COUNTERS = ("PORT", "QUEUE", "PG_WATERMARK", "QUEUE_WATERMARK", "PFCWD")


def neighbour_tables(neighbours: list[Neighbour], roles: dict[str, str]) -> dict[str, Any]:
    """DEVICE_NEIGHBOR (by local port: the far end's name and port id as it announces them over LLDP, as SONiC's
    minigraph writes it) and DEVICE_NEIGHBOR_METADATA (each neighbour's type); `roles`: each neighbour's role."""
    if not neighbours:
        return {}
    return {"DEVICE_NEIGHBOR": {n.port: {"name": n.system, "port": n.port_id, "local_port": n.port}
                                for n in neighbours},
            "DEVICE_NEIGHBOR_METADATA": {n.system: {"type": DEVICE_TYPE.get(roles.get(n.peer, ""), "Server")}
                                         for n in neighbours}}


def config_db(device: Device, model: SwitchModel, shared: bool = False) -> dict[str, Any]:
    """The device's Config DB as plain dicts (all values strings, as Config DB stores them).  `shared`: the QoS and
    buffer tables are dicts shared with other switches' (`qos.shared_qos_tables`): the caller must not change them.

    FRR runs from the rendered frr.conf alone: `split-unified` keeps SONiC's own FRR templates out (in `split` mode
    the container deletes frr.conf and loads per-daemon files), and there is no BGP_NEIGHBOR table, which would make
    bgpcfgd add peer groups and policies of its own.  The switch keeps its own base MAC (none is set here)."""
    r: Routing | None = device.routing
    assert r is not None, f"{device.name}: a SONiC switch has a routing intent"
    mtu = max((i.mtu for i in device.interfaces), default=9100)
    meta = {"hostname": device.name, "platform": model.platform.get("sonic", ""),
            "hwsku": model.hwsku.get("sonic", ""), "bgp_asn": str(r.asn), "type": DEVICE_TYPE[device.role],
            "buffer_model": "traditional", "docker_routing_config_mode": "split-unified",
            "default_pfcwd_status": "disable", "timezone": "UTC"}
    if device.plane == "backend":
        meta["resource_type"] = "ComputeAI"
    db: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": meta},
        "PORT": _ports(model, device, mtu),
        "BREAKOUT_CFG": _breakouts(device),
        "INTERFACE": {},
        "LOOPBACK_INTERFACE": {"Loopback0": {}},
        "FLEX_COUNTER_TABLE": {k: {"FLEX_COUNTER_STATUS": "enable"} for k in BASIC_COUNTERS},
    }
    for lo in (device.loopback4, device.loopback6):
        if lo:
            db["LOOPBACK_INTERFACE"][f"Loopback0|{lo}"] = {}
    for i in device.interfaces:
        _interface(db["INTERFACE"], i)
    if device.qos is not None and device.buffers is not None:
        db.update((shared_qos_tables if shared else qos_tables)(device, device.qos, device.buffers, model.buffering))
    if device.policy is not None:
        db.update(policy_tables(device.policy))
    if device.management is not None:
        db.update(mgmt_tables(device, device.management))
    return db


_row = json.JSONEncoder(sort_keys=True, separators=(", ", ": ")).encode
# (table, key) -> (row, its JSON): most rows (QoS, buffers, watchdog of a port) are equal on every switch of a model,
# and comparing two small dicts costs a fraction of encoding one.  Only rows of strings are cached (Config DB's own
# values), so equal rows always encode alike (1 == True would not).  Per process; bounded.
_ROW_TEXT: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
_ROW_CACHE_MAX = 200_000


_quote = json.encoder.encode_basestring_ascii


def _strings_text(row: dict[str, str]) -> str:
    """`_row(row)` of a row whose keys and values are all strings, without building a JSON encoder per row."""
    return "{" + ", ".join(f"{_quote(k)}: {_quote(row[k])}" for k in sorted(row)) + "}"


def _row_text(table: str, key: str, row: dict[str, Any]) -> tuple[str, bool]:
    """The row's line (without its comma), and whether it is a row of strings (equal to one, on a hit)."""
    hit = _ROW_TEXT.get((table, key))
    if hit is not None and hit[0] == row:
        return hit[1], True
    if type(key) is str and all(type(v) is str for v in row.values()) and all(type(k) is str for k in row):
        text = f"{_quote(key)}: {_strings_text(row)}"
        if len(_ROW_TEXT) < _ROW_CACHE_MAX:
            _ROW_TEXT[(table, key)] = (row, text)
        return text, True
    return f"{_row(key)}: {_row(row)}", False


# table -> (its rows, their lines): a whole table (QoS maps, buffers, a port's queues) is most often equal to the one
# of the switch before; kept only for tables of rows of strings, for the reason given at _ROW_TEXT
_TABLE_TEXT: dict[str, tuple[dict[str, Any], str]] = {}


def _flat_text(rows: dict[str, Any]) -> str | None:
    """`_table_text` of a table of rows of strings by one orjson call, where orjson writes what json writes: its text
    has no escape (no backslash: no quote, backslash or control character in a string), is ASCII (json escapes the
    rest, and DEL) and has no brace in a string (as many braces as rows and the table).  Then a quote only ever
    delimits a string, and `":"` or `","` starts at a string's closing quote (a separator) unless the string is ":"
    or "," (not written this way), so the separators are spaced as json spaces them; a row ends at a brace.  None where
    it cannot (then the rows are written one by one)."""
    for key, row in rows.items():
        if type(key) is not str or type(row) is not dict or key in _SEPARATORS:
            return None
        for k, v in row.items():
            if type(k) is not str or type(v) is not str or k in _SEPARATORS or v in _SEPARATORS:
                return None
    try:
        text = orjson.dumps(rows, option=orjson.OPT_SORT_KEYS)
    except TypeError:       # a string that is not UTF-8 (a lone surrogate)
        return None
    if (not text.isascii() or b"\\" in text or b"\x7f" in text or text.count(b"{") != len(rows) + 1
            or text.count(b"}") != len(rows) + 1):
        return None
    return "  " + text.decode()[1:-1].replace('":"', '": "').replace('","', '", "').replace(
        '":{', '": {').replace('},"', '},\n  "')


_SEPARATORS = (":", ",")


def _table_text(table: str, rows: dict[str, Any]) -> str:
    hit = _TABLE_TEXT.get(table)
    if hit is not None and hit[0] == rows:
        return hit[1]
    text = _flat_text(rows)
    if text is not None:
        if len(_TABLE_TEXT) < _ROW_CACHE_MAX:
            _TABLE_TEXT[table] = (rows, text)
        return text
    keys = sorted(rows)
    last = len(keys) - 1
    lines = []
    strings = True
    for n, k in enumerate(keys):
        line, kept = _row_text(table, k, rows[k])
        strings = strings and kept
        lines.append(f"  {line}{',' if n < last else ''}")
    text = "\n".join(lines)
    if strings and len(_TABLE_TEXT) < _ROW_CACHE_MAX:
        _TABLE_TEXT[table] = (rows, text)
    return text


def dump_config_db(db: dict[str, Any]) -> str:
    """JSON with one Config DB row per line (so a review diff shows exactly the rows that changed)."""
    out = ["{"]
    tables = sorted(db)
    for t, table in enumerate(tables):
        rows = db[table]
        out.append(f" {_row(table)}: {{")
        if rows:
            out.append(_table_text(table, rows))
        out.append(" }" + ("," if t < len(tables) - 1 else ""))
    out.append("}")
    return "\n".join(out) + "\n"


def _interface(table: dict[str, Any], i: Interface) -> None:
    table[i.name] = {}
    for addr in (i.ipv4, i.ipv6):
        if addr:
            table[f"{i.name}|{addr}"] = {}
