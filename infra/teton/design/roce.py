"""RoCE backend design (Meta's 24k-GPU cluster shape): RTSW per rack, CTSW planes per zone, ATSW across zones.

Port maps: RTSW port i <-> NIC i of its hosts (host h, NIC n -> port h*nics + n); RTSW uplink j <-> CTSW j of its
zone (j-th group of `uplinks_per_ctsw` ports); CTSW downlinks in rack order, then one group of uplinks per ATSW;
ATSW downlinks in (zone, CTSW) order.  ASNs per RFC 7938: ATSWs share one, the CTSWs of a zone share one, every RTSW
has its own (base + zone*stride + rack, 1-based, so z01-r001 reads as ...1001).

Every place is laid out for the cluster's room (`teton.design.room`), not for what exists: a CTSW's uplinks start
after the downlinks of every rack its zone may have, an ATSW's downlinks of zone z after those of every earlier
zone's CTSWs; loopbacks are the ATSWs' room, then per zone its CTSWs and its racks' room; link nets are every rack
slot's uplinks, then the CTSW-ATSW links of every (zone, CTSW, ATSW) slot; host blocks one per rack slot.  With a
room equal to the spec's counts this is the order the designer always used.
"""

from __future__ import annotations

from dataclasses import dataclass

from teton.design.addressing import LinkNets, block_text, host_block_plen, loopback, pools, router_id
from teton.design.builder import Ports, wire
from teton.design.draft import Draft, DraftFabric
from teton.design.naming import atsw_name, ctsw_name, host_name, net_rack_name, rack_name, rtsw_name
from teton.design.room import Room
from teton.spec.model import Cluster, RoceBackend, SwitchModel

RACK_UNITS = 48  # ORv3 rack height used for placement


@dataclass(frozen=True)
class RoceShape:
    """Counts that follow from the spec alone; shared by the designer and the spec-level checks."""

    zones: int
    racks_per_zone: int
    hosts_per_rack: int
    nics: int
    rtsw_down: int
    rtsw_up: int
    ctsw_per_zone: int
    ctsw_down: int
    ctsw_up: int
    atsw: int
    atsw_down: int

    @property
    def racks(self) -> int:
        return self.zones * self.racks_per_zone

    @property
    def switches(self) -> int:
        return self.racks + self.zones * self.ctsw_per_zone + self.atsw

    @property
    def fabric_links(self) -> int:
        return self.racks * self.rtsw_up + self.zones * self.ctsw_per_zone * self.ctsw_up

    @staticmethod
    def of(cluster: Cluster) -> RoceShape:
        be = cluster.backend
        assert isinstance(be, RoceBackend)
        nics = cluster.host.backend_nics
        ctsw_up = be.atsw.count * be.ctsw.uplinks_per_atsw
        return RoceShape(
            zones=cluster.zones, racks_per_zone=cluster.racks_per_zone, hosts_per_rack=cluster.hosts_per_rack,
            nics=nics, rtsw_down=cluster.hosts_per_rack * nics,
            rtsw_up=be.ctsw.per_zone * be.rtsw.uplinks_per_ctsw, ctsw_per_zone=be.ctsw.per_zone,
            ctsw_down=cluster.racks_per_zone * be.rtsw.uplinks_per_ctsw, ctsw_up=ctsw_up,
            atsw=be.atsw.count, atsw_down=cluster.zones * be.ctsw.per_zone * be.ctsw.uplinks_per_atsw)


def roce_room(cluster: Cluster, room: Room) -> dict[str, int]:
    """What the backend takes at its full room: loopbacks, link nets and host blocks, and the upper tiers' ports."""
    be = cluster.backend
    assert isinstance(be, RoceBackend)
    shape = RoceShape.of(cluster)
    racks = room.zones * room.racks_per_zone
    return {"loopbacks": room.atsw + room.zones * (shape.ctsw_per_zone + room.racks_per_zone),
            "fabric_links": racks * shape.rtsw_up + room.zones * shape.ctsw_per_zone * room.atsw
            * be.ctsw.uplinks_per_atsw,
            "host_links": racks, "ctsw_down": room.racks_per_zone * be.rtsw.uplinks_per_ctsw,
            "ctsw_up": room.atsw * be.ctsw.uplinks_per_atsw,
            "atsw_down": room.zones * shape.ctsw_per_zone * be.ctsw.uplinks_per_atsw}


def hosts_in_rack(cluster: Cluster, zone: int, rack: int) -> int:
    """GPU servers in rack `rack` of zone `zone`: hosts_per_rack, unless `racks:` gives the rack fewer.  The missing
    hosts are the last ones; their switch ports and addresses stay reserved (not cabled), so the rack's other hosts
    and its uplinks keep their ports and addresses."""
    override = cluster.racks.get(rack_name(zone, rack))
    return cluster.hosts_per_rack if override is None else override.hosts


def design_roce(cluster: Cluster, fabric: DraftFabric, models: dict[str, SwitchModel], room: Room) -> None:
    be = cluster.backend
    assert isinstance(be, RoceBackend)
    shape = RoceShape.of(cluster)
    zone_slots = shape.ctsw_per_zone + room.racks_per_zone       # loopbacks of one zone: its CTSWs, its racks
    rack_links = room.zones * room.racks_per_zone * shape.rtsw_up      # link nets of every rack slot's uplinks
    atsw_links = room.atsw * be.ctsw.uplinks_per_atsw                  # link nets of one CTSW's uplinks
    same_speed = be.rtsw.uplink_speed_gbps == be.ctsw.uplink_speed_gbps
    ctsw_up0 = room.racks_per_zone * be.rtsw.uplinks_per_ctsw if same_speed else 0   # a CTSW's first uplink
    rt, ct, at = models[be.rtsw.model], models[be.ctsw.model], models[be.atsw.model]
    host = cluster.host
    mtu = be.mtu
    lo4, lo6 = pools(be.addressing, "loopbacks", v4_plen=32, v6_plen=128)
    fl4, fl6 = pools(be.addressing, "fabric_links", v4_plen=31, v6_plen=127)
    hb4, hb6 = pools(be.addressing, "host_links", v4_plen=host_block_plen(4, shape.rtsw_down),
                     v6_plen=host_block_plen(6, shape.rtsw_down))
    fabric_nets = LinkNets.from_pools(fl4, fl6)
    asn = be.asn
    ports: dict[str, Ports] = {}

    def switch(name: str, role: str, model: SwitchModel, nos: str, zone: int | None, rack: str, ru: int,
               asn_value: int, slot: int) -> Draft:
        l4 = loopback(lo4, slot) if lo4 else None
        l6 = loopback(lo6, slot) if lo6 else None
        d = Draft(name, role, model.name, nos, zone, rack, ru, model.height_ru, asn=asn_value, loopback4=l4,
                   loopback6=l6, router_id=router_id(l4, slot), power_w=model.power_w, slot=slot)
        fabric.add(d)
        ports[name] = Ports(name, model, nos=nos)
        return d

    fabric.slot_room["backend"] = room.atsw + room.zones * zone_slots
    atsws = [switch(atsw_name(i + 1), "atsw", at, be.atsw.nos, None, net_rack_name(None, i // 2 + 1),
                    1 + (i % 2) * at.height_ru, asn.atsw, i) for i in range(shape.atsw)]
    nic_ports = [(f"be{n}", host.backend_nic_gbps) for n in range(host.backend_nics)]
    for z in range(1, shape.zones + 1):
        first = room.atsw + (z - 1) * zone_slots
        ctsws = [switch(ctsw_name(z, c + 1), "ctsw", ct, be.ctsw.nos, z, net_rack_name(z, c // 2 + 1),
                        1 + (c % 2) * ct.height_ru, asn.ctsw + z, first + c) for c in range(shape.ctsw_per_zone)]
        for r in range(1, shape.racks_per_zone + 1):
            rack = rack_name(z, r)
            rtsw = switch(rtsw_name(z, r), "rtsw", rt, be.rtsw.nos, z, rack, RACK_UNITS - rt.height_ru + 1,
                          asn.rtsw + z * asn.rtsw_zone_stride + r, first + shape.ctsw_per_zone + r - 1)
            rack_slot = room.rack_slot(z, r)
            base4 = base6 = None
            if hb4:
                base4, _ = hb4.block(rack_slot)
                rtsw.prefixes4.append(block_text(4, base4, hb4.plen))
            if hb6:
                base6, _ = hb6.block(rack_slot)
                rtsw.prefixes6.append(block_text(6, base6, hb6.plen))
            host_nets = LinkNets(base4, base6)
            rp = ports[rtsw.name]
            installed = hosts_in_rack(cluster, z, r)
            for h in range(1, shape.hosts_per_rack + 1):
                if h > installed:   # the host's ports stay free, the uplinks where they are
                    for _ in range(host.backend_nics):
                        rp.take(be.rtsw.downlink_speed_gbps)
                    continue
                hd = Draft(host_name(z, r, h), "host", host.platform, None, z, rack, 1 + (h - 1) * host.height_ru,
                            host.height_ru, power_w=host.power_w,
                            attrs={"gpus": host.gpus, "gpu_model": host.gpu_model, "rack_index": r})
                fabric.add(hd)
                hp = Ports(hd.name, None, nic_ports)
                for n in range(host.backend_nics):
                    k = (h - 1) * host.backend_nics + n
                    wire(fabric, "host-rtsw", hd, hp.take(host.backend_nic_gbps), rtsw,
                         rp.take(be.rtsw.downlink_speed_gbps), speed=be.rtsw.downlink_speed_gbps,
                         medium=be.rtsw.medium_down, mtu=mtu, nets=host_nets, net_index=k, rack=rack, zone=z)
                ports[hd.name] = hp
            for c, ctsw in enumerate(ctsws):
                for u in range(be.rtsw.uplinks_per_ctsw):
                    j = c * be.rtsw.uplinks_per_ctsw + u
                    wire(fabric, "rtsw-ctsw", rtsw, rp.take(be.rtsw.uplink_speed_gbps), ctsw,
                         ports[ctsw.name].at(be.rtsw.uplink_speed_gbps, (r - 1) * be.rtsw.uplinks_per_ctsw + u),
                         speed=be.rtsw.uplink_speed_gbps, medium=be.ctsw.medium_down, mtu=mtu, nets=fabric_nets,
                         net_index=rack_slot * shape.rtsw_up + j, rack=rack, zone=z)
    for ctsw in fabric.by_role("ctsw"):
        assert ctsw.zone is not None
        c = ctsw.slot - room.atsw - (ctsw.zone - 1) * zone_slots          # the CTSW's index in its zone
        ctsw_slot = (ctsw.zone - 1) * shape.ctsw_per_zone + c
        for a, atsw in enumerate(atsws):
            for u in range(be.ctsw.uplinks_per_atsw):
                k = a * be.ctsw.uplinks_per_atsw + u
                wire(fabric, "ctsw-atsw", ctsw, ports[ctsw.name].at(be.ctsw.uplink_speed_gbps, ctsw_up0 + k), atsw,
                     ports[atsw.name].at(be.ctsw.uplink_speed_gbps, ctsw_slot * be.ctsw.uplinks_per_atsw + u),
                     speed=be.ctsw.uplink_speed_gbps, medium=be.atsw.medium_down, mtu=mtu, nets=fabric_nets,
                     net_index=rack_links + ctsw_slot * atsw_links + k, rack=ctsw.rack, zone=ctsw.zone)
    fabric.oversubscription_goals = {"rtsw": be.rtsw.oversubscription, "ctsw": be.ctsw.oversubscription}
    for m in (rt, ct, at):
        fabric.models[m.name] = m

