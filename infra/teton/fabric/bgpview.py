"""A switch's BGP as its rendered files configure it, in no vendor's terms: what `teton verify` builds its control-plane
model from (`teton.verify`).

Unlike the routing intent (`teton.fabric.intent.Routing`, which a read-back can give only when the files are as teton
wrote them), this view keeps what the files really say, edits included: every neighbour with its peer group's settings
folded in (remote ASN, address families it is activated in, password by secret reference, passive, the route maps in and
out, default-originate, maximum-prefix and its restart, timers, BFD, GTSM's hops, the side of the fabric the neighbour
is on where the files say it, the description), the startup hold, the prefix lists and route maps by name with every
clause, what each address family originates (connected routes through a route map, networks, aggregates) and its
`maximum-paths`, and the addresses of the switch's ports and loopbacks (its connected routes).

Each target spells it from its own files: `teton.frr.conf.read_frr_bgp` for an FRR frr.conf (SONiC's bgpd, a plain FRR
router), `teton.targets.eos.bgp` for an EOS structured config, `teton.targets.fboss.readback` for BGP++'s config.
It is the one shape every reader of a switch's BGP takes: `teton verify`'s model, and the twin and drift, which run the
FRR spelling of the routing it carries (`teton.frr.policy.routing_of`) for a NOS that cannot run here.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from teton.fabric.intent import BgpTimersIntent, Direction, Family
from teton.secrets import referenced_secrets

FAMILIES: tuple[Family, ...] = ("ipv4", "ipv6")


@dataclass(frozen=True, slots=True)
class PrefixRule:
    """One line of a prefix list: `prefix` (a network) matches a route of the same length, or with `ge`/`le` a route
    inside it whose length is within [ge or its length, le or ge or its length]."""

    seq: int
    permit: bool
    prefix: str
    ge: int | None = None
    le: int | None = None


@dataclass(frozen=True, slots=True)
class PrefixListView:
    name: str
    family: Family
    rules: tuple[PrefixRule, ...]          # by sequence number


@dataclass(frozen=True, slots=True)
class RouteMapClause:
    """One sequence of a route map: it applies when every prefix list of `match` permits the route (none: always);
    then it permits (prepending `prepend` to the AS path) or denies.  `unmodelled`: match or set statements the model
    does not evaluate (the clause is taken as not matching, and verify says so)."""

    seq: int
    permit: bool
    match: tuple[str, ...] = ()
    prepend: tuple[int, ...] = ()
    unmodelled: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RouteMapView:
    name: str
    clauses: tuple[RouteMapClause, ...]    # by sequence number; a route no clause applies to is denied


@dataclass(frozen=True, slots=True)
class BgpPeer:
    """One configured neighbour, its peer group's settings folded in."""

    address: str
    remote_as: int | None                  # None: no remote-as anywhere (the session cannot come up)
    group: str                             # its peer group ("" if none)
    families: tuple[Family, ...]           # the address families it is activated in
    password: str | None                   # the secret it references ("bgp_backend"), "plaintext:<hash>", or None
    passive: bool
    shutdown: bool
    route_map_in: tuple[tuple[Family, str], ...] = ()
    route_map_out: tuple[tuple[Family, str], ...] = ()
    default_originate: tuple[Family, ...] = ()
    maximum_prefix: int | None = None
    maximum_prefix_restart_min: int = 0    # a session the limit tore down comes back after this (0: never)
    timers: BgpTimersIntent | None = None  # keepalive, hold and connect-retry (None: the NOS's defaults)
    bfd: bool = False
    ttl_security: int | None = None        # GTSM (RFC 5082): the most hops its packets may have crossed (None: off)
    side: Direction | None = None          # where the neighbour is ("up": an uplink), where the files say
    description: str = ""
    local_port: str = ""                   # the port whose subnet holds `address` ("" if none)
    local_address: str = ""                # this switch's address on that port
    where: str = ""                        # where it is configured (a line, a JSON path)

    def map_in(self, family: Family) -> str | None:
        return dict(self.route_map_in).get(family)

    def map_out(self, family: Family) -> str | None:
        return dict(self.route_map_out).get(family)


@dataclass(frozen=True, slots=True)
class BgpFamily:
    """What one address family of the switch originates and how many equal paths it installs."""

    family: Family
    connected: bool                        # redistributes connected routes ...
    connected_map: str | None              # ... through this route map (None: all of them)
    networks: tuple[str, ...]
    aggregates: tuple[tuple[str, bool], ...]   # (prefix, summary-only)
    maximum_paths: int


@dataclass(frozen=True, slots=True)
class PortAddress:
    port: str
    address: str                           # with its prefix length: "10.1.0.0/31"
    up: bool = True                        # not shut down


@dataclass(frozen=True)
class BgpView:
    """A switch's BGP as its files configure it."""

    name: str
    file: str                              # the file its BGP is read from
    asn: int
    router_id: str | None
    multipath_relax: bool                  # equal paths through different neighbour ASNs are ECMP
    peers: tuple[BgpPeer, ...]
    families: tuple[BgpFamily, ...]
    prefix_lists: tuple[PrefixListView, ...]
    route_maps: tuple[RouteMapView, ...]
    ports: tuple[PortAddress, ...]
    loopbacks: tuple[str, ...]             # with prefix lengths
    startup_hold_s: int = 0                # after a (re)start, updates wait for the peers (at most this long)
    problems: tuple[str, ...] = ()         # what could not be read ("line 12: ..."), for verify to report

    def family(self, family: Family) -> BgpFamily | None:
        return next((f for f in self.families if f.family == family), None)


def password_ref(value: str | None) -> str | None:
    """How a password is compared: by the secret it references; a plaintext one by a short hash (never the value)."""
    if not value:
        return None
    refs = referenced_secrets(value)
    if refs:
        return sorted(refs)[0]
    return "plaintext:" + hashlib.sha256(value.encode()).hexdigest()[:12]


def address_int(address: str) -> tuple[int, int]:
    """(IP version, the address as an integer) of "10.0.0.1" or "fd00::1", fast (socket's parser, not ipaddress's);
    ValueError when it is no address."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    try:
        packed = socket.inet_pton(family, address)
    except OSError:
        raise ValueError(f"{address!r} is not an IP address") from None
    return (6 if family == socket.AF_INET6 else 4), int.from_bytes(packed, "big")


def port_owner(ports: Iterable[PortAddress]) -> Callable[[str], tuple[str, str]]:
    """Which of a switch's ports a neighbour address is on: a lookup giving (port, the switch's own address there),
    ("", "") when no port's subnet holds it (or it is the switch's own)."""
    nets: dict[tuple[int, int, int], tuple[str, str, int]] = {}
    lengths: set[tuple[int, int]] = set()
    for p in ports:
        own, _, length = p.address.partition("/")
        version, value = address_int(own)
        bits = 32 if version == 4 else 128
        plen = int(length) if length else bits
        nets.setdefault((version, plen, value >> (bits - plen)), (p.port, own, value))
        lengths.add((version, plen))
    order = sorted(lengths, key=lambda x: -x[1])   # the most specific subnet first

    def lookup(address: str) -> tuple[str, str]:
        try:
            version, value = address_int(address)
        except ValueError:
            return "", ""
        bits = 32 if version == 4 else 128
        for v, plen in order:
            if v == version:
                got = nets.get((v, plen, value >> (bits - plen)))
                if got is not None and got[2] != value:
                    return got[0], got[1]
        return "", ""

    return lookup
