"""The rules across a site's clusters: what no cluster spec alone can see.

Before design (`check_site`): every cluster's pools inside the site's plan, no address shared by two clusters or by a
cluster and the tier, each cluster's ASNs inside the site's range and apart from the others' and the tier's, the
hostnames a management domain must keep apart, the BAG model, the tier's ports for the site's room.  After design
(`check_site_fabrics`): each ATSW's oversubscription into the tier against the goal, and every cluster's backend QoS
and BGP session protection the same (an ATSW and a BAG switch must agree on both ends of their link).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from teton.catalogue import builtin_models
from teton.catalogue.ports import port_map
from teton.design.site import BAG_KIND, slot_ports
from teton.fabric.model import Fabric
from teton.findings import Finding
from teton.spec.model import Addressing, Cluster, RoceBackend

if TYPE_CHECKING:
    from teton.site.load import LoadedSite

Net = ipaddress.IPv4Network | ipaddress.IPv6Network
TOLERANCE = 0.10      # as the cluster's `oversubscription` rule: more than 10 % off the goal is a finding


def _pools(a: Addressing | None, where: str) -> Iterator[tuple[str, Net]]:
    if a is None:
        return
    for fam in ("ipv4", "ipv6"):
        p = getattr(a, fam)
        if p is None:
            continue
        for k in ("loopbacks", "fabric_links", "host_links"):
            v = getattr(p, k)
            if v is not None:
                yield f"{where}.{fam}.{k}", ipaddress.ip_network(v)


def cluster_pools(c: Cluster) -> list[tuple[str, str, Net]]:
    """(plane, spec path, network) of every pool of `c` the site's plan covers."""
    out: list[tuple[str, str, Net]] = []
    if isinstance(c.backend, RoceBackend):
        out += [("backend", p, n) for p, n in _pools(c.backend.addressing, "backend.addressing")]
    if c.frontend is not None:
        out += [("frontend", p, n) for p, n in _pools(c.frontend.addressing, "frontend.addressing")]
    if c.management.network is not None:
        out.append(("management", "management.network", ipaddress.ip_network(c.management.network)))
    return out


def _inside(n: Net, blocks: list[str]) -> bool:
    return any(_within(n, ipaddress.ip_network(b)) for b in blocks)


def _within(n: Net, block: Net) -> bool:
    if isinstance(n, ipaddress.IPv4Network) and isinstance(block, ipaddress.IPv4Network):
        return n.subnet_of(block)
    if isinstance(n, ipaddress.IPv6Network) and isinstance(block, ipaddress.IPv6Network):
        return n.subnet_of(block)
    return False


def _asns(c: Cluster) -> tuple[int, int] | None:
    """The lowest and highest backend ASN the cluster's plan can hand out (ATSW, CTSW per zone, RTSW per rack)."""
    if not isinstance(c.backend, RoceBackend):
        return None
    a = c.backend.asn
    zones = c.zones if c.room is None or c.room.zones is None else max(c.zones, c.room.zones)
    racks = c.racks_per_zone if c.room is None or c.room.racks_per_zone is None else max(
        c.racks_per_zone, c.room.racks_per_zone)
    values = (a.atsw, a.ctsw, a.ctsw + zones, a.rtsw, a.rtsw + zones * a.rtsw_zone_stride + racks)
    return min(values), max(values)


def check_site(loaded: LoadedSite) -> list[Finding]:
    site = loaded.site
    spec = str(loaded.path)
    out: list[Finding] = []
    models = builtin_models()
    if site.bag.model not in models:
        out.append(Finding(spec, "bag.model", f"{site.bag.model!r} is not in the switch catalogue", rule="site-tier"))
        return out
    model = models[site.bag.model]
    if site.bag.nos not in model.nos:
        out.append(Finding(spec, "bag.nos", f"{model.name} runs {', '.join(model.nos)}, not {site.bag.nos}",
                           rule="site-tier"))
        return out
    if site.bag.planes > site.bag.count:
        out.append(Finding(spec, "bag.planes", f"{site.bag.planes} planes for {site.bag.count} BAG switches",
                           rule="site-tier"))
    ports = [p for p in port_map(model, site.bag.nos) if p.speed_gbps >= site.bag.uplink_speed_gbps]
    need = site.room.clusters * slot_ports(site.bag, site.room.atsw_per_cluster)
    if need > len(ports):
        out.append(Finding(spec, "room", f"the tier is laid out for {site.room.clusters} clusters of up to "
                           f"{site.room.atsw_per_cluster} ATSWs: {need} ports of {site.bag.uplink_speed_gbps}G on each "
                           f"BAG switch, and a {model.name} has {len(ports)}", rule="site-room"))
    taken: list[tuple[str, str, Net]] = [("the tier", p, n) for p, n in _pools(site.bag.addressing, "bag.addressing")]
    for p, n in _pools(site.bag.addressing, "bag.addressing"):
        if p.endswith("loopbacks") and not _inside(n, site.plan.backend):
            out.append(Finding(spec, p, f"{n} is not inside the site's backend plan (plan.backend): the clusters' "
                               "switches would refuse the tier's loopbacks", rule="site-plan"))
    asns: list[tuple[str, tuple[int, int]]] = [("the tier", (site.bag.asn, site.bag.asn))]
    domains: dict[str | None, str] = {}
    for k, (name, c) in enumerate(loaded.clusters.items()):
        file = str(loaded.files[name])
        if name == site.site:
            out.append(Finding(spec, f"clusters[{k}].name", f"cluster {name!r} has the site's name: the site's build "
                               f"folder {name}/ holds the tier's build (teton render SITE -o OUT writes OUT/<cluster>/ "
                               "and OUT/<site>/); rename the cluster or the site", rule="site-names"))
        for plane, path, n in cluster_pools(c):
            blocks = getattr(site.plan, plane)
            if blocks and not _inside(n, blocks):
                out.append(Finding(file, path, f"{n} of cluster {name} is not inside the site's {plane} plan "
                                   f"({', '.join(blocks)}) of {spec} (plan.{plane})", rule="site-plan"))
            for other, opath, m in taken:
                if n.version == m.version and n.overlaps(m):
                    out.append(Finding(file, path, f"{n} of cluster {name} overlaps {m} of {other} ({opath})",
                                       rule="site-plan"))
        taken += [(f"cluster {name}", p, n) for _, p, n in cluster_pools(c)]
        span = _asns(c)
        if span is not None:
            lo, hi = span
            if lo < site.plan.asn_first or hi > site.plan.asn_last:
                out.append(Finding(file, "backend.asn", f"cluster {name}'s ASNs {lo}-{hi} are not inside the site's "
                                   f"range {site.plan.asn_first}-{site.plan.asn_last} (plan.asn_first, plan.asn_last "
                                   f"of {spec})", rule="site-plan"))
            for other, (a, b) in asns:
                if lo <= b and a <= hi:
                    out.append(Finding(file, "backend.asn", f"cluster {name}'s ASNs {lo}-{hi} overlap {other}'s "
                                       f"{a}-{b}: a route would carry a path through both and be dropped as a loop "
                                       "(RFC 4271 9.1.2)", rule="site-plan"))
            asns.append((f"cluster {name}", span))
        domain = c.management.domain
        if domain in domains:
            out.append(Finding(spec, f"clusters[{k}]", f"clusters {domains[domain]} and {name} share the management "
                               f"domain {domain or '(none)'}: their devices have the same names (z01-r001-rtsw ...); "
                               "give each cluster a domain of its own (management.domain)", rule="site-names"))
        domains.setdefault(domain, name)
        if not isinstance(c.backend, RoceBackend):
            out.append(Finding(file, "backend.kind", f"cluster {name}: a site's tier joins RoCE backends; "
                               "an InfiniBand cluster has no ATSW to attach", rule="site-tier"))
        elif c.backend.atsw.count > site.room.atsw_per_cluster:
            out.append(Finding(file, "backend.atsw.count", f"cluster {name} has {c.backend.atsw.count} ATSWs; the "
                               f"site's room holds {site.room.atsw_per_cluster} per cluster (room.atsw_per_cluster of "
                               f"{spec})", rule="site-room"))
    return out


def check_site_fabrics(loaded: LoadedSite, members: Mapping[str, Fabric], tier: Fabric) -> list[Finding]:
    site = loaded.site
    spec = str(loaded.path)
    out: list[Finding] = []
    goal = site.bag.oversubscription
    first_name, first = next(iter(members.items()))
    for name, f in members.items():
        file = str(loaded.files[name])
        worst = None
        for a in f.by_role("atsw"):
            down = sum(i.speed_gbps for i in a.interfaces if i.direction == "down")
            up = sum(i.speed_gbps for i in a.interfaces if i.kind == BAG_KIND)
            ratio = down / up if up else float("inf")
            if worst is None or abs(ratio - goal) > abs(worst[1] - goal):
                worst = (a.name, ratio, down, up)
        if worst is not None and abs(worst[1] - goal) > TOLERANCE * goal:
            out.append(Finding(spec, "bag.oversubscription", f"cluster {name}: {worst[0]} has {worst[2]}G down and "
                               f"{worst[3]}G into the tier, {worst[1]:.2f}:1, more than 10 % off the goal {goal}:1 "
                               "(bag.count, bag.planes, bag.uplinks_per_atsw)", rule="site-oversubscription"))
        if name == first_name:
            continue
        if f.qos != first.qos:
            out.append(Finding(file, "backend.qos", f"cluster {name}'s backend QoS differs from cluster "
                               f"{first_name}'s: RoCE between them crosses both (DSCP, priorities, PFC and ECN must "
                               "be the same on every hop)", rule="site-tier"))
        ca, cb = loaded.clusters[name].backend, loaded.clusters[first_name].backend
        if isinstance(ca, RoceBackend) and isinstance(cb, RoceBackend) and (
                ca.bgp.password_secret, ca.bgp.ttl_security_hops) != (cb.bgp.password_secret, cb.bgp.ttl_security_hops):
            out.append(Finding(file, "backend.bgp", f"cluster {name}'s BGP session protection (password secret, "
                               f"GTSM) differs from cluster {first_name}'s: the tier's switches sign every session "
                               "alike", rule="site-tier"))
    del tier
    return out
