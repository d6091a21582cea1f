"""Routing decisions: eBGP per RFC 7938 for every switch, decided once for every NOS.

Each switch peers with every switch neighbour on every link, one session per address family, in peer groups named by
the neighbours' tier and family (RTSW_V4 ...).  The upper end of a link waits for the lower to connect (passive), which
avoids connection collisions at start-up.  ECMP width (`maximum_paths`) is the most links towards one neighbour ASN:
with RFC 7938 ASNs (the ATSWs share one, the CTSWs of a zone share one) those are exactly the equal-cost paths.  A rack
switch originates its loopback and its rack's host block as one summary and sends nothing else (no transit through a
rack); the upper tiers pass on what they learn.  Hosts are no BGP speakers (their /31s are connected routes).
Every session carries a maximum-prefix limit, past which it is torn down and retried after 5 minutes (not left down
until someone clears it); after a restart a switch holds its updates until its peers are up (no
black-holing while the RIB fills); a switch under maintenance (`backend.drain`) prepends its ASN three times to
everything it sends, so its peers route around it.
Every session of a plane is protected alike (`session_protection`): the plane's password (TCP-MD5, RFC 2385) and,
where the spec asks, GTSM (RFC 5082, `ttl_security_hops`).  A plane with a switch whose NOS signs no session (FBOSS's
BGP++ has no password field) runs GTSM instead of the password on all its sessions (hops 1, as a password the other
end sends and it does not would keep every session down).

Every session filters what it receives (`imports`): from a rack switch only its own loopback and rack aggregates, from
any other switch only the plane's prefixes (its loopback and host-link pools, any length inside them), and a default
route only from above, and only in a plane where a switch originates one (the front-end spines): a rack switch that
announces another rack's prefix, or a default, is ignored by its peers instead of drawing that traffic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import NamedTuple

from teton.design.room import Room
from teton.fabric.intent import Accept, BgpTimersIntent, Family, ImportPolicy, Neighbor, PeerGroup, Routing
from teton.fabric.model import Device
from teton.fabric.roles import of_tier, role
from teton.spec.model import Addressing, Bgp, Cluster, RoceBackend

FAMILY_TAG = {"ipv4": "V4", "ipv6": "V6"}
STARTUP_HOLD_S = 120       # after a restart, hold updates until every peer is up, at most this long
MAXIMUM_PREFIX_RESTART_MIN = 5   # a session torn down by its prefix limit comes back after this long
MAX_ECMP = 64              # the widest ECMP width the room keeps (no design here spreads over more next hops)
DRAIN_PREPEND = 3          # a drained switch's paths are this much longer: every ECMP choice avoids it


UNSIGNED_NOS = frozenset({"fboss"})   # NOSes whose BGP has no session password (BGP++'s BgpConfig has no field)
GTSM_HOPS = 1              # the fabric's eBGP is between directly connected switches


class Protection(NamedTuple):
    """How the sessions of one plane are protected: the password's secret and GTSM's hops (None: not used)."""

    password_secret: str | None
    ttl_security_hops: int | None


def session_protection(cluster: Cluster, topology: Mapping[str, Device]) -> dict[str, Protection]:
    """Per plane, the password and GTSM of its sessions: the spec's (`backend.bgp`, `frontend`), except on a plane
    with a switch whose NOS has no session password, where GTSM (at least hops 1) replaces a password."""
    be, fe = cluster.backend, cluster.frontend
    wanted = {"backend": Protection(be.bgp.password_secret, be.bgp.ttl_security_hops) if isinstance(be, RoceBackend)
              else Protection(None, None),
              "frontend": Protection(fe.password_secret, fe.ttl_security_hops) if fe is not None
              else Protection(None, None)}
    unsigned = {d.plane for d in topology.values() if d.nos in UNSIGNED_NOS}
    out: dict[str, Protection] = {}
    for plane, p in wanted.items():
        if plane in unsigned and p.password_secret is not None:
            p = Protection(None, p.ttl_security_hops or GTSM_HOPS)
        out[plane] = p
    return out


def maximum_prefixes(cluster: Cluster, room: Room) -> dict[str, int]:
    """Per plane, the prefixes a session may carry: twice what the whole plane would originate at its full room
    (`teton.design.room`) in its larger family, in thousands (a neighbour sending more is misconfigured or leaking,
    and the session is torn down).  A ceiling from the declared room, never from what exists now: growing within the
    room rewrites no session's limit."""
    planes: dict[str, tuple[int, int, Addressing]] = {}    # plane -> (switches, rack aggregates, its addressing)
    be, fe = cluster.backend, cluster.frontend
    if isinstance(be, RoceBackend):
        racks = room.zones * room.racks_per_zone
        planes["backend"] = (room.atsw + room.zones * be.ctsw.per_zone + racks, racks, be.addressing)
    if fe is not None:
        racks = room.zones * room.racks_per_zone + room.zone0_racks
        spines = fe.fsw_per_zone * room.ssw_per_plane if fe.ssw is not None else 0
        planes["frontend"] = ((room.zones + 1) * fe.fsw_per_zone + spines + racks, racks, fe.addressing)
    out: dict[str, int] = {}
    for plane, (switches, aggregates, addressing) in planes.items():
        n = max((switches if p.loopbacks else 0) + (aggregates if p.host_links else 0)
                for p in (addressing.ipv4, addressing.ipv6) if p is not None)
        out[plane] = max(-(-2 * n // 1000) * 1000, 1000)
    return out


def paths_room(cluster: Cluster, room: Room) -> dict[str, int]:
    """The ECMP width a role keeps for neighbours its room may add (one ASN for every ATSW, and for the spines of a
    plane): a CTSW's towards its room of ATSWs, an FSW's towards its plane's room of spines."""
    out: dict[str, int] = {}
    be, fe = cluster.backend, cluster.frontend
    if isinstance(be, RoceBackend):
        out["ctsw"] = min(MAX_ECMP, room.atsw * be.ctsw.uplinks_per_atsw)
    if fe is not None and fe.ssw is not None:
        out["fsw"] = min(MAX_ECMP, room.ssw_per_plane * fe.ssw.uplinks_per_ssw)
    return out


def routing(d: Device, devices: Mapping[str, Device], bgp: Bgp, max_prefixes: int, drained: bool,
            protection: Protection = Protection(None, None), default_originate: bool = False,
            paths_floor: int = 0) -> Routing:
    """The routing intent of switch `d`; `bgp` is the spec's BGP section (the front end uses the backend's timers);
    `protection`: its plane's password and GTSM (`session_protection`); `default_originate`: it sends a default
    route down (a front-end spine towards the site); `paths_floor`: the ECMP width kept for the room
    (`paths_room`)."""
    groups: dict[str, PeerGroup] = {}
    neighbors: list[Neighbor] = []
    links_per_asn: dict[int | None, int] = {}
    for i in d.interfaces:
        peer = devices[i.peer]
        tier = role(peer.role)
        if tier is None or tier.peer_group is None:    # a server: no BGP speaker
            continue
        links_per_asn[peer.asn] = links_per_asn.get(peer.asn, 0) + 1
        fam: Family
        for fam, local, remote in (("ipv4", i.ipv4, i.peer_ipv4), ("ipv6", i.ipv6, i.peer_ipv6)):
            if not remote or not local or peer.asn is None:
                continue
            name = f"{tier.peer_group}_{FAMILY_TAG[fam]}"
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
        neighbors=tuple(neighbors), maximum_paths=max(*links_per_asn.values(), paths_floor, 1),
        timers=BgpTimersIntent(t.keepalive, t.hold, t.connect_retry), bfd=bgp.bfd,
        password_secret=protection.password_secret, ttl_security_hops=protection.ttl_security_hops,
        loopback4=d.loopback4, loopback6=d.loopback6, aggregates4=d.prefixes4, aggregates6=d.prefixes6,
        transit=d.role not in of_tier("rack"), maximum_prefixes=max_prefixes,
        maximum_prefix_restart_min=MAXIMUM_PREFIX_RESTART_MIN, startup_hold_s=STARTUP_HOLD_S,
        drain_prepend=DRAIN_PREPEND if drained else 0, default_originate=default_originate)


MAX_LEN: dict[Family, int] = {"ipv4": 32, "ipv6": 128}
DEFAULT_ROUTE: dict[Family, str] = {"ipv4": "0.0.0.0/0", "ipv6": "::/0"}


def supernets(cluster: Cluster) -> dict[str, dict[Family, tuple[str, ...]]]:
    """Per plane and family, the pools whose prefixes its switches announce: the loopbacks and the host links (the
    fabric links' /31s are connected routes nobody announces)."""
    planes: dict[str, Addressing] = {}
    if isinstance(cluster.backend, RoceBackend):
        planes["backend"] = cluster.backend.addressing
    if cluster.frontend is not None:
        planes["frontend"] = cluster.frontend.addressing
    out: dict[str, dict[Family, tuple[str, ...]]] = {}
    for plane, addressing in planes.items():
        fams: dict[Family, tuple[str, ...]] = {}
        fam: Family
        for fam, pools in (("ipv4", addressing.ipv4), ("ipv6", addressing.ipv6)):
            if pools is not None:
                fams[fam] = tuple(str(p) for p in (pools.loopbacks, pools.host_links) if p is not None)
        out[plane] = fams
    return out


AcceptCache = dict[tuple[str, Family], tuple[Accept, ...]]


def imports(r: Routing, devices: Mapping[str, Device], pools: Mapping[Family, tuple[str, ...]],
            default_from_above: bool, accepts: AcceptCache | None = None) -> Routing:
    """`r` with what each neighbour may send it (`Routing.imports`): a rack switch its loopback and aggregates exactly
    (IMPORT_<its name>_<tag>, one per rack switch); the other neighbours of a group the plane's `pools` and their
    more-specifics, and the default route too on an uplink group when `default_from_above` (IMPORT_<group>).
    `accepts`: a rack switch's accepted prefixes by (its name, family), kept across the calls of one design (every
    switch above a rack switch accepts the same from it: on the 24k, made once per rack switch, not per session)."""
    if accepts is None:
        accepts = {}
    racks = of_tier("rack")
    side = {g.name: g.direction for g in r.groups}
    per_group: dict[str, list[str]] = {}
    per_rack: dict[tuple[str, Family], list[str]] = {}
    for n in r.neighbors:
        peer = devices[n.peer.split(":", 1)[0]]
        if peer.role in racks:
            per_rack.setdefault((peer.name, n.family), []).append(n.address)
        else:
            per_group.setdefault(n.group, []).append(n.address)
    policies: list[ImportPolicy] = []
    for (name, fam), addresses in per_rack.items():
        exact = accepts.get((name, fam))
        if exact is None:
            peer = devices[name]
            lo = peer.loopback4 if fam == "ipv4" else peer.loopback6
            own = ((lo,) if lo else ()) + (peer.prefixes4 if fam == "ipv4" else peer.prefixes6)
            exact = accepts[(name, fam)] = tuple(Accept(p) for p in own)
        policies.append(ImportPolicy(f"IMPORT_{name}_{FAMILY_TAG[fam]}", fam, tuple(addresses), exact))
    group_family = {g.name: g.family for g in r.groups}
    for group, addresses in per_group.items():
        fam = group_family[group]
        accept = [Accept(p, None, MAX_LEN[fam]) for p in pools.get(fam, ())]
        if default_from_above and side[group] == "up":
            accept.append(Accept(DEFAULT_ROUTE[fam]))
        policies.append(ImportPolicy(f"IMPORT_{group}", fam, tuple(addresses), tuple(accept)))
    return replace(r, imports=tuple(sorted(policies, key=lambda p: p.name)))
