"""fabric.json: the whole Fabric, written so that `load_fabric(dump_fabric(f)) == f`.

Layout (one record per line, so a review diff shows the devices and links that changed):

    {"fabric": {cluster, site, backend, format, oversubscription_targets, qos, management, models, columns},
     "devices": [one device per line: placement, ASN, loopbacks, management address, prefixes, flags],
     "routing": [one switch per line: its routing intent; peer groups and neighbours as rows of `columns`],
     "links":   [one link per line: kind, speed, medium, MTU, both ends with port ordinal and addresses]}

Interfaces are not written: they are the links seen from each end, and loading rebuilds them in link order (the order
the design wired them).  A device's full port map comes from its model, which is written under "models".
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from teton.catalogue.ports import port_map
from teton.fabric.intent import (
    BgpTimers,
    Ecn,
    Management,
    Neighbor,
    PeerGroup,
    PfcWatchdog,
    Qos,
    Queue,
    Routing,
)
from teton.fabric.model import Device, End, Fabric, Interface, Link
from teton.spec.model import SwitchModel

FORMAT = 2
GROUP_COLUMNS = ("name", "family", "direction", "passive")
NEIGHBOR_COLUMNS = ("address", "family", "remote_as", "group", "interface", "local_address", "peer")

_dump = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False).encode


class FabricFormatError(ValueError):
    """fabric.json is not what `dump_fabric` writes; the message names the record."""


# ----------------------------------------------------------------------------------------------------------- writing


def _qos(q: Qos) -> dict[str, Any]:
    return {"roce_dscp": q.roce_dscp, "cnp_dscp": q.cnp_dscp, "lossless_priority": q.lossless_priority,
            "cnp_priority": q.cnp_priority, "dscp_to_tc": list(q.dscp_to_tc), "pfc_priorities": list(q.pfc_priorities),
            "queues": [[x.tc, x.role, x.strict, x.weight] for x in q.queues],
            "ecn": None if q.ecn is None else {"min_kbytes": q.ecn.min_kbytes, "max_kbytes": q.ecn.max_kbytes,
                                               "mark_percent": q.ecn.mark_percent},
            "watchdog": None if q.watchdog is None else {
                "detection_ms": q.watchdog.detection_ms, "restoration_ms": q.watchdog.restoration_ms,
                "poll_ms": q.watchdog.poll_ms, "action": q.watchdog.action}}


def _management(m: Management) -> dict[str, Any]:
    return {"vrf": m.vrf, "gateway": m.gateway, "prefixes": list(m.prefixes), "ntp_servers": list(m.ntp_servers),
            "syslog_servers": list(m.syslog_servers), "aaa_protocol": m.aaa_protocol,
            "aaa_servers": list(m.aaa_servers), "aaa_key_secret": m.aaa_key_secret, "telemetry": m.telemetry,
            "snmpv3_user": m.snmpv3_user, "snmpv3_auth_secret": m.snmpv3_auth_secret,
            "snmpv3_priv_secret": m.snmpv3_priv_secret}


def _device(d: Device) -> dict[str, Any]:
    return {"name": d.name, "role": d.role, "model": d.model, "nos": d.nos, "plane": d.plane, "zone": d.zone,
            "rack": d.rack, "ru": d.ru, "height_ru": d.height_ru, "asn": d.asn, "loopback4": d.loopback4,
            "loopback6": d.loopback6, "router_id": d.router_id, "mgmt": d.mgmt, "prefixes4": list(d.prefixes4),
            "prefixes6": list(d.prefixes6), "power_w": d.power_w, "ports_used": len(d.interfaces),
            "attrs": dict(d.attrs), "qos": d.qos is not None, "management": d.management is not None}


def _routing(name: str, r: Routing) -> dict[str, Any]:
    return {"device": name, "asn": r.asn, "router_id": r.router_id, "maximum_paths": r.maximum_paths,
            "timers": {"keepalive": r.timers.keepalive, "hold": r.timers.hold,
                       "connect_retry": r.timers.connect_retry},
            "bfd": r.bfd, "password_secret": r.password_secret, "loopback4": r.loopback4, "loopback6": r.loopback6,
            "aggregates4": list(r.aggregates4), "aggregates6": list(r.aggregates6), "transit": r.transit,
            "groups": [[g.name, g.family, g.direction, g.passive] for g in r.groups],
            "neighbors": [[n.address, n.family, n.remote_as, n.group, n.interface, n.local_address, n.peer]
                          for n in r.neighbors]}


def _end(e: End, ordinal: int) -> dict[str, Any]:
    return {"device": e.device, "port": e.port, "ordinal": ordinal, "ipv4": e.ipv4, "ipv6": e.ipv6}


def _link(link: Link, index: Mapping[tuple[str, str], int]) -> dict[str, Any]:
    return {"kind": link.kind, "speed_gbps": link.speed_gbps, "medium": link.medium, "mtu": link.mtu,
            "zone": link.zone, "rack": link.rack, "a": _end(link.a, index[(link.a.device, link.a.port)]),
            "b": _end(link.b, index[(link.b.device, link.b.port)])}


def dump_fabric(f: Fabric) -> str:
    """fabric.json text of `f` (deterministic: sorted keys, devices by name, links in design order)."""
    head = {"cluster": f.name, "site": f.site, "backend": f.backend, "format": FORMAT,
            "oversubscription_targets": dict(f.targets),
            "qos": None if f.qos is None else _qos(f.qos),
            "management": None if f.management is None else _management(f.management),
            "models": {n: m.model_dump(mode="json") for n, m in sorted(f.models.items())},
            "columns": {"groups": list(GROUP_COLUMNS), "neighbors": list(NEIGHBOR_COLUMNS)},
            "duplicate_names": list(f.duplicate_names)}
    index = {(d.name, i.name): i.ordinal for d in f.devices.values() for i in d.interfaces}
    names = sorted(f.devices)
    routed = [n for n in names if f.devices[n].routing is not None]
    parts = ['{"fabric":', _dump(head), ',\n"devices":[\n',
             ",\n".join(_dump(_device(f.devices[n])) for n in names),
             '\n],\n"routing":[\n',
             ",\n".join(_dump(_routing(n, f.devices[n].routing)) for n in routed),  # type: ignore[arg-type]
             '\n],\n"links":[\n',
             ",\n".join(_dump(_link(link, index)) for link in f.links),
             "\n]}\n"]
    return "".join(parts)


# ----------------------------------------------------------------------------------------------------------- reading


def _load_qos(q: dict[str, Any]) -> Qos:
    e, w = q["ecn"], q["watchdog"]
    return Qos(q["roce_dscp"], q["cnp_dscp"], q["lossless_priority"], q["cnp_priority"], tuple(q["dscp_to_tc"]),
               tuple(q["pfc_priorities"]), tuple(Queue(*x) for x in q["queues"]),
               None if e is None else Ecn(e["min_kbytes"], e["max_kbytes"], e["mark_percent"]),
               None if w is None else PfcWatchdog(w["detection_ms"], w["restoration_ms"], w["poll_ms"], w["action"]))


def _load_management(m: dict[str, Any]) -> Management:
    return Management(m["vrf"], m["gateway"], tuple(m["prefixes"]), tuple(m["ntp_servers"]),
                      tuple(m["syslog_servers"]), m["aaa_protocol"], tuple(m["aaa_servers"]), m["aaa_key_secret"],
                      m["telemetry"], m["snmpv3_user"], m["snmpv3_auth_secret"], m["snmpv3_priv_secret"])


def _load_routing(r: dict[str, Any]) -> Routing:
    t = r["timers"]
    return Routing(r["asn"], r["router_id"], tuple(PeerGroup(*g) for g in r["groups"]),
                   tuple(Neighbor(*n) for n in r["neighbors"]), r["maximum_paths"],
                   BgpTimers(t["keepalive"], t["hold"], t["connect_retry"]), r["bfd"], r["password_secret"],
                   r["loopback4"], r["loopback6"], tuple(r["aggregates4"]), tuple(r["aggregates6"]), r["transit"])


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
        head = data["fabric"]
        if head.get("format") != FORMAT:
            raise FabricFormatError(f"fabric.json format {head.get('format')!r}; this teton reads format {FORMAT} "
                                    "(render the spec again)")
        models = {n: SwitchModel.model_validate(m) for n, m in head["models"].items()}
        qos = None if head["qos"] is None else _load_qos(head["qos"])
        mgmt = None if head["management"] is None else _load_management(head["management"])
        routing: dict[str, Routing] = {}
        for k, r in enumerate(data["routing"]):
            where = f"routing[{k}]"
            routing[r["device"]] = _load_routing(r)
        interfaces: dict[str, list[Interface]] = {}
        links: list[Link] = []
        for k, x in enumerate(data["links"]):
            where = f"links[{k}]"
            a, b = x["a"], x["b"]
            link = Link(x["kind"], End(a["device"], a["port"], a["ipv4"], a["ipv6"]),
                        End(b["device"], b["port"], b["ipv4"], b["ipv6"]), x["speed_gbps"], x["medium"], x["mtu"],
                        x["zone"], x["rack"])
            links.append(link)
            for me, other, direction in ((a, b, "up"), (b, a, "down")):
                interfaces.setdefault(me["device"], []).append(Interface(
                    me["port"], me["ordinal"], link.speed_gbps, link.mtu, link.kind, link.medium, other["device"],
                    other["port"], me["ipv4"], me["ipv6"], _host(other["ipv4"]), _host(other["ipv6"]), direction))
        devices: dict[str, Device] = {}
        for k, d in enumerate(data["devices"]):
            where = f"devices[{k}]"
            model = models.get(d["model"])
            devices[d["name"]] = Device(
                d["name"], d["role"], d["model"], d["nos"], d["zone"], d["rack"], d["ru"], d["height_ru"], d["plane"],
                d["asn"], d["loopback4"], d["loopback6"], d["router_id"], d["mgmt"], tuple(d["prefixes4"]),
                tuple(d["prefixes6"]), d["power_w"], tuple(interfaces.get(d["name"], ())),
                port_map(model) if model is not None else (), MappingProxyType(dict(d["attrs"])),
                routing.get(d["name"]), qos if d["qos"] else None, mgmt if d["management"] else None)
        where = "fabric"
        return Fabric(head["cluster"], head["site"], head["backend"], MappingProxyType(devices), tuple(links),
                      MappingProxyType(models), qos, mgmt, MappingProxyType(dict(head["oversubscription_targets"])),
                      tuple(head.get("duplicate_names", ())))
    except FabricFormatError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise FabricFormatError(f"{where}: {type(exc).__name__}: {exc}") from None
