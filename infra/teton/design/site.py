"""A site's backend aggregation tier (BAG) and each cluster's attachment to it, decided once for every build.

The tier is `bag.count` switches in `bag.planes` planes, sharing one ASN (RFC 7938: a tier shares an ASN, so an
ATSW's paths into it are equal-cost).  ATSW k of every cluster attaches to every BAG switch of plane k mod planes with
`uplinks_per_atsw` links, on its last free ports (the ATSWs' first ports stay the CTSWs', with their room).  A cluster
has a fixed place on each BAG switch: its slot in the site (its position in the site's list) times the ports a slot
holds (`room.atsw_per_cluster` ATSWs), so a cluster added within the site's room takes ports and link nets of its own
slot and changes nothing of the others: the tier's attachment lines only.  Link nets (/31 and /127) are numbered the
same way from the tier's `fabric_links` pools, its loopbacks by BAG switch from `loopbacks`.

In a cluster's build the BAG switches are `Fabric.externals`: the ATSWs' peers, designed here, rendered by the tier's
build.  In the tier's build the ATSWs of every cluster are its externals, named `<cluster>--<atsw>`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from teton.catalogue.ports import port_map
from teton.design.addressing import LinkNets, loopback, pools, router_id
from teton.design.builder import PortOverflow
from teton.design.draft import Draft, DraftFabric
from teton.fabric.floor import SITE_SEPARATOR
from teton.fabric.intent import Family
from teton.fabric.model import Device, End, Interface, Link
from teton.spec.model import SwitchModel
from teton.spec.site import BagTier

BAG_KIND = "atsw-bag"
SEPARATOR = SITE_SEPARATOR     # between a cluster's name and its device's in the site's names (no dots in a hostname)


def bag_name(index: int) -> str:
    """BAG switch `index` (1-based) of the site."""
    return f"bag{index:02d}"


def bag_rack(index: int) -> str:
    return f"bag-n{index:02d}"


def qualified(cluster: str, device: str) -> str:
    """A cluster's device as the site names it (the tier's build, the site's merged view)."""
    return f"{cluster}{SEPARATOR}{device}"


@dataclass(frozen=True)
class BagSwitch:
    name: str
    plane: int                 # 0-based
    index: int                 # 0-based among all BAG switches
    model: str
    nos: str
    asn: int
    loopback4: str | None
    loopback6: str | None
    router_id: str | None
    height_ru: int
    power_w: int


@dataclass(frozen=True)
class Uplink:
    """One ATSW-BAG link: the ATSW's end is the south end."""

    cluster: str
    slot: int
    atsw: str
    atsw_port: str
    atsw_ordinal: int
    bag: str
    bag_port: str
    bag_ordinal: int
    speed_gbps: int
    north4: str | None         # the BAG's address (with prefix length)
    north6: str | None
    south4: str | None         # the ATSW's
    south6: str | None


def bag_switches(bag: BagTier, model: SwitchModel) -> list[BagSwitch]:
    lo4, lo6 = pools(bag.addressing, "loopbacks", v4_plen=32, v6_plen=128)
    per_plane = -(-bag.count // bag.planes)
    out = []
    for i in range(bag.count):
        l4 = loopback(lo4, i) if lo4 else None
        l6 = loopback(lo6, i) if lo6 else None
        out.append(BagSwitch(bag_name(i + 1), i // per_plane, i, model.name, bag.nos, bag.asn, l4, l6,
                             router_id(l4, i), model.height_ru, model.power_w))
    return out


def slot_ports(bag: BagTier, atsw_per_cluster: int) -> int:
    """Ports one cluster's slot holds on each BAG switch."""
    return -(-atsw_per_cluster // bag.planes) * bag.uplinks_per_atsw


def _speed_ports(model: SwitchModel, nos: str, speed: int) -> list[tuple[str, int]]:
    """(name, ordinal) of the model's ports that run at `speed`, exactly that speed first, then faster ones."""
    ports = port_map(model, nos)
    return [(p.name, k) for native in sorted({p.speed_gbps for p in ports if p.speed_gbps >= speed})
            for k, p in enumerate(ports) if p.speed_gbps == native]


def uplinks(bag: BagTier, bags: list[BagSwitch], bag_model: SwitchModel, cluster: str, slot: int,
            atsws: list[tuple[str, SwitchModel, str | None, set[str]]], atsw_per_cluster: int) -> list[Uplink]:
    """Every link of one cluster's ATSWs (name, model, NOS, ports already used) to the tier, in ATSW then BAG then
    link order.  PortOverflow when an ATSW has too few free ports or a slot lies beyond a BAG switch's ports."""
    per_slot = slot_ports(bag, atsw_per_cluster)
    by_plane: dict[int, list[BagSwitch]] = {}
    for b in bags:
        by_plane.setdefault(b.plane, []).append(b)
    bag_ports = _speed_ports(bag_model, bag.nos, bag.uplink_speed_gbps)
    nets = LinkNets.from_pools(*pools(bag.addressing, "fabric_links", v4_plen=31, v6_plen=127))
    per_plane = max(len(v) for v in by_plane.values())
    out: list[Uplink] = []
    for k, (atsw, model, nos, used) in enumerate(atsws):
        plane = by_plane.get(k % bag.planes, [])
        free = [p for p in reversed(_speed_ports(model, nos or "", bag.uplink_speed_gbps)) if p[0] not in used]
        need = len(plane) * bag.uplinks_per_atsw
        if need > len(free):
            raise PortOverflow(atsw, model.name, len(used) + need, len(used) + len(free), bag.uplink_speed_gbps)
        j = k // bag.planes                           # the ATSW's place among its plane's ATSWs of this cluster
        for b_i, b in enumerate(plane):
            for u in range(bag.uplinks_per_atsw):
                place = slot * per_slot + j * bag.uplinks_per_atsw + u
                if place >= len(bag_ports):
                    raise PortOverflow(b.name, bag_model.name, place + 1, len(bag_ports), bag.uplink_speed_gbps)
                index = ((slot * atsw_per_cluster + k) * per_plane + b_i) * bag.uplinks_per_atsw + u
                (n4, n6), (s4, s6) = nets.pair(index)
                port = free[b_i * bag.uplinks_per_atsw + u]
                out.append(Uplink(cluster, slot, atsw, port[0], port[1], b.name, bag_ports[place][0],
                                  bag_ports[place][1], bag.uplink_speed_gbps, n4, n6, s4, s6))
    return out


def _host(cidr: str | None) -> str | None:
    return None if cidr is None else cidr.split("/", 1)[0]


def bag_draft(b: BagSwitch) -> Draft:
    return Draft(b.name, "bag", b.model, b.nos, None, bag_rack(b.index + 1), 1, b.height_ru, asn=b.asn,
                 loopback4=b.loopback4, loopback6=b.loopback6, router_id=b.router_id, power_w=b.power_w, slot=b.index)


def wire_uplinks(draft: DraftFabric, ups: list[Uplink], mtu: int, medium: str, atsw_name: dict[str, str],
                 bag_name_of: dict[str, str]) -> None:
    """Add the links of `ups` to `draft`, whose devices hold both ends under the names `atsw_name[atsw]` and
    `bag_name_of[bag]` (a cluster's build: its ATSWs by their own names; the tier's: `<cluster>--<atsw>`)."""
    for u in ups:
        a, b = draft.devices[atsw_name[u.atsw]], draft.devices[bag_name_of[u.bag]]
        b.interfaces.append(Interface(u.bag_port, u.bag_ordinal, u.speed_gbps, mtu, BAG_KIND, medium, a.name,
                                      u.atsw_port, u.north4, u.north6, _host(u.south4), _host(u.south6), "down"))
        a.interfaces.append(Interface(u.atsw_port, u.atsw_ordinal, u.speed_gbps, mtu, BAG_KIND, medium, b.name,
                                      u.bag_port, u.south4, u.south6, _host(u.north4), _host(u.north6), "up"))
        draft.links.append(Link(BAG_KIND, End(a.name, u.atsw_port, u.south4, u.south6),
                                End(b.name, u.bag_port, u.north4, u.north6), u.speed_gbps, medium, mtu, None,
                                bag_rack(int(b.name[3:]))))


@dataclass(frozen=True)
class SiteMember:
    """What a cluster's design needs of its site: its slot, the tier's switches and links, the site's backend blocks
    (every backend session accepts them) and the sessions' prefix limit (the site's, at its room)."""

    site: str
    cluster: str
    slot: int
    bag: BagTier
    bag_model: SwitchModel
    bags: tuple[BagSwitch, ...]
    atsw_per_cluster: int
    pools: dict[Family, tuple[str, ...]]
    maximum_prefixes: int


def attach(draft: DraftFabric, site: SiteMember, mtu: int) -> None:
    """The tier's switches into `draft` (the Fabric's externals once frozen) and its ATSWs' links to them."""
    atsws = sorted(draft.by_role("atsw"), key=lambda d: d.name)
    ups = uplinks(site.bag, list(site.bags), site.bag_model, site.cluster, site.slot,
                  [(a.name, draft.models[a.model], a.nos, {i.name for i in a.interfaces}) for a in atsws],
                  site.atsw_per_cluster)
    draft.models.setdefault(site.bag_model.name, site.bag_model)
    for b in site.bags:
        draft.add(bag_draft(b))
    wire_uplinks(draft, ups, mtu, site.bag.medium, {a.name: a.name for a in atsws}, {b.name: b.name for b in site.bags})


def external(d: Device) -> Device:
    """`d` as another build sees it: placement, numbering and its ports towards that build; no intents (its own
    build's Fabric holds those)."""
    return replace(d, routing=None, qos=None, management=None, buffers=None, policy=None, host=None)
