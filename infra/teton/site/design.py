"""Design a site: every cluster as today, attached to the site's backend aggregation tier (`teton.design.site`), the
tier's own Fabric, and the checks across clusters (`teton.site.rules`).

`SiteDesign.members` are the clusters' Fabrics (their builds: the BAG switches are their externals), `tier` the
tier's Fabric (its build: the clusters' ATSWs, named `<cluster>--<atsw>`, are its externals), `merged()` the whole
site as one Fabric with every cluster device named `<cluster>--<device>`: what the twin runs and the rules of
`teton verify` see.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from types import MappingProxyType

from teton.catalogue import builtin_models
from teton.checks import errors
from teton.design.buffers import BufferCache, buffers
from teton.design.draft import Draft, DraftFabric
from teton.design.management import assign_addresses, management_of
from teton.design.room import room_of
from teton.design.routing import Protection, imports, maximum_prefixes, routing
from teton.design.site import (
    BAG_KIND,
    SEPARATOR,
    BagSwitch,
    SiteMember,
    Uplink,
    bag_draft,
    bag_switches,
    external,
    qualified,
    wire_uplinks,
)
from teton.fabric.intent import Family
from teton.fabric.model import Device, End, Fabric, Link
from teton.findings import Finding, SpecError
from teton.pipeline import design_spec
from teton.site.load import LoadedSite
from teton.site.rules import check_site, check_site_fabrics
from teton.spec.model import RoceBackend, SwitchModel


@dataclass(frozen=True)
class SiteDesign:
    loaded: LoadedSite
    members: dict[str, Fabric]             # by cluster, in the site's order
    tier: Fabric
    warnings: list[Finding]

    @property
    def name(self) -> str:
        return self.loaded.site.site


def families(blocks: list[str]) -> dict[Family, tuple[str, ...]]:
    out: dict[Family, list[str]] = {"ipv4": [], "ipv6": []}
    for b in blocks:
        out["ipv4" if ipaddress.ip_network(b).version == 4 else "ipv6"].append(str(ipaddress.ip_network(b)))
    return {f: tuple(v) for f, v in out.items() if v}


def site_prefix_limit(loaded: LoadedSite) -> int:
    """The prefixes a backend session may carry in the site: the largest member's limit (twice its origination at its
    room, `teton.design.routing.maximum_prefixes`) for every cluster the site has room for, plus the tier's."""
    per = 1000
    for c in loaded.clusters.values():
        if isinstance(c.backend, RoceBackend):
            per = max(per, maximum_prefixes(c, room_of(c, builtin_models() | {m.name: m for m in c.switch_models}))
                      ["backend"])
    return per * loaded.site.room.clusters + -(-2 * loaded.site.bag.count // 1000) * 1000


def members_of(loaded: LoadedSite) -> dict[str, SiteMember]:
    """What each cluster's design needs of the site (`teton.design.site.SiteMember`), by cluster, in the site's order:
    small, so a cluster can be designed alone (a Dask worker's task) without the site's other Fabrics."""
    site = loaded.site
    bag_model = builtin_models()[site.bag.model]
    bags = tuple(bag_switches(site.bag, bag_model))
    pools = families(site.plan.backend)
    limit = site_prefix_limit(loaded)
    return {name: SiteMember(site.site, name, slot, site.bag, bag_model, bags, site.room.atsw_per_cluster, pools,
                             limit) for slot, name in enumerate(loaded.clusters)}


def attachment(f: Fabric) -> Fabric:
    """What the tier's design and the rules across clusters need of a member's Fabric: its ATSWs, its links into
    the tier and its externals (the BAG switches), with its QoS and policy; a few dozen devices of a 24k cluster's
    thousands (what a worker sends back instead of the Fabric)."""
    atsws = {n: d for n, d in f.devices.items() if d.role == "atsw"}
    return replace(f, devices=MappingProxyType(atsws), links=tuple(lk for lk in f.links if lk.kind == BAG_KIND),
                   models=MappingProxyType({m: f.models[m] for m in sorted({d.model for d in atsws.values()})}),
                   hosts=None, floor=None, monitoring=None, subnet_manager=None)


def tier_of(loaded: LoadedSite, members: Mapping[str, Fabric]) -> tuple[Fabric, list[Finding]]:
    """The tier's Fabric from the members' Fabrics (whole or their `attachment`), and the findings of the rules
    across the designed clusters."""
    site = loaded.site
    bag_model = builtin_models()[site.bag.model]
    bags = tuple(bag_switches(site.bag, bag_model))
    tier = design_tier(loaded, members, bags, bag_model, site_prefix_limit(loaded), families(site.plan.backend))
    return tier, check_site_fabrics(loaded, members, tier)


def each_member(loaded: LoadedSite, findings: list[Finding]) -> Iterator[tuple[str, Fabric]]:
    """(cluster, its Fabric) of every member the site's spec designs, one at a time (a caller that keeps only figures
    holds one cluster at once); every member's findings (errors and warnings) added to `findings`."""
    for name, member in members_of(loaded).items():
        try:
            designed = design_spec(loaded.files[name], loaded.clusters[name], site=member)
        except SpecError as exc:
            findings += exc.findings
            continue
        findings += designed.warnings
        yield name, designed.fabric


def design_site(loaded: LoadedSite) -> SiteDesign:
    """Check and design the site; SpecError with every error (the site's and each cluster's)."""
    findings = check_site(loaded)
    if errors(findings):
        raise SpecError(findings)
    members = dict(each_member(loaded, findings))
    if errors(findings):
        raise SpecError(findings)
    tier, found = tier_of(loaded, members)
    findings += found
    if errors(findings):
        raise SpecError(findings)
    return SiteDesign(loaded, members, tier, findings)


def _uplinks(cluster: str, slot: int, f: Fabric) -> list[Uplink]:
    out = []
    for link in f.links:
        if link.kind != BAG_KIND:
            continue
        a = next(i for i in f.devices[link.a.device].interfaces if i.name == link.a.port)
        b = next(i for i in f.externals[link.b.device].interfaces if i.name == link.b.port)
        out.append(Uplink(cluster, slot, link.a.device, link.a.port, a.ordinal, link.b.device, link.b.port, b.ordinal,
                          link.speed_gbps, link.b.ipv4, link.b.ipv6, link.a.ipv4, link.a.ipv6))
    return out


def design_tier(loaded: LoadedSite, members: Mapping[str, Fabric], bags: tuple[BagSwitch, ...],
                bag_model: SwitchModel, limit: int,
                pools: dict[Family, tuple[str, ...]]) -> Fabric:
    """The tier's Fabric: the BAG switches with their routing, and every member's attached ATSWs as externals."""
    site = loaded.site
    first = next(iter(members.values()))
    draft = DraftFabric(site.site, site.location or site.site, "roce")
    draft.models[bag_model.name] = bag_model
    for b in bags:
        draft.add(bag_draft(b))
    atsw_names: dict[str, str] = {}
    mtu = 9100
    for slot, (cname, f) in enumerate(members.items()):
        ups = _uplinks(cname, slot, f)
        for u in ups:
            qn = qualified(cname, u.atsw)
            if qn not in draft.devices:
                a = f.devices[u.atsw]
                draft.models.setdefault(a.model, f.models[a.model])
                draft.add(Draft(qn, "atsw", a.model, a.nos, None, qualified(cname, a.rack), a.ru, a.height_ru,
                                asn=a.asn, loopback4=a.loopback4, loopback6=a.loopback6, router_id=a.router_id,
                                mgmt=a.mgmt, power_w=a.power_w, attrs={"cluster": cname}))
        mtu = next((i.mtu for d in f.devices.values() for i in d.interfaces if i.kind == BAG_KIND), mtu)
        wire_uplinks(draft, ups, mtu, site.bag.medium, {u.atsw: qualified(cname, u.atsw) for u in ups},
                     {b.name: b.name for b in bags})
        atsw_names.update({qualified(cname, u.atsw): cname for u in ups})
    bag_drafts = [draft.devices[b.name] for b in bags]
    draft.slot_room["backend"] = len(bags)
    assign_addresses(site.management, None, bag_drafts, draft)
    topology = draft.frozen()
    cluster0 = next(iter(loaded.clusters.values()))
    bgp = cluster0.backend.bgp if isinstance(cluster0.backend, RoceBackend) else None
    assert bgp is not None
    protection = Protection(bgp.password_secret, bgp.ttl_security_hops)
    mgmt = management_of(site.management, None)
    cache: BufferCache = {}
    devices: dict[str, Device] = {}
    externals: dict[str, Device] = {}
    for name, d in topology.items():
        if d.role != "bag":
            externals[name] = external(d)
            continue
        r = imports(routing(d, topology, bgp, limit, False, protection), topology, pools, False)
        devices[name] = replace(d, routing=r, qos=first.qos, management=mgmt, policy=first.policy,
                                buffers=buffers(draft.models[d.model], d.interfaces, cache))
    return Fabric(name=site.site, site=site.location or site.site, backend="roce", devices=MappingProxyType(devices),
                  links=tuple(draft.links), models=MappingProxyType(dict(sorted(draft.models.items()))),
                  qos=first.qos, management=mgmt, policy=first.policy,
                  oversubscription_goals=MappingProxyType({"atsw-bag": site.bag.oversubscription}),
                  externals=MappingProxyType(externals))


# ---------------------------------------------------------------------------------------------------- the whole site


def _renamed(d: Device, name: str, peer: Mapping[str, str]) -> Device:
    def port(x: str) -> str:
        dev, _, p = x.partition(":")
        return f"{peer.get(dev, dev)}:{p}"

    ifs = tuple(i._replace(peer=peer.get(i.peer, i.peer)) for i in d.interfaces)
    r = d.routing
    if r is not None:
        r = replace(r, neighbors=tuple(n._replace(peer=port(n.peer)) for n in r.neighbors))
    return replace(d, name=name, rack=peer.get(d.rack, d.rack), interfaces=ifs, routing=r)


def _end(e: End, names: Mapping[str, str]) -> End:
    return e._replace(device=names.get(e.device, e.device))


def merged(design: SiteDesign) -> Fabric:
    """`merge_site` of a designed site."""
    return merge_site(design.name, design.members, design.tier)


def merge_site(name: str, members: Mapping[str, Fabric], tier: Fabric) -> Fabric:
    """The whole site as one Fabric (from a design, or from the builds' fabric.json files): every cluster's devices
    named `<cluster>--<device>` (their racks too), the tier's BAG switches, the clusters' links and
    the tier's; what the twin runs and `teton verify` of a site checks."""
    devices: dict[str, Device] = {}
    links: list[Link] = []
    models = dict(tier.models)
    for cname, f in members.items():
        names = {n: qualified(cname, n) for n in f.devices}
        names.update({d.rack: qualified(cname, d.rack) for d in f.devices.values()})
        for n, d in f.devices.items():
            devices[names[n]] = _renamed(d, names[n], names)
        links += [link._replace(a=_end(link.a, names), b=_end(link.b, names), rack=names.get(link.rack, link.rack))
                  for link in f.links if link.kind != BAG_KIND]
        models.update(f.models)
    devices.update(tier.devices)
    links += tier.links
    first = next(iter(members.values()))
    return Fabric(name=name, site=tier.site, backend="roce",
                  devices=MappingProxyType(dict(sorted(devices.items()))), links=tuple(links),
                  models=MappingProxyType(dict(sorted(models.items()))), qos=first.qos, management=first.management,
                  policy=first.policy, oversubscription_goals=first.oversubscription_goals, hosts=first.hosts,
                  floor=None, monitoring=first.monitoring)


def cluster_of(name: str) -> tuple[str | None, str]:
    """(cluster, device) of a merged name; (None, name) for the tier's own switches."""
    c, sep, d = name.partition(SEPARATOR)
    return (c, d) if sep else (None, name)

