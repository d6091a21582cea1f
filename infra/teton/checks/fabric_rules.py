"""Rules over the Fabric: what must hold of the designed cluster.  Each rule is a small named function.

Findings point at the spec path that a user changes to fix them and name the devices involved.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator

from teton.checks.floor_rules import rack_power
from teton.checks.physical_rules import physical
from teton.design.buffers import cable_m
from teton.design.roce import RACK_UNITS
from teton.fabric.model import Fabric
from teton.fabric.physical import tier_path
from teton.fabric.plan import oversubscription
from teton.fabric.roles import of_tier
from teton.findings import Finding
from teton.spec.model import Cluster

FabricRule = Callable[[Fabric, str], Iterator[Finding]]
_PLANE_PATH = {"backend": "backend", "frontend": "frontend"}
TOLERANCE = 0.10  # oversubscription may differ from its target by this fraction


def duplicate_names(f: Fabric, file: str) -> Iterator[Finding]:
    """Two devices, or two ports of one device, carry the same name."""
    for name in f.duplicate_names:
        yield Finding(file, "", f"device name {name!r} is used twice", rule="duplicate-name")
    for d in f.devices.values():
        seen: set[str] = set()
        for i in d.interfaces:
            if i.name in seen:
                yield Finding(file, _PLANE_PATH[d.plane], f"{d.name}: port {i.name} is cabled twice",
                              rule="duplicate-name")
            seen.add(i.name)


def _asn_group(role: str, zone: int | None, name: str) -> tuple[object, ...]:
    """Devices that may share an ASN by design (RFC 7938): the ATSWs; the front-end spines; the CTSWs of one zone;
    the FSWs of one zone."""
    if role in of_tier("aggregation"):
        return (role,)
    if role in of_tier("spine"):
        return (role, zone)
    return (name,)


def asn_clash(f: Fabric, file: str) -> Iterator[Finding]:
    """An ASN is used by devices that must not share it (two RTSWs, or devices of different tiers)."""
    groups: dict[int, dict[tuple[object, ...], list[str]]] = defaultdict(lambda: defaultdict(list))
    for d in f.devices.values():
        if d.asn is not None:
            groups[d.asn][_asn_group(d.role, d.zone, d.name)].append(d.name)
    for asn in sorted(groups):
        g = groups[asn]
        if len(g) > 1:
            parts = []
            for members in sorted(g.values()):
                more = f" (and {len(members) - 1} more of its group)" if len(members) > 1 else ""
                parts.append(sorted(members)[0] + more)
            plane = f.devices[sorted(g.values())[0][0]].plane
            yield Finding(file, f"{_PLANE_PATH[plane]}.asn", f"ASN {asn} is shared by {', '.join(parts)}",
                          rule="asn-clash")


def loopback_clash(f: Fabric, file: str) -> Iterator[Finding]:
    """Two devices have the same loopback or router-id, or a loopback is also a link address."""
    owners: dict[str, list[str]] = defaultdict(list)
    rids: dict[str, list[str]] = defaultdict(list)
    for d in f.devices.values():
        for lo in (d.loopback4, d.loopback6):
            if lo:
                owners[lo.split("/")[0]].append(d.name)
        if d.router_id:
            rids[d.router_id].append(d.name)
    for addr, names in sorted(owners.items()):
        if len(names) > 1:
            yield Finding(file, "addressing", f"loopback {addr} is on {', '.join(sorted(names))}",
                          rule="loopback-clash")
    for rid, names in sorted(rids.items()):
        if len(names) > 1:
            yield Finding(file, "addressing", f"router-id {rid} is on {', '.join(sorted(names))}",
                          rule="loopback-clash")
    for link in f.links:
        for end in (link.a, link.b):
            for cidr in (end.ipv4, end.ipv6):
                if cidr and cidr.split("/")[0] in owners:
                    yield Finding(file, "addressing", f"{end.device} {end.port} address {cidr} is also the loopback "
                                  f"of {owners[cidr.split('/')[0]][0]}: the loopback and link pools overlap",
                                  rule="loopback-clash")


def link_mismatch(f: Fabric, file: str) -> Iterator[Finding]:
    """The two ends of a link disagree on speed or MTU, or a port is slower than its link.  The ends' text and the
    plane are spelled only for a link that disagrees (the b end is a device of `f`: its port was found)."""
    by_port = {(d.name, i.name): i for d in f.devices.values() for i in d.interfaces}
    for link in f.links:
        ia, ib = by_port.get((link.a.device, link.a.port)), by_port.get((link.b.device, link.b.port))
        if ia is None or ib is None or (ia.speed_gbps == ib.speed_gbps and ia.mtu == ib.mtu):
            continue
        where = f"{link.a.device} {link.a.port} <-> {link.b.device} {link.b.port}"
        plane = _PLANE_PATH[f.device(link.b.device).plane]
        if ia.speed_gbps != ib.speed_gbps:
            yield Finding(file, plane, f"{where}: speed {ia.speed_gbps}G vs {ib.speed_gbps}G", rule="speed-mismatch")
        if ia.mtu != ib.mtu:
            yield Finding(file, f"{plane}.mtu", f"{where}: MTU {ia.mtu} vs {ib.mtu}", rule="mtu-mismatch")


def oversubscription_off_goal(f: Fabric, file: str) -> Iterator[Finding]:
    """A tier's downlink:uplink capacity ratio, computed from the Fabric, is off the spec's `oversubscription` (its
    goal) by >10 %."""
    actual = oversubscription(f)
    for tier, goal in sorted(f.oversubscription_goals.items()):
        got = actual.get(tier)
        if got is not None and abs(got - goal) > TOLERANCE * goal:
            yield Finding(file, f"backend.{tier}.oversubscription", f"target {goal:g}:1 but the fabric gives "
                          f"{got:.3g}:1", rule="oversubscription")


def headroom_overcommitted(f: Fabric, file: str) -> Iterator[Finding]:
    """A switch's lossless headroom (one PFC headroom per cabled port) exceeds the shared headroom pool of its
    ASIC's buffer: under a storm on every port, pause would come too late."""
    seen: set[str] = set()
    for d in f.devices.values():
        b = d.buffers
        if b is None or d.model in seen:
            continue
        xoff = {(p.speed_gbps, p.cable_m): p.xoff for p in b.profiles}
        need = sum(xoff.get((i.speed_gbps, cable_m(i.medium)), 0) for i in d.interfaces)
        if need > b.ingress_xoff_pool:
            seen.add(d.model)
            yield Finding(file, "backend", f"{d.name} ({d.model}) needs {need:,} bytes of PFC headroom for its "
                          f"{len(d.interfaces)} lossless ports but its headroom pool holds {b.ingress_xoff_pool:,}: a "
                          "model with more buffer, or fewer or shorter links", rule="buffer")


def rack_elevation(f: Fabric, file: str) -> Iterator[Finding]:
    """Two devices of a rack take the same rack unit, or a device goes past the rack's height (each takes its
    model's height from its lowest RU)."""
    racks: dict[str, list[tuple[int, int, str]]] = defaultdict(list)
    for d in f.devices.values():
        racks[d.rack].append((d.ru, d.ru + d.height_ru - 1, d.name))
    for rack in sorted(racks):
        units = sorted(racks[rack])
        for lo, hi, name in units:
            if lo < 1 or hi > RACK_UNITS:
                yield Finding(file, _PLANE_PATH[f.devices[name].plane], f"{name} takes RU {lo}-{hi} of {rack}, past "
                              f"the rack's {RACK_UNITS} units", rule="rack-elevation")
        for (lo1, hi1, a), (lo2, hi2, b) in zip(units, units[1:], strict=False):
            if lo2 <= hi1:
                yield Finding(file, _PLANE_PATH[f.devices[b].plane], f"{a} (RU {lo1}-{hi1}) and {b} (RU {lo2}-{hi2}) "
                              f"overlap in {rack}", rule="rack-elevation")


def unprotected_sessions(f: Fabric, file: str) -> Iterator[Finding]:
    """A tier whose BGP sessions have neither a password (TCP-MD5, RFC 2385) nor GTSM (RFC 5082): anyone on a link,
    or anyone routed to it, can open or reset them."""
    tiers: dict[str, list[str]] = defaultdict(list)
    for d in f.devices.values():
        r = d.routing
        if r is not None and r.neighbors and r.password_secret is None and r.ttl_security_hops is None:
            tiers[tier_path(d.role)].append(d.name)
    for tier, names in sorted(tiers.items()):
        plane = tier.split(".")[0]
        where = "backend.bgp" if plane == "backend" else "frontend"
        yield Finding(file, tier, f"the BGP sessions of the {tier} switches ({len(names)}, e.g. {min(names)}) have "
                      f"neither a password nor GTSM: set {where}.password_secret or {where}.ttl_security_hops (1)",
                      rule="bgp-unprotected", severity="warning")


FABRIC_RULES: tuple[FabricRule, ...] = (duplicate_names, asn_clash, loopback_clash, link_mismatch,
                                        oversubscription_off_goal, headroom_overcommitted, rack_elevation, rack_power,
                                        physical, unprotected_sessions)


def drain_unknown(c: Cluster, f: Fabric, file: str) -> Iterator[Finding]:
    """A switch named for maintenance drain that the fabric does not have (a typo would leave it in service)."""
    be = c.backend
    for k, name in enumerate(getattr(be, "drain", ())):
        d = f.devices.get(name)
        if d is None or d.routing is None:
            yield Finding(file, f"backend.drain[{k}]", f"{name!r} is no switch of this fabric", rule="drain")


DESIGN_RULES = (drain_unknown,)
