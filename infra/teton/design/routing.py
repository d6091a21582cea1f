"""Routing decisions: eBGP per RFC 7938 for every switch, decided once for every NOS.

Each switch peers with every switch neighbour on every link, one session per address family, in peer groups named by
the neighbours' tier and family (RTSW_V4 ...).  The upper end of a link waits for the lower to connect (passive), which
avoids connection collisions at start-up.  ECMP width (`maximum_paths`) is the most links towards one neighbour ASN:
with RFC 7938 ASNs (the ATSWs share one, the CTSWs of a zone share one) those are exactly the equal-cost paths.  A rack
switch originates its loopback and its rack's host block as one summary and sends nothing else (no transit through a
rack); the upper tiers pass on what they learn.  Hosts are no BGP speakers (their /31s are connected routes).
Every session carries a maximum-prefix limit; after a restart a switch holds its updates until its peers are up (no
black-holing while the RIB fills); a switch under maintenance (`backend.drain`) prepends its ASN three times to
everything it sends, so its peers route around it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from teton.fabric.intent import BgpTimers, Family, Neighbor, PeerGroup, Routing
from teton.fabric.model import Device
from teton.spec.model import Bgp

GROUP_NAME = {"rtsw": "RTSW", "ctsw": "CTSW", "atsw": "ATSW", "fe-rsw": "RSW", "fsw": "FSW", "ssw": "SSW"}
FAMILY_TAG = {"ipv4": "V4", "ipv6": "V6"}
RACK_ROLES = frozenset({"rtsw", "fe-rsw"})
STARTUP_HOLD_S = 120       # after a restart, hold updates until every peer is up, at most this long
DRAIN_PREPEND = 3          # a drained switch's paths are this much longer: every ECMP choice avoids it


def maximum_prefixes(devices: Iterable[Device]) -> dict[str, int]:
    """Per plane, the prefixes a session may carry: twice what the whole plane originates in its larger family, in
    thousands (a neighbour sending more is misconfigured or leaking, and the session is torn down)."""
    count: dict[tuple[str, str], int] = {}
    for d in devices:
        if d.nos is None:
            continue
        for fam, lo, aggs in (("4", d.loopback4, d.prefixes4), ("6", d.loopback6, d.prefixes6)):
            count[(d.plane, fam)] = count.get((d.plane, fam), 0) + (1 if lo else 0) + len(aggs)
    out: dict[str, int] = {}
    for (plane, _), n in count.items():
        out[plane] = max(out.get(plane, 0), -(-2 * n // 1000) * 1000, 1000)
    return out


def routing(d: Device, devices: Mapping[str, Device], bgp: Bgp, max_prefixes: int, drained: bool,
            default_originate: bool = False) -> Routing:
    """The routing intent of switch `d`; `bgp` is the spec's BGP section (the front end uses the backend's timers
    and no password); `default_originate`: it sends a default route down (a front-end spine towards the site)."""
    groups: dict[str, PeerGroup] = {}
    neighbors: list[Neighbor] = []
    links_per_asn: dict[int | None, int] = {}
    for i in d.interfaces:
        peer = devices[i.peer]
        if peer.role not in GROUP_NAME:
            continue
        links_per_asn[peer.asn] = links_per_asn.get(peer.asn, 0) + 1
        fam: Family
        for fam, local, remote in (("ipv4", i.ipv4, i.peer_ipv4), ("ipv6", i.ipv6, i.peer_ipv6)):
            if not remote or not local or peer.asn is None:
                continue
            name = f"{GROUP_NAME[peer.role]}_{FAMILY_TAG[fam]}"
            if name not in groups:
                groups[name] = PeerGroup(name, fam, "up" if i.direction == "up" else "down",
                                         passive=i.direction != "up")
            neighbors.append(Neighbor(remote, fam, peer.asn, name, i.name, local.split("/", 1)[0],
                                      f"{peer.name}:{i.peer_port}"))
    t = bgp.timers
    assert d.asn is not None and d.router_id is not None
    return Routing(
        asn=d.asn, router_id=d.router_id,
        groups=tuple(sorted(groups.values(), key=lambda g: (g.direction != "up", g.name))),
        neighbors=tuple(neighbors), maximum_paths=max(links_per_asn.values(), default=1),
        timers=BgpTimers(t.keepalive, t.hold, t.connect_retry), bfd=bgp.bfd,
        password_secret=bgp.password_secret if d.plane == "backend" else None,
        loopback4=d.loopback4, loopback6=d.loopback6, aggregates4=d.prefixes4, aggregates6=d.prefixes6,
        transit=d.role not in RACK_ROLES, maximum_prefixes=max_prefixes, startup_hold_s=STARTUP_HOLD_S,
        drain_prepend=DRAIN_PREPEND if drained else 0, default_originate=default_originate)
