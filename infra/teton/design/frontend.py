"""Front-end network, storage and service racks: an RSW per compute, storage and service rack, FSWs per zone, spine
planes across the zones, Sierra Point servers and the service hosts.

Compute hosts' front-end NICs (fe0, fe1), storage servers' and service hosts' NICs go to their rack's RSW (routed
/31s from the front end's host pool, one block per RSW); RSW uplink group j goes to FSW j of its zone.  Storage and
service racks form zone 0 of the front end, with their own FSWs.  With `frontend.ssw`, spine plane j joins FSW j of
every zone (zone 0 included): Meta's front end is its data-centre fabric, RSW -> FSW -> spine planes -> the site
(docs/sources.md section 6; the plane-per-FSW wiring is ours [I]).  eBGP per RFC 7938: the spines share one ASN.

Every place is laid out for the cluster's room (`teton.design.room`): loopbacks are every zone's FSWs (zone 0's
after the compute zones' room), then the spines' room, then one per rack slot (the compute zones' room, then zone
0's: the service rack, then each storage group's room); link nets are the FSW-spine links of every (plane, spine,
zone) slot, then every rack slot's uplinks; an FSW's spine uplinks are its first ports (the spines' room), its RSW
downlinks follow in rack-slot order; a spine's downlinks go by zone slot.  With a room equal to the spec's counts
this is the order the designer always used.

Elevation: GPU hosts and servers fill a rack from RU 1 up; a rack's switches hang from the top, the front-end RSW
directly below the backend rack switch, each taking its model's height (`checks.fabric_rules.rack_elevation`).
"""

from __future__ import annotations

from teton.design.addressing import LinkNets, block_text, host_block_plen, loopback, pools, router_id
from teton.design.builder import Ports, wire
from teton.design.draft import Draft, DraftFabric
from teton.design.naming import (
    SERVICE_RACK,
    fe_rsw_name,
    fe_spine_rack_name,
    fsw_name,
    net_rack_name,
    rack_name,
    ssw_name,
    storage_rack_name,
    storage_server_name,
)
from teton.design.roce import RACK_UNITS, hosts_in_rack
from teton.design.room import Room
from teton.spec.model import Cluster, SwitchModel

SIERRA_POINT_RU = 1  # Yosemite V3 sled height used for placement [I]


def has_zone0(cluster: Cluster) -> bool:
    """The front end has a zone 0 (FSWs of their own) for storage and service racks."""
    return bool(cluster.storage or cluster.services)


def fe_rack_ports(cluster: Cluster) -> list[tuple[str, int, int]]:
    """(spec path, host-facing ports, speed) an RSW needs, per kind of rack (for the port-capacity check)."""
    fe = cluster.frontend
    assert fe is not None
    out = [("frontend.rsw", cluster.hosts_per_rack * cluster.host.frontend_nics, fe.host_link_speed_gbps)]
    for i, s in enumerate(cluster.storage):
        out.append((f"storage[{i}]", s.servers_per_rack * s.nics_per_server, s.nic_gbps))
    if cluster.services:
        out.append(("services", sum(h.nics for h in cluster.services), max(h.nic_gbps for h in cluster.services)))
    return out


def fe_counts(cluster: Cluster, room: Room) -> dict[str, int]:
    """What the front end takes at its full room: loopbacks, link nets and host blocks, and each tier's ports."""
    fe = cluster.frontend
    assert fe is not None
    zone_slots = room.zones + 1                    # zone 0's slot is kept whether or not it has racks yet
    racks = room.zones * room.racks_per_zone + room.zone0_racks
    fsw = zone_slots * fe.fsw_per_zone
    ssw = fe.fsw_per_zone * room.ssw_per_plane if fe.ssw else 0
    ups = fe.ssw.uplinks_per_ssw if fe.ssw else 0
    return {"loopbacks": fsw + ssw + racks,
            "fabric_links": racks * fe.fsw_per_zone * fe.uplinks_per_fsw + ssw * zone_slots * ups,
            "host_links": racks, "rsw_up": fe.fsw_per_zone * fe.uplinks_per_fsw,
            "fsw_down": max(room.racks_per_zone, room.zone0_racks) * fe.uplinks_per_fsw,
            "fsw_up": room.ssw_per_plane * ups, "ssw": ssw, "fsw": fsw, "ssw_down": zone_slots * ups,
            "max_host_ports": max(n for _, n, _ in fe_rack_ports(cluster))}


def design_frontend(cluster: Cluster, fabric: DraftFabric, all_models: dict[str, SwitchModel], room: Room) -> None:
    fe = cluster.frontend
    if fe is None:
        _storage_only(cluster, fabric)
        return
    rm, fm = all_models[fe.rsw.model], all_models[fe.fsw.model]
    counts = fe_counts(cluster, room)
    fsw_n = fe.fsw_per_zone
    zone_slots = room.zones + 1                                   # FSW zone slots: the compute zones', then zone 0
    ssw_n = fsw_n * room.ssw_per_plane if fe.ssw else 0
    rack_first = zone_slots * fsw_n + ssw_n                       # loopback of the first rack slot
    rack_slots = room.zones * room.racks_per_zone + room.zone0_racks
    ssw_links = fsw_n * room.ssw_per_plane * zone_slots * (fe.ssw.uplinks_per_ssw if fe.ssw else 0)
    rsw_up = fsw_n * fe.uplinks_per_fsw
    fsw_down0 = room.ssw_per_plane * fe.ssw.uplinks_per_ssw if fe.ssw and fe.ssw.uplink_speed_gbps == \
        fe.uplink_speed_gbps else 0                               # an FSW's first RSW downlink
    fabric.slot_room["frontend"] = rack_first + rack_slots
    lo4, lo6 = pools(fe.addressing, "loopbacks", v4_plen=32, v6_plen=128)
    fl4, fl6 = pools(fe.addressing, "fabric_links", v4_plen=31, v6_plen=127)
    per_rsw = counts["max_host_ports"]
    hb4, hb6 = pools(fe.addressing, "host_links", v4_plen=host_block_plen(4, per_rsw),
                     v6_plen=host_block_plen(6, per_rsw))
    up_nets = LinkNets.from_pools(fl4, fl6)
    ports: dict[str, Ports] = {}

    def switch(name: str, role: str, model: SwitchModel, nos: str, zone: int | None, rack: str, ru: int,
               asn: int, slot: int) -> Draft:
        l4 = loopback(lo4, slot) if lo4 else None
        l6 = loopback(lo6, slot) if lo6 else None
        d = Draft(name, role, model.name, nos, zone, rack, ru, model.height_ru, plane="frontend", asn=asn,
                   loopback4=l4, loopback6=l6, router_id=router_id(l4, 100000 + slot), power_w=model.power_w,
                   slot=slot)
        fabric.add(d)
        ports[name] = Ports(name, model, nos=nos)
        return d

    top: dict[str, int] = {}     # lowest RU a switch already hangs from, per rack (the backend's rack switch)
    for d in fabric.devices.values():
        if d.nos is not None:
            top[d.rack] = min(top.get(d.rack, RACK_UNITS + 1), d.ru)

    def rack_switch(rack: str, zone: int | None, asn_zone: int, rack_index: int, slot: int) -> tuple[Draft, LinkNets]:
        """The RSW of rack slot `slot` (its loopback, host block and uplink nets); `rack_index`: its ASN's."""
        rsw = switch(fe_rsw_name(rack), "fe-rsw", rm, fe.rsw.nos, zone, rack,
                     top.get(rack, RACK_UNITS + 1) - rm.height_ru,
                     fe.asn.rsw + asn_zone * fe.asn.rsw_zone_stride + rack_index, rack_first + slot)
        base4 = base6 = None
        if hb4:
            base4, _ = hb4.block(slot)
            rsw.prefixes4.append(block_text(4, base4, hb4.plen))
        if hb6:
            base6, _ = hb6.block(slot)
            rsw.prefixes6.append(block_text(6, base6, hb6.plen))
        return rsw, LinkNets(base4, base6)

    def uplink(rsw: Draft, fsws: list[Draft], slot: int, down: int) -> None:
        """RSW uplinks of rack slot `slot` to its zone's FSWs, at downlink place `down` of each FSW."""
        for i, f in enumerate(fsws):
            for u in range(fe.uplinks_per_fsw):
                j = i * fe.uplinks_per_fsw + u
                wire(fabric, "fersw-fsw", rsw, ports[rsw.name].take(fe.uplink_speed_gbps), f,
                     ports[f.name].at(fe.uplink_speed_gbps, fsw_down0 + down * fe.uplinks_per_fsw + u),
                     speed=fe.uplink_speed_gbps, medium=fe.fsw.medium_down, mtu=fe.mtu, nets=up_nets,
                     net_index=ssw_links + slot * rsw_up + j, rack=rsw.rack, zone=rsw.zone)

    # Creation order, so that growing the storage appends (new racks, loopbacks, links and ASNs after the existing
    # ones, nothing renumbered): every FSW, the spine planes and their links, the compute racks, the service rack,
    # then the storage racks.  An FSW's spine uplinks are its first ports, its RSW downlinks follow.
    zone_fsws: dict[int, list[Draft]] = {}
    for z in range(1, cluster.zones + 1):
        zone_fsws[z] = [switch(fsw_name(z, i + 1), "fsw", fm, fe.fsw.nos, z, net_rack_name(z, 90 + i // 2),
                               1 + (i % 2) * fm.height_ru, fe.asn.fsw + z, (z - 1) * fsw_n + i)
                        for i in range(fsw_n)]
    fsws0 = [switch(fsw_name(None, i + 1), "fsw", fm, fe.fsw.nos, None, net_rack_name(None, 90 + i // 2),
                    1 + (i % 2) * fm.height_ru, fe.asn.fsw, room.zones * fsw_n + i)
             for i in range(fsw_n)] if has_zone0(cluster) else []
    # (zone slot, that zone's FSWs): the compute zones, then zone 0 in the slot after the compute zones' room
    planes = [*((z - 1, f) for z, f in zone_fsws.items()), *([(room.zones, fsws0)] if fsws0 else [])]
    models = [rm, fm]
    if fe.ssw is not None:
        t = fe.ssw
        sm = all_models[t.model]
        models.append(sm)
        per_rack = max(1, RACK_UNITS // sm.height_ru)
        for j in range(fsw_n):
            for k in range(t.per_plane):
                spine = j * room.ssw_per_plane + k                # the spine's slot
                ssw = switch(ssw_name(j + 1, k + 1), "ssw", sm, t.nos, None,
                             fe_spine_rack_name(j + 1, k // per_rack + 1), 1 + (k % per_rack) * sm.height_ru,
                             fe.asn.ssw, zone_slots * fsw_n + spine)
                for zslot, fsws in planes:
                    f = fsws[j]
                    for u in range(t.uplinks_per_ssw):
                        wire(fabric, "fsw-ssw", f, ports[f.name].at(t.uplink_speed_gbps, k * t.uplinks_per_ssw + u),
                             ssw, ports[ssw.name].at(t.uplink_speed_gbps, zslot * t.uplinks_per_ssw + u),
                             speed=t.uplink_speed_gbps, medium=t.medium_down, mtu=fe.mtu, nets=up_nets,
                             net_index=(spine * zone_slots + zslot) * t.uplinks_per_ssw + u, rack=f.rack,
                             zone=f.zone)

    host_nics = [(f"fe{n}", cluster.host.frontend_nic_gbps) for n in range(cluster.host.frontend_nics)]
    for z, fsws in zone_fsws.items():
        for r in range(1, cluster.racks_per_zone + 1):
            rack = rack_name(z, r)
            slot = room.rack_slot(z, r)
            rsw, nets = rack_switch(rack, z, z, r, slot)
            k = 0
            installed = hosts_in_rack(cluster, z, r)
            for h in range(1, cluster.hosts_per_rack + 1):
                if h > installed:   # a missing host's ports stay free, the uplinks where they are
                    for _ in range(cluster.host.frontend_nics):
                        ports[rsw.name].take(fe.host_link_speed_gbps)
                    continue
                host = fabric.devices[f"{rack}-h{h}"]
                hp = Ports(host.name, None, host_nics)
                for _ in range(cluster.host.frontend_nics):
                    wire(fabric, "host-fersw", host, hp.take(fe.host_link_speed_gbps), rsw,
                         ports[rsw.name].take(fe.host_link_speed_gbps), speed=fe.host_link_speed_gbps,
                         medium=fe.rsw.medium_down, mtu=fe.mtu, nets=nets, net_index=k, rack=rack, zone=z)
                    k += 1
            uplink(rsw, fsws, slot, r - 1)
    zone0 = room.zones * room.racks_per_zone     # zone 0's rack slots: the service rack, then each group's room
    if cluster.services:
        slot = room.zone0_slot(None, 1)
        rsw, nets = rack_switch(SERVICE_RACK, None, 0, slot + 1, zone0 + slot)
        k = 0
        for server in _service_hosts(fabric, cluster):
            spec = server.attrs["nics"], server.attrs["nic_gbps"]
            sp = Ports(server.name, None, [(f"fe{n}", spec[1]) for n in range(spec[0])])
            for _ in range(spec[0]):
                wire(fabric, "service-fersw", server, sp.take(spec[1]), rsw, ports[rsw.name].take(spec[1]),
                     speed=spec[1], medium=fe.rsw.medium_down, mtu=fe.mtu, nets=nets, net_index=k,
                     rack=SERVICE_RACK, zone=None)
                k += 1
        uplink(rsw, fsws0, zone0 + slot, slot)
    for g, group in enumerate(cluster.storage, start=1):
        for r in range(1, group.racks + 1):
            slot = room.zone0_slot(g, r)
            rack = storage_rack_name(g, r)
            rsw, nets = rack_switch(rack, None, 0, slot + 1, zone0 + slot)
            k = 0
            for server in _storage_servers(fabric, cluster, g, rack):
                sp = Ports(server.name, None, [(f"fe{n}", group.nic_gbps) for n in range(group.nics_per_server)])
                for _ in range(group.nics_per_server):
                    wire(fabric, "storage-fersw", server, sp.take(group.nic_gbps), rsw,
                         ports[rsw.name].take(group.nic_gbps), speed=group.nic_gbps, medium=fe.rsw.medium_down,
                         mtu=fe.mtu, nets=nets, net_index=k, rack=rack, zone=None)
                    k += 1
            uplink(rsw, fsws0, zone0 + slot, slot)
    for m in models:
        fabric.models[m.name] = m


def _storage_servers(fabric: DraftFabric, cluster: Cluster, g: int, rack: str) -> list[Draft]:
    group = cluster.storage[g - 1]
    out = []
    for s in range(1, group.servers_per_rack + 1):
        d = Draft(storage_server_name(rack, s), "storage", group.platform, None, None, rack,
                   1 + (s - 1) * SIERRA_POINT_RU, SIERRA_POINT_RU, plane="frontend", power_w=group.power_w,
                   attrs={"storage_role": group.role, "group": g, "drives": group.drives_per_server,
                          "drive_tb": group.drive_tb})
        fabric.add(d)
        out.append(d)
    return out


def _service_hosts(fabric: DraftFabric, cluster: Cluster) -> list[Draft]:
    """The service hosts, stacked from RU 1 of the service rack in spec order."""
    out = []
    ru = 1
    for h in cluster.services:
        d = Draft(h.name, "service", "service-1u", None, None, SERVICE_RACK, ru, h.height_ru, plane="frontend",
                   power_w=h.power_w, attrs={"service_role": h.role, "nics": h.nics, "nic_gbps": h.nic_gbps})
        ru += h.height_ru
        fabric.add(d)
        out.append(d)
    return out


def _storage_only(cluster: Cluster, fabric: DraftFabric) -> None:
    """Without a front end, storage racks and service hosts are still counted and placed."""
    for g, group in enumerate(cluster.storage, start=1):
        for r in range(1, group.racks + 1):
            _storage_servers(fabric, cluster, g, storage_rack_name(g, r))
    _service_hosts(fabric, cluster)

