"""The route-policy layout of a routing intent, as data: the prefix lists and route maps every switch carries per
address family, with their names and sequence numbers.  The FRR spelling (`teton.targets.frr`) and the EOS spelling
(`teton.targets.eos.structured`) both write this, so the two NOSes filter alike by construction.

Per family with neighbours (tag V4 or V6):
- LOCAL_<tag>: the loopback (sequence 10) and each aggregate with its more-specifics (20, 30, ...);
- ORIGINATE_<tag>: the same prefixes exactly (the loopback and the aggregates, nothing more specific);
- CONNECTED_<tag> (sequence 10): connected routes are redistributed only when LOCAL_<tag> matches them;
- EXPORT_<tag> (sequence 10), applied outbound to every peer group: on a transit switch it matches nothing (permits
  everything), on a rack switch only ORIGINATE_<tag>; a drained switch prepends its ASN the intent's count of times.

Inbound, one pair per import policy of the intent (`Routing.imports`, decided by `teton.design.routing.imports`):
- IMPORT_<x>: the prefix list of what those neighbours may send (sequence 10, 20, ..., with ge/le as the design says)
  and the route map of the same name (sequence 10) permitting only what it matches, applied inbound: to the peer group
  when the policy's neighbours are all of the group's, else to each neighbour (`import_targets`).  IMPORT_<group> for
  the neighbours of a group (the plane's prefixes, the default route from above where the design has one),
  IMPORT_<rack switch>_<tag> for each rack switch (its loopback and aggregates).  Every session thus has a policy in
  and out (FRR runs `bgp ebgp-requires-policy`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

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
from teton.fabric.intent import Accept, BgpTimersIntent, Direction, Family, ImportPolicy, Neighbor, PeerGroup, Routing
from teton.secrets import secret_ref

TAG: dict[Family, str] = {"ipv4": "V4", "ipv6": "V6"}
MAX_LEN: dict[Family, int] = {"ipv4": 32, "ipv6": 128}


@dataclass(frozen=True)
class PrefixEntry:
    """A permit line of a prefix list: `prefix`, and with `le` its more-specifics up to that length (`ge`: from that
    length)."""

    seq: int
    prefix: str
    le: int | None = None
    ge: int | None = None


@dataclass(frozen=True)
class PrefixList:
    name: str
    entries: tuple[PrefixEntry, ...]


@dataclass(frozen=True)
class RouteMap:
    """A one-entry permit route map: matching the prefix list `match` (None: everything), prepending `prepend`."""

    name: str
    seq: int
    match: str | None
    prepend: tuple[int, ...] = ()


@dataclass(frozen=True)
class FamilyPolicy:
    """The policy objects of one address family of a switch."""

    family: Family
    local: PrefixList
    originate: PrefixList
    connected: RouteMap
    export: RouteMap


def family_policy(r: Routing, family: Family) -> FamilyPolicy:
    tag = TAG[family]
    lo = r.loopback4 if family == "ipv4" else r.loopback6
    aggregates = r.aggregates4 if family == "ipv4" else r.aggregates6
    first = (PrefixEntry(10, lo),) if lo else ()
    local = PrefixList(f"LOCAL_{tag}", first + tuple(PrefixEntry(20 + 10 * k, a, MAX_LEN[family])
                                                     for k, a in enumerate(aggregates)))
    originate = PrefixList(f"ORIGINATE_{tag}", first + tuple(PrefixEntry(20 + 10 * k, a)
                                                             for k, a in enumerate(aggregates)))
    return FamilyPolicy(
        family=family, local=local, originate=originate,
        connected=RouteMap(f"CONNECTED_{tag}", 10, local.name),
        export=RouteMap(f"EXPORT_{tag}", 10, None if r.transit else originate.name, (r.asn,) * r.drain_prepend))


def route_policy(r: Routing) -> tuple[FamilyPolicy, ...]:
    """The policy of every address family the intent has neighbours in, in the intent's family order."""
    return tuple(family_policy(r, fam) for fam in r.families())


@dataclass(frozen=True)
class Import:
    """One import policy spelled: its prefix list and route map (one name), and whom it applies to inbound (peer
    group names and neighbour addresses, `import_targets`)."""

    family: Family
    prefix_list: PrefixList
    route_map: RouteMap
    targets: tuple[str, ...]


def import_targets(r: Routing, imp: ImportPolicy,
                   groups: dict[tuple[Family, frozenset[str]], str] | None = None) -> tuple[str, ...]:
    """Where import policy `imp` is applied: a peer group whose neighbours are exactly the policy's (of its family),
    else each of its neighbours by address.  `groups`: `_groups_by_members(r)`, when the caller has it (one pass over
    the neighbours per intent, not one per policy and group)."""
    if groups is None:
        groups = _groups_by_members(r)
    group = groups.get((imp.family, frozenset(imp.neighbors)))
    return (group,) if group is not None else tuple(dict.fromkeys(imp.neighbors))


def _groups_by_members(r: Routing) -> dict[tuple[Family, frozenset[str]], str]:
    """{(family, the addresses of a group's neighbours of that family): the first such group of that family in
    `r.groups`}, groups without such neighbours left out: what `import_targets` looks a policy's neighbours up in
    (tests/frr/test_policy_imports.py holds it equal to the scan of every group per policy)."""
    members: dict[tuple[str, Family], set[str]] = {}
    for n in r.neighbors:
        members.setdefault((n.group, n.family), set()).add(n.address)
    out: dict[tuple[Family, frozenset[str]], str] = {}
    for g in r.groups:
        mine = members.get((g.name, g.family))
        if mine:
            out.setdefault((g.family, frozenset(mine)), g.name)
    return out


def import_policy(r: Routing, family: Family) -> tuple[Import, ...]:
    """The inbound policy objects of one family, by name."""
    out = []
    groups = _groups_by_members(r)
    for imp in sorted(r.imports, key=lambda i: i.name):
        if imp.family != family:
            continue
        pl = _prefix_list(imp.name, imp.accept)
        out.append(Import(family, pl, RouteMap(imp.name, 10, pl.name),
                          import_targets(r, imp, groups)))
    return tuple(out)


# {(policy name, id of its accept tuple): (that tuple, its prefix list)}: the design gives every switch above a rack
# switch one shared tuple of what it accepts from it (`teton.design.routing.imports`), so a 24k spine's 400 prefix
# lists are made once per rack switch, not once per spine; the tuple is held with its entry, so its id is not reused
# while the entry lives, and the entries are dropped together past `_PREFIX_LISTS_MAX`
_PREFIX_LISTS: dict[tuple[str, int], tuple[tuple[Accept, ...], PrefixList]] = {}
_PREFIX_LISTS_MAX = 65_536


def _prefix_list(name: str, accept: tuple[Accept, ...]) -> PrefixList:
    """The prefix list of import policy `name`, one permit line per accepted prefix (frozen: shared)."""
    hit = _PREFIX_LISTS.get((name, id(accept)))
    if hit is not None and hit[0] is accept:
        return hit[1]
    pl = PrefixList(name, tuple(PrefixEntry(10 * (k + 1), a.prefix, a.le, a.ge) for k, a in enumerate(accept)))
    if len(_PREFIX_LISTS) >= _PREFIX_LISTS_MAX:
        _PREFIX_LISTS.clear()
    _PREFIX_LISTS[(name, id(accept))] = (accept, pl)
    return pl


def routing_view(name: str, file: str, r: Routing, ports: Iterable[PortAddress], loopbacks: Iterable[str],
                 where: Callable[[int], str] = lambda k: "fabric.json") -> BgpView:
    """A routing intent as the NOS-neutral BGP view (`teton.fabric.bgpview`) its files give if nobody edited them:
    this route-policy layout, the intent's neighbours (`where(k)`: where the k-th is configured), `maximum-paths` its
    ECMP width.  What `teton verify` solves the design with, and the view of a read-back that gives a routing intent
    (FBOSS's BGP++ config)."""
    policies = route_policy(r)
    export = {p.family: p.export.name for p in policies}
    inbound = [i for p in policies for i in import_policy(r, p.family)]
    map_in = {(i.family, a): i.name for i in r.imports for a in i.neighbors}
    groups = {g.name: g for g in r.groups}
    password = password_ref(secret_ref(r.password_secret)) if r.password_secret else None
    peers = []
    for k, n in enumerate(r.neighbors):
        g = groups.get(n.group)
        default = (n.family,) if r.default_originate and g is not None and g.direction == "down" else ()
        peers.append(BgpPeer(
            address=n.address, remote_as=n.remote_as, group=n.group, families=(n.family,), password=password,
            passive=bool(g and g.passive), shutdown=False, route_map_out=((n.family, export[n.family]),),
            route_map_in=((n.family, map_in[(n.family, n.address)]),) if (n.family, n.address) in map_in else (),
            default_originate=default, maximum_prefix=r.maximum_prefixes,
            maximum_prefix_restart_min=r.maximum_prefix_restart_min, timers=r.timers, bfd=r.bfd,
            ttl_security=r.ttl_security_hops, side=g.direction if g is not None else None, description=n.peer,
            local_port=n.interface,
            local_address=n.local_address, where=where(k)))
    families = []
    for p in policies:
        aggregates = r.aggregates4 if p.family == "ipv4" else r.aggregates6
        families.append(BgpFamily(p.family, True, p.connected.name, (), tuple((a, True) for a in aggregates),
                                  r.maximum_paths))
    return BgpView(
        name=name, file=file, asn=r.asn, router_id=r.router_id, multipath_relax=True,
        peers=tuple(sorted(peers, key=lambda p: p.address)), families=tuple(families),
        prefix_lists=tuple(PrefixListView(pl.name, fam, tuple(PrefixRule(e.seq, True, e.prefix, e.ge, e.le)
                                                               for e in pl.entries))
                           for fam, pl in [(p.family, pl) for p in policies for pl in (p.local, p.originate)]
                           + [(i.family, i.prefix_list) for i in inbound]),
        route_maps=tuple(RouteMapView(rm.name, (RouteMapClause(rm.seq, True, (rm.match,) if rm.match else (),
                                                               rm.prepend),))
                         for rm in [rm for p in policies for rm in (p.connected, p.export)]
                         + [i.route_map for i in inbound]),
        ports=tuple(ports), loopbacks=tuple(loopbacks), startup_hold_s=r.startup_hold_s)


DEFAULT_TIMERS = BgpTimersIntent(3, 9, None)   # `frr defaults datacenter`'s keepalive and hold, where a view has none


def routing_of(view: BgpView) -> Routing:
    """The routing intent a BGP view carries: `routing_view`'s inverse, for a switch whose NOS cannot run here (the
    twin and drift run its FRR spelling, `teton.targets.frr`).  Read as this layout writes it: peer groups from the
    peers' groups (the side the files give, else a passive group faces down), the neighbours in the order of the
    switch's ports (IPv4 first on a port), timers, BFD, the password's secret, GTSM's hops, the maximum-prefix limit and
    restart from the peers, the aggregates and ECMP width from the address families, the first loopback of each family,
    and from the route maps applied outbound whether the switch filters what it sends (a rack switch) or not (transit)
    and how often it prepends its ASN (a drained switch)."""
    port_order: dict[str, int] = {}
    for k, port in enumerate(view.ports):
        port_order.setdefault(port.port, k)
    peers = sorted(view.peers, key=lambda p: (port_order.get(p.local_port, len(port_order)), ":" in p.address,
                                              p.address))
    groups: dict[str, PeerGroup] = {}
    neighbors = []
    for p in peers:
        family: Family = p.families[0] if p.families else ("ipv6" if ":" in p.address else "ipv4")
        if p.group and p.group not in groups:
            side: Direction = p.side or ("down" if p.passive else "up")
            groups[p.group] = PeerGroup(p.group, family, side, p.passive)
        neighbors.append(Neighbor(p.address, family, p.remote_as or 0, p.group, p.local_port, p.local_address,
                                  p.description))
    maps = {name for p in view.peers for _, name in p.route_map_out}
    export = [c for rm in view.route_maps if rm.name in maps for c in rm.clauses]
    secrets = sorted({p.password for p in view.peers if p.password and not p.password.startswith("plaintext:")})
    aggregates = [a for f in view.families for a, _ in f.aggregates]
    first = view.peers[0] if view.peers else None
    imports = imports_of(view, [(n.address, n.family) for n in neighbors])
    return Routing(
        asn=view.asn, router_id=view.router_id or "",
        groups=tuple(sorted(groups.values(), key=lambda g: (g.direction != "up", g.name))),
        neighbors=tuple(neighbors),
        maximum_paths=max((f.maximum_paths for f in view.families), default=1),
        timers=next((p.timers for p in view.peers if p.timers is not None), DEFAULT_TIMERS),
        bfd=any(p.bfd for p in view.peers), password_secret=secrets[0] if secrets else None,
        loopback4=next((lo for lo in view.loopbacks if ":" not in lo), None),
        loopback6=next((lo for lo in view.loopbacks if ":" in lo), None),
        aggregates4=tuple(a for a in aggregates if ":" not in a), aggregates6=tuple(a for a in aggregates if ":" in a),
        transit=not any(c.match for c in export),
        maximum_prefixes=max((p.maximum_prefix or 0 for p in view.peers), default=0),
        maximum_prefix_restart_min=first.maximum_prefix_restart_min if first is not None else 0,
        startup_hold_s=view.startup_hold_s, drain_prepend=max((len(c.prepend) for c in export), default=0),
        default_originate=any(p.default_originate for p in view.peers),
        ttl_security_hops=next((p.ttl_security for p in view.peers if p.ttl_security), None), imports=imports)


def imports_of(view: BgpView, order: Iterable[tuple[str, Family]]) -> tuple[ImportPolicy, ...]:
    """The import policies of a view (`Routing.imports`): per route map applied inbound, its neighbours (in `order`)
    and what it permits, read from the prefix lists its permitting clauses match (first clause first)."""
    maps = {rm.name: rm for rm in view.route_maps}
    by_peer = {(p.address, fam): name for p in view.peers for fam, name in p.route_map_in}
    found: dict[tuple[str, Family], list[str]] = {}
    for address, fam in order:
        name = by_peer.get((address, fam))
        if name is not None:
            found.setdefault((name, fam), []).append(address)
    out = []
    for (name, fam), addresses in found.items():
        plists = {pl.name: pl for pl in view.prefix_lists if pl.family == fam}
        rm = maps.get(name)
        accept = [Accept(rule.prefix, rule.ge, rule.le)
                  for c in (rm.clauses if rm is not None else ()) if c.permit
                  for m in c.match if m in plists for rule in plists[m].rules if rule.permit]
        out.append(ImportPolicy(name, fam, tuple(addresses), tuple(accept)))
    return tuple(sorted(out, key=lambda i: i.name))
