"""fabric.json: the whole Fabric, written so that `load_fabric(dump_fabric(f)) == f`.

Layout (one record per line, so a review diff shows the devices and links that changed):

    {"fabric": {cluster, site, backend, format, oversubscription_targets, qos, management, policy, buffers, models},
     "devices": [one device per line: placement, ASN, loopbacks, management address, prefixes, which intents it has
                 (its buffers by index into fabric.buffers: switches of one model share them)],
     "routing": [one switch per line: its routing intent; peer groups and neighbours as lists of their fields],
     "links":   [one link per line: kind, speed, medium, MTU, both ends with port ordinal and addresses]}

Interfaces are not written: they are the links seen from each end, and loading rebuilds them in link order (the order
the design wired them).  A device's full port map comes from its model, which is written under "models".
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar

import orjson

from teton.catalogue.ports import port_map
from teton.fabric import subnet
from teton.fabric.codec import from_json, to_json, to_json_exact
from teton.fabric.floor import FloorPlan
from teton.fabric.hostplan_json import dump_hosts, load_hosts
from teton.fabric.intent import Buffers, ManagementIntent, MonitoringIntent, Qos, Routing, SwitchPolicy
from teton.fabric.model import Device, End, Fabric, Interface, Link
from teton.findings import TetonError
from teton.spec.model import SwitchModel

FORMAT = 3
T = TypeVar("T")

_dump = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False).encode


def exact_dump(data: Any, exact: bool) -> str:
    """`_dump(data)`, the same text, by orjson (5x faster: the 24k's routing records 0.21 s -> 0.04 s) where `exact`
    (`to_json_exact`: only dicts with str keys, lists, str, int, bool, None, of their exact types; no float) and
    orjson's text is ASCII with no backslash and no DEL: then no string needed an escape in either encoder, both sort
    keys in code point order (orjson by UTF-8 bytes: the same order) and write the same tokens (an int beyond 64 bits
    orjson refuses: json writes it).  tests/fabric/test_serialize_exact.py compares both on random records."""
    if exact:
        try:
            raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS | orjson.OPT_PASSTHROUGH_SUBCLASS
                               | orjson.OPT_PASSTHROUGH_DATACLASS)
        except TypeError:       # orjson.JSONEncodeError is a TypeError
            raw = b"\\"
        if raw.isascii() and b"\\" not in raw and b"\x7f" not in raw:
            return raw.decode()
    return _dump(data)


class FabricFormatError(ValueError, TetonError):
    """fabric.json is not what `dump_fabric` writes; the message names the record."""


# ----------------------------------------------------------------------------------------------------------- intents
# Intents go through the generic codec (`teton.fabric.codec`): a new intent field needs no code here.


def _intent(cls: type[T], data: Any) -> T | None:
    return None if data is None else typing.cast(T, from_json(cls, data))


# ----------------------------------------------------------------------------------------------------------- writing


def _device(d: Device, buffers: dict[int, int]) -> dict[str, Any]:
    return {"name": d.name, "role": d.role, "model": d.model, "nos": d.nos, "plane": d.plane, "zone": d.zone,
            "rack": d.rack, "ru": d.ru, "height_ru": d.height_ru, "asn": d.asn, "loopback4": d.loopback4,
            "loopback6": d.loopback6, "router_id": d.router_id, "mgmt": d.mgmt, "prefixes4": list(d.prefixes4),
            "prefixes6": list(d.prefixes6), "power_w": d.power_w, "ports_used": len(d.interfaces),
            "attrs": dict(d.attrs), "qos": d.qos is not None, "management": d.management is not None,
            "policy": d.policy is not None, "buffers": None if d.buffers is None else buffers[id(d.buffers)]}


def _routing(name: str, r: Routing) -> dict[str, Any]:
    return {"device": name, **to_json(r)}


def _routing_text(name: str, r: Routing) -> str:
    """`_dump(_routing(name, r))`."""
    data, exact = to_json_exact(r)
    return exact_dump({"device": name, **data}, exact and type(name) is str and type(data) is dict)


def _end(e: End, ordinal: int) -> dict[str, Any]:
    return {"device": e.device, "port": e.port, "ordinal": ordinal, "ipv4": e.ipv4, "ipv6": e.ipv6}


def _link(link: Link, index: Mapping[tuple[str, str], int]) -> dict[str, Any]:
    return {"kind": link.kind, "speed_gbps": link.speed_gbps, "medium": link.medium, "mtu": link.mtu,
            "zone": link.zone, "rack": link.rack, "a": _end(link.a, index[(link.a.device, link.a.port)]),
            "b": _end(link.b, index[(link.b.device, link.b.port)])}


_EXACT = frozenset({str, int, bool, type(None)})
_STR_KEYS = frozenset({str})


def _flat_exact(record: dict[str, Any]) -> bool:
    """Whether `record` (a link's) holds only str keys and leaves of `_EXACT` types, or dicts of those (its ends):
    what `exact_dump` may write by orjson."""
    kinds = set(map(type, record.values()))
    if dict in kinds:
        kinds.discard(dict)
        for v in record.values():
            if type(v) is dict and not (set(map(type, v.values())) <= _EXACT and set(map(type, v)) <= _STR_KEYS):
                return False
    return kinds <= _EXACT and set(map(type, record)) <= _STR_KEYS


def _link_text(link: Link, index: Mapping[tuple[str, str], int]) -> str:
    """`_dump(_link(link, index))`."""
    record = _link(link, index)
    return exact_dump(record, _flat_exact(record))


def dump_fabric(f: Fabric) -> str:
    """fabric.json text of `f` (deterministic: sorted keys, devices by name, links in design order)."""
    shared: list[Buffers] = []
    ids: dict[int, int] = {}
    for d in f.devices.values():
        if d.buffers is not None and id(d.buffers) not in ids:
            ids[id(d.buffers)] = len(shared)
            shared.append(d.buffers)
    head = {"cluster": f.name, "site": f.site, "backend": f.backend, "format": FORMAT,
            "oversubscription_targets": dict(f.oversubscription_goals), "qos": to_json(f.qos),
            "management": to_json(f.management), "policy": to_json(f.policy),
            "buffers": [to_json(b) for b in shared],
            "models": {n: m.model_dump(mode="json") for n, m in sorted(f.models.items())},
            "duplicate_names": list(f.duplicate_names)}
    if f.floor is not None:
        head["floor"] = to_json(f.floor)
    if f.monitoring is not None:
        head["monitoring"] = to_json(f.monitoring)
    if f.subnet_manager is not None:   # InfiniBand only, so a RoCE fabric.json is as it was
        head["subnet_manager"] = subnet.to_json(f.subnet_manager)
    index = {(d.name, i.name): i.ordinal for d in (*f.devices.values(), *f.externals.values()) for i in d.interfaces}
    names = sorted(f.devices)
    routed = [n for n in names if f.devices[n].routing is not None]
    parts = ['{"fabric":', _dump(head), ',\n"devices":[\n',
             ",\n".join(_dump(_device(f.devices[n], ids)) for n in names),
             '\n],\n"routing":[\n',
             ",\n".join(_routing_text(n, f.devices[n].routing) for n in routed),  # type: ignore[arg-type]
             '\n],\n"links":[\n',
             ",\n".join(_link_text(link, index) for link in f.links),
             "\n]"]
    if f.externals:   # a site member's: only then, so a cluster's fabric.json is as it was
        parts += [',\n"externals":[\n', ",\n".join(_dump(_device(f.externals[n], ids)) for n in sorted(f.externals)),
                  "\n]"]
    parts += [dump_hosts(f.hosts, {n: d.host for n, d in f.devices.items()}), "}\n"]
    return "".join(parts)


# ----------------------------------------------------------------------------------------------------------- reading


_OPT_STR = (str, type(None))
_OPT_INT = (int, type(None))
# each record's fields by the JSON types `dump_fabric` writes (a bool is no int): checked on load, so a field of the
# wrong type is refused naming its path, never a traceback in a reader (or HTML in a report's number column)
_HEAD_TYPES: dict[str, tuple[type, ...]] = {"cluster": (str,), "site": (str,), "backend": (str,)}
DEVICE_TYPES: dict[str, tuple[type, ...]] = {
    "name": (str,), "role": (str,), "model": (str,), "nos": _OPT_STR, "plane": (str,), "zone": _OPT_INT,
    "rack": (str,), "ru": (int,), "height_ru": (int,), "asn": _OPT_INT, "loopback4": _OPT_STR, "loopback6": _OPT_STR,
    "router_id": _OPT_STR, "mgmt": _OPT_STR, "prefixes4": (list,), "prefixes6": (list,), "power_w": (int, float),
    "attrs": (dict,), "qos": (bool,), "management": (bool,), "policy": (bool,), "buffers": _OPT_INT}
_LINK_TYPES: dict[str, tuple[type, ...]] = {"kind": (str,), "speed_gbps": (int,), "medium": (str,), "mtu": (int,),
                                           "zone": _OPT_INT, "rack": (str,), "a": (dict,), "b": (dict,)}
_END_TYPES: dict[str, tuple[type, ...]] = {"device": (str,), "port": (str,), "ordinal": (int,), "ipv4": _OPT_STR,
                                          "ipv6": _OPT_STR}


def typed(record: Any, types: Mapping[str, tuple[type, ...]], where: str) -> Any:
    """`record` once each of its fields in `types` is there and of its type; FabricFormatError naming the path."""
    if not isinstance(record, dict):
        raise FabricFormatError(f"{where}: expected an object, got {type(record).__name__}")
    for key, allowed in types.items():
        if key not in record:
            raise FabricFormatError(f"{where}.{key}: missing")
        value = record[key]
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            names = " or ".join("null" if t is type(None) else t.__name__ for t in allowed)
            raise FabricFormatError(f"{where}.{key}: expected {names}, got {type(value).__name__} "
                                    f"{str(value)[:40]!r}")
    for key in ("prefixes4", "prefixes6"):
        if key in types and not all(isinstance(v, str) for v in record[key]):
            raise FabricFormatError(f"{where}.{key}: expected a list of strings")
    return record


def _host(cidr: str | None) -> str | None:
    return None if cidr is None else cidr.split("/", 1)[0]


def load_fabric(text: str) -> Fabric:
    """The Fabric written as `text` by `dump_fabric`; FabricFormatError naming the record that does not fit."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise FabricFormatError(f"not JSON: {exc}") from None
    where = "fabric"
    try:
        if not isinstance(data, dict):
            raise FabricFormatError(f"expected an object, got {type(data).__name__}")
        head = typed(data["fabric"], {}, "fabric")
        if head.get("format") != FORMAT:
            raise FabricFormatError(f"fabric.json format {head.get('format')!r}; this teton reads format {FORMAT} "
                                    "(render the spec again)")
        typed(head, _HEAD_TYPES, "fabric")
        models = {n: SwitchModel.model_validate(m) for n, m in head["models"].items()}
        qos = _intent(Qos, head["qos"])
        mgmt = _intent(ManagementIntent, head["management"])
        policy = _intent(SwitchPolicy, head["policy"])
        shared = [from_json(Buffers, b) for b in head["buffers"]]
        routing: dict[str, Routing] = {}
        for k, r in enumerate(data["routing"]):
            where = f"routing[{k}]"
            routing[r["device"]] = from_json(Routing, r)
        interfaces: dict[str, list[Interface]] = {}
        links: list[Link] = []
        for k, x in enumerate(data["links"]):
            where = f"links[{k}]"
            typed(x, _LINK_TYPES, where)
            a, b = typed(x["a"], _END_TYPES, f"{where}.a"), typed(x["b"], _END_TYPES, f"{where}.b")
            link = Link(x["kind"], End(a["device"], a["port"], a["ipv4"], a["ipv6"]),
                        End(b["device"], b["port"], b["ipv4"], b["ipv6"]), x["speed_gbps"], x["medium"], x["mtu"],
                        x["zone"], x["rack"])
            links.append(link)
            for me, other, direction in ((a, b, "up"), (b, a, "down")):
                interfaces.setdefault(me["device"], []).append(Interface(
                    me["port"], me["ordinal"], link.speed_gbps, link.mtu, link.kind, link.medium, other["device"],
                    other["port"], me["ipv4"], me["ipv6"], _host(other["ipv4"]), _host(other["ipv6"]), direction))
        where = "hosts"
        hosts, plans = load_hosts(data)
        devices: dict[str, Device] = {}
        externals: dict[str, Device] = {}
        records = [("devices", k, d, devices) for k, d in enumerate(data["devices"])]
        records += [("externals", k, d, externals) for k, d in enumerate(data.get("externals", ()))]
        for key, k, d, into in records:
            where = f"{key}[{k}]"
            typed(d, DEVICE_TYPES, where)
            if d["name"] in devices or d["name"] in externals:
                raise FabricFormatError(f"fabric.json {where}: device {str(d['name'])[:80]!r} is listed twice")
            model = models.get(d["model"])
            into[d["name"]] = Device(
                d["name"], d["role"], d["model"], d["nos"], d["zone"], d["rack"], d["ru"], d["height_ru"], d["plane"],
                d["asn"], d["loopback4"], d["loopback6"], d["router_id"], d["mgmt"], tuple(d["prefixes4"]),
                tuple(d["prefixes6"]), d["power_w"], tuple(interfaces.get(d["name"], ())),
                port_map(model, d["nos"]) if model is not None and d["nos"] is not None else (),
                MappingProxyType(dict(d["attrs"])), routing.get(d["name"]), qos if d["qos"] else None,
                mgmt if d["management"] else None, None if d["buffers"] is None else shared[d["buffers"]],
                policy if d["policy"] else None, plans.get(d["name"]))
        where = "fabric"
        return Fabric(name=head["cluster"], site=head["site"], backend=head["backend"],
                      devices=MappingProxyType(devices), links=tuple(links), models=MappingProxyType(models), qos=qos,
                      management=mgmt, policy=policy,
                      oversubscription_goals=MappingProxyType(dict(head["oversubscription_targets"])),
                      duplicate_names=tuple(head.get("duplicate_names", ())), hosts=hosts,
                      subnet_manager=None if head.get("subnet_manager") is None
                      else subnet.from_json(head["subnet_manager"]),
                      floor=_intent(FloorPlan, head.get("floor")),
                      monitoring=_intent(MonitoringIntent, head.get("monitoring")),
                      externals=MappingProxyType(externals))
    except FabricFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise FabricFormatError(f"{where}: {type(exc).__name__}: {exc}") from None
