"""An FRR frr.conf read back into the NOS-neutral BGP view (`teton.targets.bgpview`): what bgpd would run, edits
included.  Used by the SONiC target (with config_db.json's ports) and for any target that hands over an frr.conf.

Read as FRR 8.4 reads it: prefix lists (with or without `seq`: FRR numbers those by 5), route maps and their
`match ip|ipv6 address prefix-list` and `set as-path prepend`, and `router bgp`: peer groups and neighbours (a
neighbour takes its group's remote-as, password, passive, route maps, default-originate and maximum-prefix unless it
sets its own), `bgp bestpath as-path multipath-relax`, `no bgp default ipv4-unicast` (without it IPv4 neighbours are
activated in IPv4 unicast), and per address family `activate`, `route-map NAME in|out`, `default-originate`,
`maximum-prefix`, `redistribute connected [route-map NAME]`, `network`, `aggregate-address [summary-only]` and
`maximum-paths` (FRR's default: 64).  A line inside `router bgp` it does not model is ignored; a route-map statement it
does not model marks the clause (`RouteMapClause.unmodelled`).
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from teton.fabric.intent import Family
from teton.targets.bgpview import (
    BgpFamily,
    BgpPeer,
    BgpView,
    PortAddress,
    PrefixListView,
    PrefixRule,
    RouteMapClause,
    RouteMapView,
    address_int,
    password_ref,
    port_owner,
)

FRR_MAXIMUM_PATHS = 64      # FRR's MULTIPATH_NUM as SONiC and Debian build it
_PLIST = re.compile(r"^(ip|ipv6) prefix-list (\S+)(?: seq (\d+))? (permit|deny) (\S+)(?: ge (\d+))?(?: le (\d+))?\s*$")
_RMAP = re.compile(r"^route-map (\S+) (permit|deny) (\d+)\s*$")
_AF = re.compile(r"^ address-family (ipv4|ipv6) unicast\s*$")
_AFI: dict[str, Family] = {"ip": "ipv4", "ipv6": "ipv6"}


@dataclass
class _Neighbor:
    """Settings of a neighbour or a peer group as the lines give them (None: not set here)."""

    group: str = ""
    remote_as: int | None = None
    password: str | None = None
    passive: bool | None = None
    shutdown: bool | None = None
    active: dict[Family, bool] = field(default_factory=dict)
    map_in: dict[Family, str] = field(default_factory=dict)
    map_out: dict[Family, str] = field(default_factory=dict)
    default: dict[Family, bool] = field(default_factory=dict)
    max_prefix: int | None = None
    line: int = 0


@dataclass
class _Family:
    connected: bool = False
    connected_map: str | None = None
    networks: list[str] = field(default_factory=list)
    aggregates: list[tuple[str, bool]] = field(default_factory=list)
    maximum_paths: int = FRR_MAXIMUM_PATHS


def _is_address(s: str) -> bool:
    try:
        address_int(s)
    except ValueError:
        return False
    return True


def read_frr_bgp(name: str, file: str, text: str, ports: Iterable[PortAddress],
                 loopbacks: Iterable[str]) -> BgpView | None:
    """The BGP view of an integrated frr.conf (None: it has no `router bgp`)."""
    plists: dict[tuple[Family, str], list[PrefixRule]] = {}
    rmaps: dict[str, list[RouteMapClause]] = {}
    peers: dict[str, _Neighbor] = {}          # neighbours and peer groups, by address or name
    groups: set[str] = set()
    fams: dict[Family, _Family] = {}
    problems: list[str] = []
    asn: int | None = None
    rid: str | None = None
    relax = False
    default_v4 = True
    block: str | None = None                  # "rmap", "bgp", "af"
    current: tuple[str, bool, int, list[str], list[int], list[str]] | None = None   # the route-map clause being read
    af: Family | None = None

    def close_clause() -> None:
        nonlocal current
        if current is not None:
            rm, permit, seq, match, prepend, other = current
            rmaps.setdefault(rm, []).append(RouteMapClause(seq, permit, tuple(match), tuple(prepend), tuple(other)))
            current = None

    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip()
        if not line.strip() or line.lstrip().startswith("!"):
            continue
        if not line[0].isspace():
            close_clause()
            block, af = None, None
            if m := _PLIST.match(line):
                afi, pl, seq, action, prefix, ge, le = m.groups()
                rules = plists.setdefault((_AFI[afi], pl), [])
                number = int(seq) if seq else (max((r.seq for r in rules), default=0) // 5 + 1) * 5
                try:
                    net = str(ipaddress.ip_network(prefix, strict=False))
                except ValueError:
                    problems.append(f"line {n}: {prefix!r} is not a prefix")
                    continue
                rules.append(PrefixRule(number, action == "permit", net, int(ge) if ge else None,
                                        int(le) if le else None))
            elif m := _RMAP.match(line):
                block = "rmap"
                current = (m.group(1), m.group(2) == "permit", int(m.group(3)), [], [], [])
            elif line.startswith("router bgp "):
                words = line.split()
                if len(words) != 3 or not words[2].isdigit():
                    problems.append(f"line {n}: {line.strip()!r}: only the default instance is modelled")
                    continue
                asn, block = int(words[2]), "bgp"
            continue
        words = line.split()
        if block == "rmap" and current is not None:
            if words[:4] in (["match", "ip", "address", "prefix-list"], ["match", "ipv6", "address", "prefix-list"]) \
                    and len(words) == 5:
                current[3].append(words[4])
            elif words[:3] == ["set", "as-path", "prepend"] and all(w.isdigit() for w in words[3:]):
                current[4].extend(int(w) for w in words[3:])
            elif words[0] not in ("exit", "description"):
                current[5].append(" ".join(words))
        elif block in ("bgp", "af"):
            if line.startswith(" address-family ") and (m := _AF.match(line)):
                block, af = "af", m.group(1)   # type: ignore[assignment]
                fams.setdefault(af, _Family())   # type: ignore[arg-type]
                continue
            if words == ["exit-address-family"]:
                block, af = "bgp", None
                continue
            if block == "bgp":
                rid, relax, default_v4 = _bgp_line(words, n, peers, groups, rid, relax, default_v4)
            elif af is not None:
                _af_line(words, n, af, fams[af], peers, problems)
    close_clause()
    if asn is None:
        return None
    out_peers = _fold(peers, groups, default_v4, list(ports))
    return BgpView(
        name=name, file=file, asn=asn, router_id=rid, multipath_relax=relax, peers=out_peers,
        families=tuple(BgpFamily(f, x.connected, x.connected_map, tuple(x.networks), tuple(x.aggregates),
                                 x.maximum_paths) for f, x in sorted(fams.items())),
        prefix_lists=tuple(PrefixListView(pl, fam, tuple(sorted(rules, key=lambda r: r.seq)))
                           for (fam, pl), rules in sorted(plists.items())),
        route_maps=tuple(RouteMapView(rm, tuple(sorted(c, key=lambda x: x.seq))) for rm, c in sorted(rmaps.items())),
        ports=tuple(ports), loopbacks=tuple(loopbacks), problems=tuple(problems))


def _bgp_line(words: list[str], n: int, peers: dict[str, _Neighbor], groups: set[str], rid: str | None,
              relax: bool, default_v4: bool) -> tuple[str | None, bool, bool]:
    if words[:2] == ["bgp", "router-id"] and len(words) == 3:
        rid = words[2]
    elif words == ["bgp", "bestpath", "as-path", "multipath-relax"]:
        relax = True
    elif words == ["no", "bgp", "default", "ipv4-unicast"]:
        default_v4 = False
    elif words[0] == "neighbor" and len(words) >= 3:
        who, what, rest = words[1], words[2], words[3:]
        p = peers.setdefault(who, _Neighbor(line=n))
        if what == "peer-group" and not rest:
            groups.add(who)
        elif what == "peer-group" and rest:
            p.group = rest[0]
        elif what == "remote-as" and rest and rest[0].isdigit():
            p.remote_as, p.line = int(rest[0]), n
        elif what == "password" and rest:
            p.password = rest[0]
        elif what == "passive":
            p.passive = True
        elif what == "shutdown":
            p.shutdown = True
    return rid, relax, default_v4


def _af_line(words: list[str], n: int, af: Family, fam: _Family, peers: dict[str, _Neighbor],
             problems: list[str]) -> None:
    if words[0] == "neighbor" and len(words) >= 3:
        p = peers.setdefault(words[1], _Neighbor(line=n))
        what, rest = words[2], words[3:]
        if what == "activate":
            p.active[af] = True
        elif what == "route-map" and len(rest) == 2 and rest[1] in ("in", "out"):
            (p.map_in if rest[1] == "in" else p.map_out)[af] = rest[0]
        elif what == "default-originate":
            p.default[af] = True
        elif what == "maximum-prefix" and rest and rest[0].isdigit():
            p.max_prefix = int(rest[0])
    elif words[:2] == ["redistribute", "connected"]:
        fam.connected = True
        fam.connected_map = words[3] if len(words) == 4 and words[2] == "route-map" else None
    elif words[0] == "network" and len(words) >= 2:
        fam.networks.append(words[1])
    elif words[0] == "aggregate-address" and len(words) >= 2:
        fam.aggregates.append((words[1], "summary-only" in words[2:]))
    elif words[0] == "maximum-paths" and len(words) == 2 and words[1].isdigit():
        fam.maximum_paths = int(words[1])
    elif words[0] == "maximum-paths" and len(words) != 3:   # `maximum-paths ibgp N` is iBGP's
        problems.append(f"line {n}: {' '.join(words)!r} not understood")


def _fold(peers: dict[str, _Neighbor], groups: set[str], default_v4: bool,
          ports: list[PortAddress]) -> tuple[BgpPeer, ...]:
    """Every neighbour with its group's settings where it sets none, and its local port and address."""
    local_of = port_owner(ports)
    out = []
    for address in sorted(a for a in peers if a not in groups and _is_address(a)):
        me = peers[address]
        g = peers.get(me.group, _Neighbor()) if me.group in groups else _Neighbor()

        def pick(mine: object, theirs: object) -> object:
            return mine if mine is not None else theirs

        fams: list[Family] = []
        fam: Family
        for fam in ("ipv4", "ipv6"):
            active = me.active.get(fam, g.active.get(fam))
            if active is None and fam == "ipv4" and default_v4 and ":" not in address:
                active = True
            if active:
                fams.append(fam)
        port, local = local_of(address)
        remote = pick(me.remote_as, g.remote_as)
        maximum = pick(me.max_prefix, g.max_prefix)
        out.append(BgpPeer(
            address=address, remote_as=remote if isinstance(remote, int) else None, group=me.group,
            families=tuple(fams), password=password_ref(me.password or g.password),
            passive=bool(pick(me.passive, g.passive)), shutdown=bool(pick(me.shutdown, g.shutdown)),
            route_map_in=tuple(sorted({**g.map_in, **me.map_in}.items())),
            route_map_out=tuple(sorted({**g.map_out, **me.map_out}.items())),
            default_originate=tuple(sorted(f for f, on in {**g.default, **me.default}.items() if on)),
            maximum_prefix=maximum if isinstance(maximum, int) else None,
            local_port=port, local_address=local, where=f"line {me.line}"))
    return tuple(out)
