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

from teton.fabric.bgpview import BgpView, PortAddress
from teton.fabric.model import Device, Fabric
from teton.frr.policy import routing_view


def design_view(d: Device) -> BgpView | None:
    """The BGP view the design gives switch `d` (None: it runs no BGP)."""
    r = d.routing
    if r is None:
        return None
    ports = [PortAddress(i.name, a) for i in d.interfaces for a in (i.ipv4, i.ipv6) if a]
    return routing_view(d.name, "fabric.json", r, ports, (x for x in (d.loopback4, d.loopback6) if x))


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
