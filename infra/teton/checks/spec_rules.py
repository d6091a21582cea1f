"""Rules over the Spec: what must hold before a Fabric can be designed.  Each rule is a small named function."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Iterator

from teton.catalogue import catalogue_for
from teton.checks.catalogue_rules import CATALOGUE_RULES, box_known
from teton.checks.frontend_rules import FRONTEND_RULES
from teton.checks.ib_rules import IB_RULES, ib_size_terms, ib_switch_count
from teton.checks.intent_rules import INTENT_RULES
from teton.checks.rack_rules import RACK_RULES
from teton.design.capacity import pool_uses
from teton.design.frontend import fe_counts, fe_rack_ports, has_zone0
from teton.design.management import FIRST_HOST, MAX_QUARANTINE, reserved_addresses
from teton.design.roce import RoceShape, roce_room
from teton.design.room import Room, room_of
from teton.fabric.roles import tier_roles
from teton.findings import Finding
from teton.limits import MAX_DEVICES, MAX_LINKS
from teton.spec.model import Cluster, RoceBackend, SwitchModel

SpecRule = Callable[[Cluster, str], Iterator[Finding]]
PRIVATE_ASN = (4200000000, 4294967294)
# (what, how many, ((spec path, value), ...) of the factors that multiply to it)
Term = tuple[str, int, tuple[tuple[str, int], ...]]


def size_terms(c: Cluster) -> tuple[list[Term], list[Term]]:
    """(devices, links) the design would create, as terms computed from the spec's counts alone (no design runs).

    Mirrors design/roce.py and design/frontend.py; tests compare the totals with designed fabrics.
    """
    z, r, h = c.zones, c.racks_per_zone, c.hosts_per_rack
    zr = (("zones", z), ("racks_per_zone", r))
    hosts = zr + (("hosts_per_rack", h),)
    devices: list[Term] = [("hosts", z * r * h, hosts)]
    links: list[Term] = []
    if isinstance(c.backend, RoceBackend):
        be, s = c.backend, RoceShape.of(c)
        per_zone = ("backend.ctsw.per_zone", s.ctsw_per_zone)
        atsw = ("backend.atsw.count", s.atsw)
        devices += [("RTSW", s.racks, zr), ("CTSW", s.zones * s.ctsw_per_zone, (zr[0], per_zone)),
                    ("ATSW", s.atsw, (atsw,))]
        links += [("host-RTSW", s.racks * s.rtsw_down, hosts + (("host.backend_nics", s.nics),)),
                  ("RTSW-CTSW", s.racks * s.rtsw_up, zr + (per_zone, ("backend.rtsw.uplinks_per_ctsw",
                                                                       be.rtsw.uplinks_per_ctsw))),
                  ("CTSW-ATSW", s.zones * s.ctsw_per_zone * s.ctsw_up,
                   (zr[0], per_zone, atsw, ("backend.ctsw.uplinks_per_atsw", be.ctsw.uplinks_per_atsw)))]
    ib_devices, ib_links = ib_size_terms(c)
    devices += ib_devices
    links += ib_links
    fe = c.frontend
    if fe is not None:
        fe_zones = z + (1 if has_zone0(c) else 0)
        fsw = ("frontend.fsw_per_zone", fe.fsw_per_zone)
        devices += [("RSW", z * r, zr), ("FSW", fe_zones * fe.fsw_per_zone, (("zones", fe_zones), fsw))]
        links += [("host-RSW", z * r * h * c.host.frontend_nics, hosts + (("host.frontend_nics",
                                                                          c.host.frontend_nics),)),
                  ("RSW-FSW", z * r * fe.fsw_per_zone * fe.uplinks_per_fsw,
                   zr + (fsw, ("frontend.uplinks_per_fsw", fe.uplinks_per_fsw)))]
        if fe.ssw is not None:
            per_plane = ("frontend.ssw.per_plane", fe.ssw.per_plane)
            devices.append(("SSW", fe.fsw_per_zone * fe.ssw.per_plane, (fsw, per_plane)))
            links.append(("FSW-SSW", fe_zones * fe.fsw_per_zone * fe.ssw.per_plane * fe.ssw.uplinks_per_ssw,
                          (("zones", fe_zones), fsw, per_plane, ("frontend.ssw.uplinks_per_ssw",
                                                                  fe.ssw.uplinks_per_ssw))))
        if c.services:
            devices.append(("RSW", 1, (("services", 1),)))
            links += [("service-RSW", sum(x.nics for x in c.services), (("services", len(c.services)),)),
                      ("RSW-FSW", fe.fsw_per_zone * fe.uplinks_per_fsw, (fsw,))]
    if c.services:
        devices.append(("service hosts", len(c.services), (("services", len(c.services)),)))
    for i, g in enumerate(c.storage):
        racks, servers = (f"storage[{i}].racks", g.racks), (f"storage[{i}].servers_per_rack", g.servers_per_rack)
        devices.append(("storage servers", g.racks * g.servers_per_rack, (racks, servers)))
        if fe is not None:
            devices.append(("RSW", g.racks, (racks,)))
            links += [("storage-RSW", g.racks * g.servers_per_rack * g.nics_per_server,
                       (racks, servers, (f"storage[{i}].nics_per_server", g.nics_per_server))),
                      ("RSW-FSW", g.racks * fe.fsw_per_zone * fe.uplinks_per_fsw,
                       (racks, ("frontend.fsw_per_zone", fe.fsw_per_zone),
                        ("frontend.uplinks_per_fsw", fe.uplinks_per_fsw)))]
    return devices, links


def cluster_too_large(c: Cluster, file: str) -> Iterator[Finding]:
    """More devices or links than `teton.limits` allows, from the counts alone: runs first and stops the others."""
    devices, links = size_terms(c)
    for terms, noun, limit, name in ((devices, "devices", MAX_DEVICES, "MAX_DEVICES"),
                                     (links, "links", MAX_LINKS, "MAX_LINKS")):
        total = sum(n for _, n, _ in terms)
        if total <= limit:
            continue
        by_what: dict[str, int] = {}
        for what, n, _ in terms:
            by_what[what] = by_what.get(what, 0) + n
        _, _, factors = max(terms, key=lambda t: t[1])
        path, _ = max(factors, key=lambda f: f[1])      # the largest factor of the largest term
        parts = ", ".join(f"{n:,} {what}" for what, n in by_what.items() if n)
        yield Finding(file, path, f"the cluster would have {total:,} {noun}, above {name} ({limit:,}): {parts}",
                      rule="limit")


def _tiers(c: Cluster) -> Iterator[tuple[str, str, str]]:
    """(spec path, model name, nos) of every switch tier in the spec."""
    if isinstance(c.backend, RoceBackend):
        for t in tier_roles("roce"):
            tier = getattr(c.backend, t)
            yield f"backend.{t}", tier.model, tier.nos
    if c.frontend is not None:
        yield "frontend.rsw", c.frontend.rsw.model, c.frontend.rsw.nos
        yield "frontend.fsw", c.frontend.fsw.model, c.frontend.fsw.nos
        if c.frontend.ssw is not None:
            yield "frontend.ssw", c.frontend.ssw.model, c.frontend.ssw.nos


def unknown_model(c: Cluster, file: str) -> Iterator[Finding]:
    models = catalogue_for(c)
    for path, model, _ in _tiers(c):
        if model not in models:
            yield Finding(file, f"{path}.model", f"unknown switch model {model!r}; known: {', '.join(sorted(models))}",
                          rule="unknown-model")


def nos_unsupported(c: Cluster, file: str) -> Iterator[Finding]:
    models = catalogue_for(c)
    for path, model, nos in _tiers(c):
        m = models.get(model)
        if m is not None and nos not in m.nos:
            yield Finding(file, f"{path}.nos", f"{model} does not run {nos!r} (it runs: {', '.join(m.nos) or 'none'})",
                          rule="nos-unsupported")


def _room(c: Cluster) -> Room:
    return room_of(c, catalogue_for(c))


def _demands(c: Cluster) -> Iterator[tuple[str, str, list[tuple[int, int]]]]:
    """(spec path, model, [(ports, speed)...]) that one device of each tier asks of its model at the cluster's room
    (an upper tier keeps the ports of every rack, zone and neighbour the room may add), in allocation order."""
    room = _room(c)
    if isinstance(c.backend, RoceBackend):
        be, s, r = c.backend, RoceShape.of(c), roce_room(c, room)
        yield "backend.rtsw", be.rtsw.model, [(s.rtsw_down, be.rtsw.downlink_speed_gbps),
                                             (s.rtsw_up, be.rtsw.uplink_speed_gbps)]
        yield "backend.ctsw", be.ctsw.model, [(r["ctsw_down"], be.rtsw.uplink_speed_gbps),
                                             (r["ctsw_up"], be.ctsw.uplink_speed_gbps)]
        yield "backend.atsw", be.atsw.model, [(r["atsw_down"], be.ctsw.uplink_speed_gbps)]
    fe = c.frontend
    if fe is not None:
        counts = fe_counts(c, room)
        for path, n, speed in fe_rack_ports(c):
            yield path, fe.rsw.model, [(n, speed), (counts["rsw_up"], fe.uplink_speed_gbps)]
        fsw = [(counts["fsw_down"], fe.uplink_speed_gbps)]
        if fe.ssw is not None:
            fsw.append((counts["fsw_up"], fe.ssw.uplink_speed_gbps))
            yield "frontend.ssw", fe.ssw.model, [(counts["ssw_down"], fe.ssw.uplink_speed_gbps)]
        yield "frontend.fsw", fe.fsw.model, fsw


def _ports_by_speed(model: SwitchModel) -> dict[int, int]:
    """{native speed: ports} of a model, from its port groups (never a list of every port)."""
    out: dict[int, int] = {}
    for g in model.port_groups:
        out[g.speed_gbps] = out.get(g.speed_gbps, 0) + g.count
    return out


def _first_overflow(model: SwitchModel, demand: list[tuple[int, int]]) -> int | None:
    """The speed at which `demand` runs out of ports, allocating as `design.builder.Ports` does (ports of exactly
    the asked speed first, then the next faster); None if it fits.  Work per port group, not per port."""
    free = _ports_by_speed(model)
    for n, speed in demand:
        for native in sorted(s for s in free if s >= speed):
            took = min(n, free[native])
            free[native] -= took
            n -= took
        if n > 0:
            return speed
    return None


def ports_overcommitted(c: Cluster, file: str) -> Iterator[Finding]:
    """A tier asks a model for more ports (at a speed) than it has, or more bandwidth than its ASIC switches."""
    models = catalogue_for(c)
    for path, name, demand in _demands(c):
        model = models.get(name)
        if model is None:
            continue
        asked = sum(n for n, _ in demand)
        speed = _first_overflow(model, demand)
        if speed is not None:
            yield Finding(file, path, f"{name} has {model.ports} ports; this tier needs {asked} at the cluster's "
                          f"room ({', '.join(f'{n}x{s}G' for n, s in demand)}; {_room_text(_room(c))}); no free "
                          f"{speed}G port is left", rule="ports-overcommitted")
            continue
        gbps = sum(n * s for n, s in demand)
        if gbps > model.asic_tbps * 1000:
            yield Finding(file, path, f"{name}'s {model.asic} switches {model.asic_tbps} Tb/s; this tier uses "
                          f"{gbps / 1000:g} Tb/s of ports", rule="ports-overcommitted")


def pool_exhausted(c: Cluster, file: str) -> Iterator[Finding]:
    """An address pool or the management network is too small for what the cluster's room takes from it, or no
    family gives a needed pool (`teton.design.capacity`)."""
    room = _room(c)
    uses, problems = pool_uses(c, room, ib_switch_count(c))
    for p in problems:
        yield Finding(file, p.path, p.message, rule="pool-exhausted")
    for u in uses:
        if u.capacity >= u.room:
            continue
        if u.which == "switches":
            reserved = len(reserved_addresses(c.management, c.ztp))
            yield Finding(file, u.path, f"{u.network} has room for {u.capacity} switch addresses (from "
                          f".{FIRST_HOST}, less {reserved} reserved for the gateway, "
                          f"the servers, the provisioning server and the quarantine pool) but the cluster's room has "
                          f"{u.room} switch places ({_room_text(room)})",
                          rule="pool-exhausted")
        else:
            yield Finding(file, u.path, f"{u.network} holds {u.capacity} /{u.plen} blocks but the fabric needs "
                          f"{u.room} at its room ({_room_text(room)}): widen the pool or declare a smaller room:",
                          rule="pool-exhausted")


def _room_text(room: Room) -> str:
    return (f"room: {room.zones} zones x {room.racks_per_zone} racks, {room.atsw} ATSWs, "
            f"{room.ssw_per_plane} spines per plane, {room.storage_racks} racks per storage group")


def room_too_small(c: Cluster, file: str) -> Iterator[Finding]:
    """A declared room below what the spec already has: the layout would give two devices one place."""
    for path, room, have in _room(c).short:
        yield Finding(file, path, f"room {room} is less than the spec's {have}: the room is the most the cluster "
                      "will have, so raise it (every place is laid out for it)", rule="room")


def asn_plan_clash(c: Cluster, file: str) -> Iterator[Finding]:
    """ASN ranges of the tiers overlap, a stride is too small for the racks, or an ASN leaves the 32-bit space, at
    the cluster's room (the ASNs of every zone and rack it may add)."""
    ranges: list[tuple[str, int, int]] = []
    room = _room(c)
    if isinstance(c.backend, RoceBackend):
        a = c.backend.asn
        ranges += [("backend.asn.atsw", a.atsw, a.atsw), ("backend.asn.ctsw", a.ctsw + 1, a.ctsw + room.zones),
                   ("backend.asn.rtsw", a.rtsw + a.rtsw_zone_stride + 1,
                    a.rtsw + room.zones * a.rtsw_zone_stride + room.racks_per_zone)]
        if a.rtsw_zone_stride <= room.racks_per_zone:
            yield Finding(file, "backend.asn.rtsw_zone_stride", f"stride {a.rtsw_zone_stride} must exceed the racks "
                          f"a zone may have ({_room_text(room)}), or RTSWs of two zones share an ASN",
                          rule="asn-clash")
    if c.frontend is not None:
        f = c.frontend.asn
        racks = max(room.racks_per_zone, room.zone0_racks)
        if c.frontend.ssw is not None:
            ranges.append(("frontend.asn.ssw", f.ssw, f.ssw))
        ranges += [("frontend.asn.fsw", f.fsw, f.fsw + room.zones),
                   ("frontend.asn.rsw", f.rsw + 1, f.rsw + room.zones * f.rsw_zone_stride + racks)]
        if f.rsw_zone_stride <= racks:
            yield Finding(file, "frontend.asn.rsw_zone_stride", f"stride {f.rsw_zone_stride} must exceed the racks "
                          f"a zone may have ({racks} at the room: {_room_text(room)})", rule="asn-clash")
    for i, (p1, lo1, hi1) in enumerate(ranges):
        if hi1 > PRIVATE_ASN[1]:
            yield Finding(file, p1, f"ASNs run up to {hi1}, past the largest private 4-byte ASN {PRIVATE_ASN[1]}",
                          rule="asn-clash")
        elif lo1 < PRIVATE_ASN[0]:
            yield Finding(file, p1, f"ASN {lo1} is not a private 4-byte ASN (RFC 6996: {PRIVATE_ASN[0]}-"
                          f"{PRIVATE_ASN[1]})", rule="asn-clash", severity="warning")
        for p2, lo2, hi2 in ranges[i + 1:]:
            if lo1 <= hi2 and lo2 <= hi1:
                yield Finding(file, p2, f"ASNs {lo2}-{hi2} overlap {p1} ({lo1}-{hi1})", rule="asn-clash")


def ztp_settings(c: Cluster, file: str) -> Iterator[Finding]:
    """Day 0's settings that cannot work: provisioning without a management network, a quarantine pool outside it,
    upside down or too large, an image for a NOS no tier runs."""
    z = c.ztp
    if z is None:
        return
    net = None if c.management.network is None else ipaddress.ip_network(c.management.network)
    if net is None:
        yield Finding(file, "ztp", "zero-touch provisioning hands out management addresses, and the spec has no "
                      "management.network", rule="ztp")
    if z.quarantine is not None and net is not None:
        first, last = (ipaddress.ip_address(x) for x in (z.quarantine.first, z.quarantine.last))
        if not (first.version == last.version == net.version and first in net and last in net):
            yield Finding(file, "ztp.quarantine", f"{first}-{last} is not inside the management network {net}",
                          rule="ztp")
        elif int(first) > int(last):
            yield Finding(file, "ztp.quarantine", f"first {first} is after last {last}", rule="ztp")
        elif int(last) - int(first) >= MAX_QUARANTINE:
            yield Finding(file, "ztp.quarantine", f"{int(last) - int(first) + 1} addresses; a quarantine pool holds "
                          f"at most {MAX_QUARANTINE}", rule="ztp")
    used = {nos for _, _, nos in _tiers(c)}
    for nos in sorted(set(z.images) - used):
        yield Finding(file, f"ztp.images.{nos}", f"no switch tier runs {nos!r} (tiers run {', '.join(sorted(used))})",
                      rule="ztp", severity="warning")


def mtu_out_of_range(c: Cluster, file: str) -> Iterator[Finding]:
    """The spec's MTU is more than a tier's model (and so its NOS) accepts."""
    models = catalogue_for(c)
    checks: list[tuple[str, int, str]] = []
    if isinstance(c.backend, RoceBackend):
        checks += [("backend.mtu", c.backend.mtu, f"backend.{t}") for t in tier_roles("roce")]
    if c.frontend is not None:
        checks += [("frontend.mtu", c.frontend.mtu, f"frontend.{t}") for t in ("rsw", "fsw", "ssw")]
    for path, mtu, tier in checks:
        name = dict((p, m) for p, m, _ in _tiers(c)).get(tier)
        m: SwitchModel | None = models.get(name or "")
        if m is not None and mtu > m.mtu_max:
            yield Finding(file, path, f"MTU {mtu} is above {m.name}'s maximum {m.mtu_max} ({tier})",
                          rule="mtu-mismatch")


# The size guard comes first; when it finds an error `check_spec` runs none of the others (see GUARD_RULES).
SPEC_RULES: tuple[SpecRule, ...] = (cluster_too_large, unknown_model, nos_unsupported, *IB_RULES,
                                    *CATALOGUE_RULES, room_too_small, ports_overcommitted, pool_exhausted,
                                    asn_plan_clash,
                                    mtu_out_of_range, ztp_settings, *INTENT_RULES, *RACK_RULES, *FRONTEND_RULES)
GUARD_RULES: tuple[SpecRule, ...] = (cluster_too_large, box_known)   # an unknown box has no port map
