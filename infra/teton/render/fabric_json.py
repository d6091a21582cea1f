"""fabric.json: the whole Fabric (devices, links, addresses, ASNs, placement, QoS intent), one record per line."""

from __future__ import annotations

import json
from typing import Any

from teton.design.fabric import Device, Fabric, Link
from teton.render.context import RenderContext

NAME = "fabric"


def _device(d: Device) -> dict[str, Any]:
    return {"name": d.name, "role": d.role, "model": d.model, "nos": d.nos, "plane": d.plane, "zone": d.zone,
            "rack": d.rack, "ru": d.ru, "height_ru": d.height_ru, "asn": d.asn, "loopback4": d.loopback4,
            "loopback6": d.loopback6, "router_id": d.router_id, "mgmt": d.mgmt,
            "prefixes4": d.prefixes4, "prefixes6": d.prefixes6,
            "power_w": d.power_w, "ports_used": len(d.interfaces), "attrs": d.attrs}


def _link(link: Link) -> dict[str, Any]:
    return {"kind": link.kind, "speed_gbps": link.speed_gbps, "medium": link.medium, "mtu": link.mtu,
            "zone": link.zone, "rack": link.rack,
            "a": {"device": link.a.device, "port": link.a.port, "ipv4": link.a.ipv4, "ipv6": link.a.ipv6},
            "b": {"device": link.b.device, "port": link.b.port, "ipv4": link.b.ipv4, "ipv6": link.b.ipv6}}


def render(fabric: Fabric, ctx: RenderContext) -> dict[str, str]:
    dump = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
    head = {"cluster": fabric.name, "site": fabric.site, "backend": fabric.backend, "qos": fabric.qos,
            "bgp": fabric.bgp, "management": fabric.management, "oversubscription_targets": fabric.targets}
    parts = ['{"fabric":', dump(head), ',\n"devices":[\n']
    parts.append(",\n".join(dump(_device(fabric.devices[n])) for n in sorted(fabric.devices)))
    parts.append('\n],\n"links":[\n')
    parts.append(",\n".join(dump(_link(link)) for link in fabric.links))
    parts.append("\n]}\n")
    return {"fabric.json": "".join(parts)}
