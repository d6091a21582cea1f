"""Front-end reachability from the rendered switch configs alone: a small eBGP propagation model.

Reads what each switch of a build folder really runs (SONiC: frr.conf and config_db.json; EOS: structured-config.json
through the EOS target's read-back), never the design: the local ASN, the link addresses, the neighbours (address and
remote ASN), what it originates (the ORIGINATE_/LOCAL_ prefix lists: loopback and rack aggregates), whether its
EXPORT_ route map filters (a rack switch) or passes everything (transit), and the peer groups it sends a default
route to.  Then path-vector propagation to a fixed point: a route is accepted unless the receiver's ASN is in its
path, the shortest AS paths win and equal ones are ECMP.

`frontend_reach(build)` says, for every front-end rack switch, which other racks' prefixes it has no route to and which
link /31 (/127) prefixes leaked into BGP.  It is the seed of `teton verify` (issue 22); today a test runs it over the
lab and both reference specs.
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


def propagate(speakers: dict[str, Speaker], limit: int = 64) -> dict[str, Table]:
    """Every speaker's best IPv4 routes: {speaker: {prefix: (path length, ECMP next hops)}}."""
    owner = {a: s.name for s in speakers.values() for a in s.addresses}
    peers: dict[str, list[tuple[str, str]]] = defaultdict(list)      # speaker -> [(peer, local group)]
    for s in speakers.values():
        for address, asn, group in s.neighbors:
            p = owner.get(address)
            if p is not None and speakers[p].asn == asn:
                peers[s.name].append((p, group))
    paths: dict[str, dict[str, tuple[int, ...]]] = {n: {p: () for p in s.originate} for n, s in speakers.items()}
    tables: dict[str, Table] = {n: {p: (0, set()) for p in s.originate} for n, s in speakers.items()}
    for n, s in speakers.items():
        for peer, group in peers[n]:
            if group in s.default_to:
                paths[peer].setdefault(DEFAULT4, (s.asn,))
                tables[peer].setdefault(DEFAULT4, (1, set()))[1].add(n)
    for _ in range(limit):
        changed = False
        for n, s in speakers.items():
            sent = {p: path for p, path in paths[n].items() if s.transit or p in s.originate}
            for peer, _group in peers[n]:
                me = speakers[peer]
                for prefix, path in sent.items():
                    new = (s.asn, *path)
                    if me.asn in new:
                        continue
                    have = tables[peer].get(prefix)
                    if have is None or len(new) < have[0]:
                        tables[peer][prefix] = (len(new), {n})
                        paths[peer][prefix] = new
                        changed = True
                    elif len(new) == have[0] and n not in have[1]:
                        have[1].add(n)
                        changed = True
        if not changed:
            break
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
    tables = propagate(speakers)
    racks = sorted(n for n in speakers if n.endswith(rack_switch))
    aggregates = {n: {p for p in speakers[n].originate if not p.endswith("/32")} for n in racks}
    missing: dict[str, tuple[str, ...]] = {}
    ecmp: dict[str, int] = {}
    for n in racks:
        want = sorted(p for other in racks if other != n for p in aggregates[other])
        gone = tuple(p for p in want if p not in tables[n])
        if gone:
            missing[n] = gone
        widths = [len(tables[n][p][1]) for p in want if p in tables[n]]
        ecmp[n] = min(widths, default=0)
    leaked = sorted({p for t in tables.values() for p in t
                     if p != DEFAULT4 and ipaddress.ip_network(p).prefixlen in (31, 127)})
    return Reach(len(racks), missing, tuple(leaked), ecmp, tuple(n for n in racks if DEFAULT4 in tables[n]))
