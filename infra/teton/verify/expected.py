"""What the design promises, as the same model: each routed switch's routing intent (the build's fabric.json) spelled
as the BGP view its files would give if nobody edited them, solved like the files.

The route-policy layout is the design's own (`teton.frr.policy`: LOCAL_/ORIGINATE_ prefix lists, CONNECTED_ and
EXPORT_ route maps, a transit switch's EXPORT permitting everything), the sessions are the design's neighbours, the
ports its interfaces, `maximum-paths` its ECMP width.  Solved without failures and under the same failures as the
files, it gives per switch and prefix the AS-path length and ECMP width the design promises: with eBGP on RFC 7938
tiers these are `teton.expect`'s (valley-free shortest paths whose ASNs do not repeat, one next hop per link), which
tests/verify hold equal for every switch and rack of the lab.
"""

from __future__ import annotations

from teton.fabric.bgpview import (
    BgpFamily,
    BgpPeer,
    BgpView,
    PortAddress,
    PrefixListView,
    PrefixRule,
    RouteMapClause,
    RouteMapView,
    password_ref,
)
from teton.fabric.model import Device, Fabric
from teton.frr.policy import route_policy
from teton.secrets import secret_ref


def design_view(d: Device) -> BgpView | None:
    """The BGP view the design gives switch `d` (None: it runs no BGP)."""
    r = d.routing
    if r is None:
        return None
    policies = route_policy(r)
    export = {p.family: p.export.name for p in policies}
    groups = {g.name: g for g in r.groups}
    password = password_ref(secret_ref(r.password_secret)) if r.password_secret else None
    peers = []
    for n in r.neighbors:
        g = groups.get(n.group)
        default = (n.family,) if r.default_originate and g is not None and g.direction == "down" else ()
        peers.append(BgpPeer(
            address=n.address, remote_as=n.remote_as, group=n.group, families=(n.family,), password=password,
            passive=bool(g and g.passive), shutdown=False, route_map_out=((n.family, export[n.family]),),
            default_originate=default, maximum_prefix=r.maximum_prefixes, local_port=n.interface,
            local_address=n.local_address, where="fabric.json"))
    families = []
    for p in policies:
        aggregates = r.aggregates4 if p.family == "ipv4" else r.aggregates6
        families.append(BgpFamily(p.family, True, p.connected.name, (), tuple((a, True) for a in aggregates),
                                  r.maximum_paths))
    ports = [PortAddress(i.name, a) for i in d.interfaces for a in (i.ipv4, i.ipv6) if a]
    return BgpView(
        name=d.name, file="fabric.json", asn=r.asn, router_id=r.router_id, multipath_relax=True,
        peers=tuple(sorted(peers, key=lambda p: p.address)), families=tuple(families),
        prefix_lists=tuple(PrefixListView(pl.name, p.family, tuple(PrefixRule(e.seq, True, e.prefix, None, e.le)
                                                                    for e in pl.entries))
                           for p in policies for pl in (p.local, p.originate)),
        route_maps=tuple(RouteMapView(rm.name, (RouteMapClause(rm.seq, True, (rm.match,) if rm.match else (),
                                                               rm.prepend),))
                         for p in policies for rm in (p.connected, p.export)),
        ports=tuple(ports), loopbacks=tuple(x for x in (d.loopback4, d.loopback6) if x))


def design_views(fabric: Fabric) -> list[BgpView]:
    return [v for d in fabric.devices.values() if d.routing is not None and (v := design_view(d)) is not None]


def design_originations(fabric: Fabric) -> dict[str, set[str]]:
    """{switch: the prefixes the design has it announce}: its loopbacks and aggregates (and the default route where it
    originates one)."""
    out: dict[str, set[str]] = {}
    for d in fabric.devices.values():
        r = d.routing
        if r is None:
            continue
        fams = r.families()
        mine = {x for x in (r.loopback4 if "ipv4" in fams else None, r.loopback6 if "ipv6" in fams else None) if x}
        mine |= set(r.aggregates4) | set(r.aggregates6)
        out[d.name] = mine
    return out
