"""Front-end reachability from the rendered switch configs alone: a small eBGP propagation model.

Reads what each switch of a build folder really runs (SONiC: frr.conf and config_db.json; EOS: structured-config.json
through the EOS target's read-back), never the design: the local ASN, the link addresses, the neighbours (address and
remote ASN), what it originates (the ORIGINATE_/LOCAL_ prefix lists: loopback and rack aggregates), whether its
EXPORT_ route map filters (a rack switch) or passes everything (transit), and the peer groups it sends a default
route to.  Then path-vector propagation to a fixed point: a route is accepted unless the receiver's ASN is in its
path, the shortest AS paths win and equal ones are ECMP.

`frontend_reach(build)` says, for every front-end rack switch, which other racks' prefixes it has no route to and which
link /31 (/127) prefixes leaked into BGP.  The sessions are arrays keyed by speaker index and each rack prefix is one
breadth-first search over them (`Sessions.spread`), so the 24k reference takes seconds, not the quarter of an hour a
fixed-point iteration over every prefix at once took.  It is the seed of `teton verify` (issue 22); today a test runs
it over the lab and both reference specs.
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from teton.targets.eos.readback import read_eos

DEFAULT4 = "0.0.0.0/0"


@dataclass
class Speaker:
    """One BGP speaker as its rendered config says."""

    name: str
    asn: int
    addresses: set[str] = field(default_factory=set)            # its link and loopback addresses
    neighbors: list[tuple[str, int, str]] = field(default_factory=list)   # (address, remote ASN, peer group)
    originate: set[str] = field(default_factory=set)            # prefixes it announces of its own
    transit: bool = True                                        # passes on what it learns
    default_to: set[str] = field(default_factory=set)           # peer groups it sends a default route to


_NEIGHBOR = re.compile(r"^ neighbor (\S+) remote-as (\d+)$")
_GROUP = re.compile(r"^ neighbor (\S+) peer-group (\S+)$")
_PLIST = re.compile(r"^ip prefix-list (ORIGINATE_V4) seq \d+ permit (\S+)$")
_DEFAULT = re.compile(r"^  neighbor (\S+) default-originate$")


def read_frr(name: str, frr: str, config_db: dict[str, object]) -> Speaker:
    asn = int(re.search(r"^router bgp (\d+)$", frr, re.M).group(1))  # type: ignore[union-attr]
    s = Speaker(name, asn)
    remote: dict[str, int] = {}
    group: dict[str, str] = {}
    for line in frr.splitlines():
        if m := _NEIGHBOR.match(line):
            remote[m.group(1)] = int(m.group(2))
        elif m := _GROUP.match(line):
            group[m.group(1)] = m.group(2)
        elif m := _PLIST.match(line):
            s.originate.add(m.group(2))
        elif m := _DEFAULT.match(line):
            s.default_to.add(m.group(1))
    s.neighbors = [(ip, a, group.get(ip, "")) for ip, a in remote.items() if ":" not in ip]
    export = re.search(r"^route-map EXPORT_V4 permit 10\n((?: .*\n)*)", frr, re.M)
    s.transit = export is None or "match ip address prefix-list" not in export.group(1)
    for table in ("INTERFACE", "LOOPBACK_INTERFACE"):
        rows = config_db.get(table, {})
        assert isinstance(rows, dict)
        for key in rows:
            if "|" in key:
                s.addresses.add(key.split("|", 1)[1].split("/", 1)[0])
    return s


def read_eos_speaker(name: str, cfg: dict[str, object]) -> Speaker | None:
    view, _ = read_eos(name, cfg)
    r = view.routing
    if r is None:
        return None
    s = Speaker(name, r.asn, transit=r.transit)
    s.neighbors = [(n.address, n.remote_as, n.group) for n in r.neighbors if n.family == "ipv4"]
    s.originate = {x for x in (r.loopback4, *r.aggregates4) if x}
    if r.default_originate:
        s.default_to = {g.name for g in r.groups if g.direction == "down" and g.family == "ipv4"}
    for port in view.interfaces.values():
        s.addresses |= {a.split("/", 1)[0] for a in port.addresses}
    if r.loopback4:
        s.addresses.add(r.loopback4.split("/", 1)[0])
    return s


def read_speakers(build: Path) -> dict[str, Speaker]:
    out: dict[str, Speaker] = {}
    for d in sorted((build / "devices").iterdir()):
        frr, eos = d / "frr.conf", d / "structured-config.json"
        if frr.exists():
            db = json.loads((d / "config_db.json").read_text()) if (d / "config_db.json").exists() else {}
            out[d.name] = read_frr(d.name, frr.read_text(), db)
        elif eos.exists():
            s = read_eos_speaker(d.name, json.loads(eos.read_text()))
            if s is not None:
                out[d.name] = s
    return out


Table = dict[str, tuple[int, set[str]]]   # prefix -> (AS-path length, next-hop speakers of the equal best paths)
Routes = dict[int, tuple[int, set[int]]]  # speaker index -> (AS-path length, next-hop speaker indices), one prefix


@dataclass(frozen=True)
class Sessions:
    """The established eBGP sessions as arrays keyed by speaker index (a neighbour counts when its address belongs to
    a speaker of the configured remote ASN)."""

    names: tuple[str, ...]
    asn: tuple[int, ...]
    transit: tuple[bool, ...]
    peers: tuple[tuple[int, ...], ...]              # speaker -> the speakers it sends to (and hears from)
    originators: dict[str, tuple[int, ...]]         # prefix -> the speakers that originate it
    default_seeds: dict[int, set[int]]              # speaker -> the speakers that send it a default route

    @classmethod
    def of(cls, speakers: dict[str, Speaker]) -> Sessions:
        names = tuple(speakers)
        index = {n: i for i, n in enumerate(names)}
        owner = {a: index[s.name] for s in speakers.values() for a in s.addresses}
        peers: list[list[int]] = [[] for _ in names]
        seeds: dict[int, set[int]] = defaultdict(set)
        originators: dict[str, list[int]] = defaultdict(list)
        for i, s in enumerate(speakers.values()):
            for p in sorted(s.originate):
                originators[p].append(i)
            for address, asn, group in s.neighbors:
                j = owner.get(address)
                if j is not None and speakers[names[j]].asn == asn:
                    peers[i].append(j)
                    if group in s.default_to:
                        seeds[j].add(i)
        return cls(names, tuple(s.asn for s in speakers.values()), tuple(s.transit for s in speakers.values()),
                   tuple(tuple(p) for p in peers), {p: tuple(o) for p, o in originators.items()}, dict(seeds))

    def spread(self, seeds: dict[int, tuple[tuple[int, ...], set[int]]], originators: frozenset[int]) -> Routes:
        """One prefix's best routes by breadth-first search over the sessions, from `seeds` (speaker -> (AS path,
        next hops), all of one length): a route is accepted unless the receiver's ASN is in its path, the shortest
        paths win and equal ones are ECMP; a non-transit speaker passes on only what it originates."""
        best: Routes = {i: (len(path), set(hops)) for i, (path, hops) in seeds.items()}
        paths = {i: path for i, (path, _) in seeds.items()}
        frontier = sorted(seeds)
        asn, transit, peers = self.asn, self.transit, self.peers
        while frontier:
            reached: list[int] = []
            for n in frontier:
                if not (transit[n] or n in originators):
                    continue
                new = (asn[n], *paths[n])
                length = len(new)
                for peer in peers[n]:
                    if asn[peer] in new:
                        continue
                    have = best.get(peer)
                    if have is None:
                        best[peer] = (length, {n})
                        paths[peer] = new
                        reached.append(peer)
                    elif have[0] == length:
                        have[1].add(n)
            frontier = reached
        return best

    def routes(self, prefix: str) -> Routes:
        """Every speaker's best routes to `prefix` (the default route: from the speakers that send it)."""
        if prefix == DEFAULT4:
            return self.spread({j: ((self.asn[min(s)],), set(s)) for j, s in self.default_seeds.items()},
                               frozenset())
        origin = self.originators.get(prefix, ())
        return self.spread({i: ((), set()) for i in origin}, frozenset(origin))


def propagate(speakers: dict[str, Speaker]) -> dict[str, Table]:
    """Every speaker's best IPv4 routes: {speaker: {prefix: (path length, ECMP next hops)}} (one search per prefix;
    `frontend_reach` asks only for the prefixes it needs)."""
    sessions = Sessions.of(speakers)
    tables: dict[str, Table] = {n: {} for n in speakers}
    prefixes = [*sessions.originators, *([DEFAULT4] if sessions.default_seeds else [])]
    for prefix in prefixes:
        for i, (length, hops) in sessions.routes(prefix).items():
            tables[sessions.names[i]][prefix] = (length, {sessions.names[h] for h in hops})
    return tables


@dataclass(frozen=True)
class Reach:
    racks: int                                   # front-end rack switches
    missing: dict[str, tuple[str, ...]]          # rack switch -> other racks' prefixes it has no route to
    leaked: tuple[str, ...]                      # link /31s some speaker has a route to
    ecmp: dict[str, int]                         # rack switch -> fewest next hops over the other racks' prefixes
    default: tuple[str, ...]                     # rack switches with a default route


def frontend_reach(build: Path, rack_switch: str = "-frsw") -> Reach:
    speakers = read_speakers(build)
    sessions = Sessions.of(speakers)
    index = {n: i for i, n in enumerate(sessions.names)}
    racks = sorted(n for n in speakers if n.endswith(rack_switch))
    aggregates = {n: sorted(p for p in speakers[n].originate if not p.endswith("/32")) for n in racks}
    lacking: dict[str, list[str]] = defaultdict(list)
    ecmp = dict.fromkeys(racks, 0)
    widest: dict[str, int | None] = dict.fromkeys(racks)
    for origin in racks:                               # one search per rack prefix, read by every other rack
        for prefix in aggregates[origin]:
            routes = sessions.routes(prefix)
            for n in racks:
                if n == origin:
                    continue
                got = routes.get(index[n])
                if got is None:
                    lacking[n].append(prefix)
                else:
                    w = widest[n]
                    widest[n] = len(got[1]) if w is None else min(w, len(got[1]))
    for n in racks:
        ecmp[n] = widest[n] or 0
    missing = {n: tuple(sorted(v)) for n, v in sorted(lacking.items())}
    leaked = sorted(p for p in sessions.originators if p != DEFAULT4 and ipaddress.ip_network(p).prefixlen in (31, 127))
    default = sessions.routes(DEFAULT4) if sessions.default_seeds else {}
    return Reach(len(racks), missing, tuple(leaked), ecmp, tuple(n for n in racks if index[n] in default))
