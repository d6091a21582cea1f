"""Parsing FRR text: an integrated frr.conf (its BGP as bgpd runs it, its split per daemon) and a daemon's log.

`read_frr_bgp` is the one FRR parser of teton: an frr.conf read back into the NOS-neutral BGP view
(`teton.fabric.bgpview`), what bgpd would run, edits included.  SONiC's read-back (with config_db.json's ports), the
read-back of any target that hands over an frr.conf, and `teton verify` all read FRR through it.  It reads as FRR 8.4
does: prefix lists (with or without `seq`: FRR numbers those by 5), route maps and their
`match ip|ipv6 address prefix-list` and `set as-path prepend`, and `router bgp`: peer groups and neighbours (a neighbour
takes its group's remote-as, password, `ttl-security hops`, passive, route maps, default-originate and maximum-prefix
unless it sets its own), `bgp bestpath as-path multipath-relax`, `no bgp default ipv4-unicast` (without it IPv4
neighbours are activated in IPv4 unicast), and per address family `activate`, `route-map NAME in|out`,
`default-originate`, `maximum-prefix`, `redistribute connected [route-map NAME]`, `network`, `aggregate-address
[summary-only]` and `maximum-paths` (FRR's default: 64).  A line inside `router bgp` it does not model is ignored; a
route-map statement it does not model marks the clause (`RouteMapClause.unmodelled`).

`split_frr_conf` gives each daemon its part of an integrated file: FRR 8.4 accepts the whole file with ``-f`` in both
zebra and bgpd, but each logs "No such command" for every line of the other daemon, which would drown real errors.

What a daemon refuses while it reads its config at start-up (FRR 8.4 ``lib/vty.c``; one log line per refused line)::

    ... BGP: [SHWNK-NWT5S][EC 100663304] Command returned Warning Config Failed on config line 5:  timers bgp 1 1
    ... BGP: [SHWNK-NWT5S][EC 100663304] No such command on config line 15: some-unknown-command here

"No such command", "Ambiguous command", "Command returned Incomplete" and the other return codes share the form
"<reason> on config line N: <line>"; a config file that cannot be read gives "failed to read configuration file".
The daemon's own explanation ("% hold time value must be either 0 or greater than 3") goes to its stdout.
`config_complaints` and `daemon_remarks` read both from a byte offset, so that a restarted daemon is judged by what it
said this time.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from teton.fabric.bgpview import (
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
from teton.fabric.intent import BgpTimersIntent, Family

DAEMONS = ("zebra", "bgpd")
"""The daemons teton runs FRR with (the twin's switches), in start order."""

_BGPD_ONLY = (
    "router bgp",
    "bgp ",
    "ip as-path",
    "ip community-list",
    "ip extcommunity-list",
    "ip large-community-list",
    "rpki",
    "bmp ",
    "debug bgp",
)
_ZEBRA_ONLY = (
    "interface ",
    "vrf ",
    "zebra ",
    "no zebra ",
    "ip forwarding",
    "ipv6 forwarding",
    "no ip forwarding",
    "no ipv6 forwarding",
    "ip nht",
    "ipv6 nht",
    "no ip nht",
    "no ipv6 nht",
    "ip protocol",
    "ipv6 protocol",
    "ip import-table",
    "table ",
    "debug zebra",
    "mpls ",
)
_STATICD = ("ip route ", "ipv6 route ")  # staticd: not run by the twin
_DROPPED = (
    "line vty",  # vty over TCP is off (-P 0); zebra rejects the block
    "service integrated-vtysh-config",  # vtysh's own setting: both daemons log "No such command"
    "no service integrated-vtysh-config",
)
_BLOCK_END = ("exit", "exit-vrf", "end")

_COMPLAINT = re.compile(r" on config line \d+: |failed to read configuration file")
_LOG_LINE = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d")  # FRR log lines also reach stdout before the log is open


def _owner(first_line: str) -> str:
    s = first_line.strip()
    if s.startswith(_BGPD_ONLY):
        return "bgpd"
    if s.startswith(_ZEBRA_ONLY):
        return "zebra"
    if s.startswith(_STATICD):
        return "staticd"
    if s.startswith(_DROPPED):
        return "none"
    return "both"


def split_frr_conf(text: str) -> tuple[dict[str, str], list[str]]:
    """Split an integrated frr.conf into {"zebra": text, "bgpd": text} plus warnings.

    Blocks (a line at column 0 with its indented lines and closing ``exit``) keep their order; ``router bgp`` and
    the bgp lists go to bgpd, ``interface``/``vrf`` and the zebra globals to zebra, everything else (``frr defaults``,
    ``hostname``, ``log``, route-maps, prefix-lists, access-lists ...) to both.  ``!`` comments, ``line vty`` and
    vtysh's own ``service integrated-vtysh-config`` are dropped.
    """
    blocks: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith(("!", "#")):
            continue
        indented = line[0].isspace()
        if not indented and stripped in _BLOCK_END:
            if stripped != "end" and blocks:
                blocks[-1][1].append(line)
            continue
        if indented and blocks:
            blocks[-1][1].append(line)
        else:
            blocks.append((_owner(line), [line]))
    out: dict[str, list[str]] = {d: [] for d in DAEMONS}
    warnings: list[str] = []
    for owner, lines in blocks:
        if owner == "staticd":
            warnings.append(f"static route needs staticd, which the twin does not run: {lines[0].strip()}")
        for daemon in DAEMONS:
            if owner in (daemon, "both"):
                out[daemon].extend(lines)
    return {d: "\n".join(lines) + "\n" for d, lines in out.items()}, warnings


def _read_from(path: Path, offset: int) -> list[str]:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return fh.read().decode(errors="replace").splitlines()
    except FileNotFoundError:
        return []


def config_complaints(log: Path, offset: int = 0) -> list[str]:
    """Every line of a daemon's log after byte `offset` saying that it refused (part of) its config file, without
    the timestamp and message ids: "Command returned Warning Config Failed on config line 5:  timers bgp 1 1"."""
    return [line.split("] ", 1)[-1] for line in _read_from(log, offset) if _COMPLAINT.search(line)]


def daemon_remarks(out: Path, offset: int = 0, limit: int = 10) -> list[str]:
    """What a daemon printed on stdout/stderr after byte `offset` other than log lines (FRR's reasons, "% ...")."""
    lines = [line.strip() for line in _read_from(out, offset) if line.strip() and not _LOG_LINE.match(line)]
    return lines[:limit]


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
    restart: int | None = None
    timers: tuple[int, int] | None = None
    connect: int | None = None
    bfd: bool | None = None
    ttl_security: int | None = None
    description: str | None = None
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
    settings: dict[str, int] = {}             # `timers bgp K H` and `update-delay S` of the instance
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
                rid, relax, default_v4 = _bgp_line(words, n, peers, groups, rid, relax, default_v4, settings)
            elif af is not None:
                _af_line(words, n, af, fams[af], peers, problems)
    close_clause()
    if asn is None:
        return None
    out_peers = _fold(peers, groups, default_v4, list(ports), settings)
    return BgpView(
        name=name, file=file, asn=asn, router_id=rid, multipath_relax=relax, peers=out_peers,
        families=tuple(BgpFamily(f, x.connected, x.connected_map, tuple(x.networks), tuple(x.aggregates),
                                 x.maximum_paths) for f, x in sorted(fams.items())),
        prefix_lists=tuple(PrefixListView(pl, fam, tuple(sorted(rules, key=lambda r: r.seq)))
                           for (fam, pl), rules in sorted(plists.items())),
        route_maps=tuple(RouteMapView(rm, tuple(sorted(c, key=lambda x: x.seq))) for rm, c in sorted(rmaps.items())),
        ports=tuple(ports), loopbacks=tuple(loopbacks), startup_hold_s=settings.get("update-delay", 0),
        problems=tuple(problems))


def _bgp_line(words: list[str], n: int, peers: dict[str, _Neighbor], groups: set[str], rid: str | None,
              relax: bool, default_v4: bool, settings: dict[str, int]) -> tuple[str | None, bool, bool]:
    if words[:2] == ["timers", "bgp"] and len(words) == 4 and words[2].isdigit() and words[3].isdigit():
        settings["keepalive"], settings["hold"] = int(words[2]), int(words[3])
    elif words[0] == "update-delay" and len(words) >= 2 and words[1].isdigit():
        settings["update-delay"] = int(words[1])
    elif words[:2] == ["bgp", "router-id"] and len(words) == 3:
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
        elif what == "bfd" and not rest:
            p.bfd = True
        elif what == "ttl-security" and len(rest) == 2 and rest[0] == "hops" and rest[1].isdigit():
            p.ttl_security = int(rest[1])
        elif what == "description" and rest:
            p.description = " ".join(rest)
        elif what == "timers" and rest[:1] == ["connect"] and len(rest) == 2 and rest[1].isdigit():
            p.connect = int(rest[1])
        elif what == "timers" and len(rest) == 2 and rest[0].isdigit() and rest[1].isdigit():
            p.timers = (int(rest[0]), int(rest[1]))
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
            if len(rest) == 3 and rest[1] == "restart" and rest[2].isdigit():
                p.restart = int(rest[2])
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


def _fold(peers: dict[str, _Neighbor], groups: set[str], default_v4: bool, ports: list[PortAddress],
          settings: dict[str, int]) -> tuple[BgpPeer, ...]:
    """Every neighbour with its group's settings where it sets none (the instance's timers where neither does), and
    its local port and address."""
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
        restart = pick(me.restart, g.restart)
        kh = me.timers or g.timers or ((settings["keepalive"], settings["hold"]) if "keepalive" in settings else None)
        connect = me.connect if me.connect is not None else g.connect
        timers = None if kh is None else BgpTimersIntent(kh[0], kh[1], connect)
        out.append(BgpPeer(
            address=address, remote_as=remote if isinstance(remote, int) else None, group=me.group,
            families=tuple(fams), password=password_ref(me.password or g.password),
            passive=bool(pick(me.passive, g.passive)), shutdown=bool(pick(me.shutdown, g.shutdown)),
            route_map_in=tuple(sorted({**g.map_in, **me.map_in}.items())),
            route_map_out=tuple(sorted({**g.map_out, **me.map_out}.items())),
            default_originate=tuple(sorted(f for f, on in {**g.default, **me.default}.items() if on)),
            maximum_prefix=maximum if isinstance(maximum, int) else None,
            maximum_prefix_restart_min=restart if isinstance(restart, int) else 0, timers=timers,
            bfd=bool(pick(me.bfd, g.bfd)), ttl_security=me.ttl_security or g.ttl_security,
            description=str(pick(me.description, g.description) or ""),
            local_port=port, local_address=local, where=f"line {me.line}"))
    return tuple(out)
