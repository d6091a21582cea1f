"""What the design promises (`promise`): the routed switches' sessions, ECMP widths under failures (`EcmpModel`:
valley-free shortest paths with RFC 7938's shared ASNs), same-rail pings and front-end reach, sampled; the rack pairs a
failure costs paths (`lost_paths`).  Computed from the Fabric of a build, never from the spec (`teton.expect`)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from teton.fabric.intent import Neighbor
from teton.fabric.model import Fabric, Interface
from teton.fabric.roles import link_kinds, server_link_kinds, tier_levels

# the networks routed by eBGP between switch tiers (InfiniBand is routed by its SM); "site": a site's backend
# aggregation tier above its clusters' ATSWs (its BAG switches: in a site's merged build, teton.site.design)
ROUTED = ("roce", "frontend", "site")
TIER = {r: level for net in ROUTED for r, level in tier_levels(net).items()}   # their switch roles and levels
RACK_ROLES = tuple(sorted(r for r, level in TIER.items() if level == 1))      # rtsw, fe-rsw
FRONTEND_NICS = server_link_kinds("frontend")
INF = 1 << 30
ECMP_SAMPLE = 512      # (switch, remote rack) ECMP widths checked on a big fabric
PING_SAMPLE = 1024     # same-rail (host, host, NIC, family) pings on a big fabric; all of them when fewer


class EcmpModel:
    """Equal-cost next hops the design promises between routed switches, with failed devices and links removed."""

    def __init__(self, fabric: Fabric, failed_devices: AbstractSet[str] = frozenset(),
                 failed_links: AbstractSet[frozenset[str]] = frozenset()):
        """failed_links: {frozenset({"dev:port", "peer:port"})}."""
        self.fabric = fabric
        self.alive = {n for n, d in fabric.devices.items() if d.role in TIER and n not in failed_devices}
        self.adj: dict[str, list[str]] = {n: [] for n in self.alive}   # one entry per up link (parallel links repeat)
        for n in self.alive:
            for i in fabric.devices[n].interfaces:
                if i.peer in self.alive and frozenset({f"{n}:{i.name}", f"{i.peer}:{i.peer_port}"}) not in failed_links:
                    self.adj[n].append(i.peer)
        self._down: Callable[[str, str, frozenset[int | None]], int] = cache(self._down_dist)
        self._any: Callable[[str, str, frozenset[int | None]], int] = cache(self._any_dist)
    def _tier(self, n: str) -> int:
        return TIER[self.fabric.devices[n].role]

    def _asn(self, n: str) -> int | None:
        return self.fabric.devices[n].asn

    def _down_dist(self, x: str, t: str, ban: frozenset[int | None]) -> int:
        """Shortest path from x down to t avoiding ASNs in `ban` (BGP drops a path that holds the receiver's ASN)."""
        if x == t:
            return 0
        best = INF
        for n in self.adj[x]:
            if self._tier(n) < self._tier(x) and self._asn(n) not in ban:
                best = min(best, 1 + self._down(n, t, ban | {self._asn(n)}))
        return best

    def _any_dist(self, x: str, t: str, ban: frozenset[int | None]) -> int:
        """Shortest valley-free path from x to t (up some tiers, then down) avoiding ASNs in `ban`."""
        best = self._down(x, t, ban)
        for n in self.adj[x]:
            if self._tier(n) > self._tier(x) and self._asn(n) not in ban:
                best = min(best, 1 + self._any(n, t, ban | {self._asn(n)}))
        return best

    def next_hops(self, x: str, t: str) -> int:
        """Number of equal-cost next-hop links from switch x towards the prefixes of rack switch t (0: unreachable)."""
        if x not in self.alive or t not in self.alive or x == t:
            return 0
        ban = frozenset({self._asn(x)})
        d = self._any(x, t, ban)
        if d >= INF:
            return 0
        count = 0
        for n in self.adj[x]:
            if self._asn(n) in ban:
                continue
            nb = ban | {self._asn(n)}
            if self._tier(n) < self._tier(x) and 1 + self._down(n, t, nb) == d:
                count += 1
            elif self._tier(n) > self._tier(x) and 1 + self._any(n, t, nb) == d:
                count += 1
        return count


@dataclass(frozen=True)
class Failures:
    """What has failed on purpose: switches, and links as sorted ("dev:port", "peer:port") pairs."""

    devices: tuple[str, ...] = ()
    links: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Failures:
        links = tuple((str(a), str(b)) for a, b in data.get("links", []))
        return cls(tuple(str(d) for d in data.get("devices", [])), links)

    def to_json(self) -> dict[str, list[Any]]:
        return {"devices": list(self.devices), "links": [list(x) for x in self.links]}

    def model(self, fabric: Fabric) -> EcmpModel:
        return EcmpModel(fabric, frozenset(self.devices), frozenset(frozenset(x) for x in self.links))


NO_FAILURES = Failures()


@dataclass(frozen=True)
class EcmpProbe:
    """The design's ECMP width from `switch` towards the first prefix of rack switch `towards`."""

    switch: str
    towards: str
    prefix: str
    width: int


@dataclass(frozen=True)
class PingProbe:
    """NIC i of `host` (address `src`) to NIC i of `peer` (address `dst`): same rail, so reachable by design."""

    host: str
    src: str
    peer: str
    dst: str


@dataclass(frozen=True)
class Sampling:
    """How much of the promise to check: at most `ecmp` ECMP widths (from `ecmp_from`, None: every routed switch)
    `pings` same-rail pings and `reach` front-end pings.  A fixed sample: the same fabric gives the same probes."""

    ecmp: int = ECMP_SAMPLE
    pings: int = PING_SAMPLE
    ecmp_from: tuple[str, ...] | None = None
    reach: int = PING_SAMPLE     # front-end pings from GPU hosts to storage servers and service hosts


@dataclass(frozen=True)
class Promise:
    """What a running fabric must show: Established sessions per switch, ECMP widths, same-rail reachability
    (`pings_total`: how many same-rail pairs there are in all, of which `pings` is the sample), and the front end's
    reachability from GPU hosts to storage and service hosts (`reach` of `reach_total`).  `peers` names each
    switch's sessions (`expected_peers`): an observer that reads peer addresses says which are down."""

    sessions: dict[str, int]
    ecmp: tuple[EcmpProbe, ...]
    pings: tuple[PingProbe, ...]
    pings_total: int
    reach: tuple[PingProbe, ...] = ()
    reach_total: int = 0
    peers: Mapping[str, tuple[Neighbor, ...]] = field(default_factory=dict)


def _joined(fabric: Fabric, linked: Callable[[str, str], bool]) -> dict[str, str]:
    """{device: the first device of its connected part} over the designed links for which `linked(a, b)` holds: the
    networks as cabled (a site's merged build has one backend, joined by its aggregation tier, and one front end
    per cluster)."""
    parent = {n: n for n in fabric.devices}

    def find(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for link in fabric.links:
        a, b = link.a.device, link.b.device
        if a in parent and b in parent and linked(a, b):
            ra, rb = sorted((find(a), find(b)))
            parent[rb] = ra
    return {n: find(n) for n in parent}


def _routed_parts(fabric: Fabric) -> dict[str, str]:
    """The connected parts of the routed switches (links between two of them)."""
    routed = {n for n, d in fabric.devices.items() if d.role in TIER}
    return _joined(fabric, lambda a, b: a in routed and b in routed)


def ecmp_probes(fabric: Fabric, sample: int, sources: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(switch, remote rack switch) pairs of one routed network as cabled (one cluster's backend or front end; a
    site's backend with its aggregation tier) whose ECMP width is checked (a fixed sample on a big fabric), from
    `sources` (None: every routed switch)."""
    switches = sorted(n for n, d in fabric.devices.items() if d.role in TIER) if sources is None else sorted(sources)
    racks = sorted(n for n, d in fabric.devices.items() if d.role in RACK_ROLES)
    part = _routed_parts(fabric)
    pairs = [(x, t) for x in switches for t in racks if x != t and part[x] == part[t]]
    if len(pairs) > sample:
        pairs = sorted(random.Random(0).sample(pairs, sample))
    return pairs


def expected_ecmp(fabric: Fabric, failures: Failures, pairs: Sequence[tuple[str, str]]) -> tuple[EcmpProbe, ...]:
    """The design's ECMP width for each (alive switch, rack switch) pair, under `failures`; towards the rack's first
    prefix (a rack switch without prefixes has nothing to probe)."""
    model = failures.model(fabric)
    out = []
    for x, t in pairs:
        d = fabric.devices[t]
        prefix = (d.prefixes4 or d.prefixes6 or (None,))[0]
        if x in model.alive and prefix is not None:
            out.append(EcmpProbe(x, t, prefix, model.next_hops(x, t)))
    return tuple(out)


def expected_peers(fabric: Fabric, switches: Sequence[str],
                   failures: Failures = NO_FAILURES) -> dict[str, tuple[Neighbor, ...]]:
    """The sessions each alive switch of `switches` should have Established, as its routing intent lists them (one
    per family per alive link to a switch): each with the peer's address, device and port."""
    model = failures.model(fabric)
    failed_links = {frozenset(x) for x in failures.links}
    out = {}
    for name in switches:
        d = fabric.devices[name]
        if name not in model.alive or d.routing is None:
            continue
        up = {i.name for i in d.interfaces if i.peer in model.alive
              and frozenset({f"{name}:{i.name}", f"{i.peer}:{i.peer_port}"}) not in failed_links}
        out[name] = tuple(n for n in d.routing.neighbors if n.interface in up)
    return out


def expected_sessions(fabric: Fabric, switches: Sequence[str], failures: Failures = NO_FAILURES) -> dict[str, int]:
    """How many sessions each alive switch of `switches` should have Established (`expected_peers`)."""
    return {name: len(peers) for name, peers in expected_peers(fabric, switches, failures).items()}


def _attached(failures: Failures, cut: AbstractSet[frozenset[str]], host: str, interface: Interface) -> bool:
    """Whether a server's NIC still has its switch: the switch alive and the cable (not in `cut`) up."""
    return interface.peer not in failures.devices and \
        frozenset({f"{host}:{interface.name}", f"{interface.peer}:{interface.peer_port}"}) not in cut


def same_rail_pairs(fabric: Fabric, sample: int,
                    failures: Failures = NO_FAILURES) -> tuple[tuple[PingProbe, ...], int]:
    """NIC i of host a to NIC i of host b, both families, both NICs still attached under `failures`; a fixed sample
    of at most `sample` of them, and how many there are in all."""
    hosts = sorted(n for n, d in fabric.devices.items() if d.role == "host")
    cut = {frozenset(x) for x in failures.links}
    nics = {h: {i.name: i for i in fabric.devices[h].interfaces
                if i.kind == "host-rtsw" and _attached(failures, cut, h, i)} for h in hosts}
    rails = sorted({nic for h in hosts for nic in nics[h]})
    out = []
    for rail in rails:
        for fam in ("ipv4", "ipv6"):
            pairs = [(a, b) for a, b in itertools.combinations(hosts, 2) if rail in nics[a] and rail in nics[b]]
            for a, b in pairs:
                src, dst = getattr(nics[a][rail], fam), getattr(nics[b][rail], fam)
                if src and dst:
                    out.append(PingProbe(a, src.split("/")[0], b, dst.split("/")[0]))
    total = len(out)
    if total > sample:
        out = sorted(random.Random(1).sample(out, sample), key=lambda p: (p.host, p.src, p.peer, p.dst))
    return tuple(out), total


def _front_address(fabric: Fabric, name: str, family: str, failures: Failures,
                   cut: AbstractSet[frozenset[str]]) -> str | None:
    """The first front-end address of server `name` in `family` ("ipv4", "ipv6") on a NIC still attached under
    `failures` (`cut`: its links as sets of ends), without its length."""
    for i in fabric.devices[name].interfaces:
        address = getattr(i, family) if i.kind in FRONTEND_NICS and _attached(failures, cut, name, i) else None
        if address:
            return str(address).split("/")[0]
    return None


def frontend_pairs(fabric: Fabric, sample: int,
                   failures: Failures = NO_FAILURES) -> tuple[tuple[PingProbe, ...], int]:
    """Each GPU host's first front-end address to the first of every storage server and service host of its front
    end (the NFS and Tectonic servers, the Slurm controller; a site's merged build has one front end per cluster),
    both families, from and to NICs still attached under `failures`; a fixed sample of at most `sample` of them, and
    how many there are in all."""
    hosts = sorted(n for n, d in fabric.devices.items() if d.role == "host")
    kinds = set(link_kinds("frontend"))
    front = {(link.a.device, link.b.device) for link in fabric.links if link.kind in kinds}
    part = _joined(fabric, lambda a, b: (a, b) in front)
    servers = sorted(n for n, d in fabric.devices.items() if d.role in ("storage", "service"))
    out = []
    cut = {frozenset(x) for x in failures.links}
    for fam in ("ipv4", "ipv6"):
        dst = {s: _front_address(fabric, s, fam, failures, cut) for s in servers}
        for h in hosts:
            src = _front_address(fabric, h, fam, failures, cut)
            out += [PingProbe(h, src, s, d) for s in servers if src and (d := dst[s]) and part[h] == part[s]]
    total = len(out)
    if total > sample:
        out = sorted(random.Random(2).sample(out, sample), key=lambda p: (p.host, p.src, p.peer, p.dst))
    return tuple(out), total


@dataclass(frozen=True)
class RackPaths:
    """Equal-cost paths from rack switch `rack` towards rack switch `towards` (its first uplink hop's ECMP width),
    without failures and under them."""

    rack: str
    towards: str
    before: int
    after: int


def lost_paths(fabric: Fabric, failures: Failures) -> tuple[RackPaths, ...]:
    """Every ordered pair of rack switches of one routed network (neither failed) whose ECMP width `failures` cut:
    what the hosts behind them lose.  `after == 0`: no path left."""
    healthy, hurt = NO_FAILURES.model(fabric), failures.model(fabric)
    racks = sorted(n for n in hurt.alive if fabric.devices[n].role in RACK_ROLES)
    part = _routed_parts(fabric)
    out = []
    for x in racks:
        for t in racks:
            if x != t and part[x] == part[t]:
                before, after = healthy.next_hops(x, t), hurt.next_hops(x, t)
                if after < before:
                    out.append(RackPaths(x, t, before, after))
    return tuple(out)


def promise(fabric: Fabric, switches: Sequence[str], failures: Failures = NO_FAILURES,
            sampling: Sampling = Sampling()) -> Promise:
    """What the design promises `switches` (their sessions) and the fabric (ECMP, same-rail pings, front-end
    reachability) show."""
    pings, total = same_rail_pairs(fabric, max(0, sampling.pings), failures)
    reach, reach_total = frontend_pairs(fabric, max(0, sampling.reach), failures)
    ecmp = expected_ecmp(fabric, failures, ecmp_probes(fabric, sampling.ecmp, sampling.ecmp_from))
    peers = expected_peers(fabric, switches, failures)
    return Promise({sw: len(p) for sw, p in peers.items()}, ecmp, pings, total, reach, reach_total, peers)
