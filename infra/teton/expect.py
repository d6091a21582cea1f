"""What the design promises a running fabric shows, under any failures: sessions per switch, ECMP width per
destination, same-rail reachability over the backend, and, where the cluster has a front end, every GPU host reaching
every storage server and service host over it.  One definition, checked by the twin's verify, deploy's health checks
and gates.

All of it is computed from the Fabric of a build, never from the spec.

eBGP with RFC 7938 ASNs routes valley-free (up some tiers, then down) on shortest AS paths, and with multipath every
equal shortest path is used.  So the expected next hops of switch x towards rack switch t are the links to alive
neighbours on a shortest valley-free path, computed here on the Fabric with failed devices and links removed.  The
routed networks are the RoCE backend and the front end (both eBGP on RFC 7938 tiers); they share no link, so one model
holds both and a switch's probes stay inside its own network.

`promise(fabric, failures, sampling)` gives what to check (a `Promise`); `check(promise, observer)` asks an `Observer`
(the twin, a live switch) what it shows and returns the differences (a `Report`).  Sampling is a parameter: the twin's
verify and a deploy gate check the same things through the same functions, on more or fewer probes.
"""

from __future__ import annotations

import itertools
import random
import time
from collections.abc import Callable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from teton.fabric.model import Fabric, Interface
from teton.fabric.roles import role, server_link_kinds, tier_levels

ROUTED = ("roce", "frontend")  # the networks routed by eBGP between switch tiers (InfiniBand is routed by its SM)
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
    reachability from GPU hosts to storage and service hosts (`reach` of `reach_total`)."""

    sessions: dict[str, int]
    ecmp: tuple[EcmpProbe, ...]
    pings: tuple[PingProbe, ...]
    pings_total: int
    reach: tuple[PingProbe, ...] = ()
    reach_total: int = 0


def ecmp_probes(fabric: Fabric, sample: int, sources: Sequence[str] | None = None) -> list[tuple[str, str]]:
    """(switch, remote rack switch) pairs whose ECMP width is checked (a fixed sample on a big fabric), from
    `sources` (None: every routed switch)."""
    switches = sorted(n for n, d in fabric.devices.items() if d.role in TIER) if sources is None else sorted(sources)
    racks = sorted(n for n, d in fabric.devices.items() if d.role in RACK_ROLES)
    net = {n: _network(fabric, n) for n in (*switches, *racks)}
    pairs = [(x, t) for x in switches for t in racks if x != t and net[x] == net[t]]
    if len(pairs) > sample:
        pairs = sorted(random.Random(0).sample(pairs, sample))
    return pairs


def _network(fabric: Fabric, name: str) -> str | None:
    r = role(fabric.devices[name].role)
    return r.network if r is not None else None


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


def expected_sessions(fabric: Fabric, switches: Sequence[str], failures: Failures = NO_FAILURES) -> dict[str, int]:
    """Established sessions each alive switch of `switches` should have: one per family per alive link to a switch,
    as the design's routing intent lists them."""
    model = failures.model(fabric)
    failed_links = {frozenset(x) for x in failures.links}
    out = {}
    for name in switches:
        d = fabric.devices[name]
        if name not in model.alive or d.routing is None:
            continue
        up = {i.name for i in d.interfaces if i.peer in model.alive
              and frozenset({f"{name}:{i.name}", f"{i.peer}:{i.peer_port}"}) not in failed_links}
        out[name] = sum(1 for n in d.routing.neighbors if n.interface in up)
    return out


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
    """Each GPU host's first front-end address to the first of every storage server and service host (the NFS and
    Tectonic servers, the Slurm controller), both families, from and to NICs still attached under `failures`; a
    fixed sample of at most `sample` of them, and how many there are in all."""
    hosts = sorted(n for n, d in fabric.devices.items() if d.role == "host")
    servers = sorted(n for n, d in fabric.devices.items() if d.role in ("storage", "service"))
    out = []
    cut = {frozenset(x) for x in failures.links}
    for fam in ("ipv4", "ipv6"):
        dst = {s: _front_address(fabric, s, fam, failures, cut) for s in servers}
        for h in hosts:
            src = _front_address(fabric, h, fam, failures, cut)
            out += [PingProbe(h, src, s, d) for s in servers if src and (d := dst[s])]
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
    out = []
    for x in racks:
        for t in racks:
            if x != t and _network(fabric, x) == _network(fabric, t):
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
    return Promise(expected_sessions(fabric, switches, failures), ecmp, pings, total, reach, reach_total)


# ------------------------------------------------------------------------------------------------------ checking

class Observer(Protocol):
    """What a running fabric shows (the twin, a live switch): each question is one probe."""

    def established(self, switch: str) -> int:
        """Established BGP peers of `switch`; -1 if it does not answer."""
        ...

    def nexthops(self, switch: str, prefix: str) -> int:
        """Next hops the kernel of `switch` has for exactly `prefix` (0: no route)."""
        ...

    def reaches(self, probe: PingProbe) -> bool:
        """True if the ping of `probe` is answered."""
        ...


@dataclass(frozen=True)
class SessionMismatch:
    switch: str
    established: int      # -1: the switch's bgpd did not answer
    expected: int


@dataclass(frozen=True)
class EcmpMismatch:
    probe: EcmpProbe
    got: int


@dataclass(frozen=True)
class Report:
    """How a running fabric compares with a `Promise`: the differences, what was checked, and how long it took."""

    promise: Promise
    established: int
    sessions: tuple[SessionMismatch, ...]
    ecmp: tuple[EcmpMismatch, ...]
    pings: tuple[PingProbe, ...]            # the failed ones
    seconds: dict[str, float]               # "sessions", "pings", "reach", "ecmp"
    reach: tuple[PingProbe, ...] = ()       # the failed front-end pings

    @property
    def unchecked(self) -> tuple[str, ...]:
        """What the promise had nothing to probe for."""
        counts = [("sessions", sum(self.promise.sessions.values())), ("ECMP widths", len(self.promise.ecmp))]
        if self.promise.pings_total:       # a routed backend with hosts (InfiniBand's rails are not pinged here)
            counts.insert(1, ("same-rail pings", len(self.promise.pings)))
        if self.promise.reach_total:       # a cluster with servers on a front end
            counts.append(("front-end reach", len(self.promise.reach)))
        return tuple(what for what, n in counts if n == 0)

    @property
    def ok(self) -> bool:
        return not self.sessions and not self.ecmp and not self.pings and not self.reach

    def problems(self, named: bool = True) -> list[str]:
        """One line per difference; `named=False` leaves out the switch (a one-switch check)."""
        out = []
        for s in self.sessions:
            who = f"{s.switch}: " if named else ""
            if s.established < 0:
                out.append(f"{who}bgpd does not answer")
            out.append(f"{who}{max(s.established, 0)}/{s.expected} BGP sessions established")
        out += [f"{f'{m.probe.switch}: ' if named else ''}{m.got} next hops towards {m.probe.towards} "
                f"({m.probe.prefix}), the design has {m.probe.width}" for m in self.ecmp]
        out += [f"{p.host} ({p.src}) does not reach {p.peer} ({p.dst})" for p in self.pings]
        out += [f"{p.host} ({p.src}) does not reach {p.peer} ({p.dst}) over the front end" for p in self.reach]
        return out


def check(expected: Promise, observer: Observer, parallel: int = 8, sessions_at_least: bool = False) -> Report:
    """Ask `observer` for every probe of `expected`: sessions, then same-rail and front-end pings, then ECMP widths.
    A switch must have exactly its expected sessions; with `sessions_at_least`, at least those (a live switch may
    have peers of its own beside the design's)."""
    t0 = time.monotonic()
    got = {sw: observer.established(sw) for sw in expected.sessions}
    sessions = tuple(SessionMismatch(sw, got[sw], want) for sw, want in expected.sessions.items()
                     if got[sw] < want or (got[sw] != want and not sessions_at_least))
    t1 = time.monotonic()
    with ThreadPoolExecutor(parallel) as pool:
        reached = list(pool.map(observer.reaches, expected.pings))
        t2 = time.monotonic()
        front = list(pool.map(observer.reaches, expected.reach))
        t2r = time.monotonic()
        widths = list(pool.map(lambda p: observer.nexthops(p.switch, p.prefix), expected.ecmp))
    t3 = time.monotonic()
    return Report(
        promise=expected, established=sum(max(g, 0) for g in got.values()), sessions=sessions,
        ecmp=tuple(EcmpMismatch(p, w) for p, w in zip(expected.ecmp, widths, strict=True) if w != p.width),
        pings=tuple(p for p, ok in zip(expected.pings, reached, strict=True) if not ok),
        reach=tuple(p for p, ok in zip(expected.reach, front, strict=True) if not ok),
        seconds={"sessions": t1 - t0, "pings": t2 - t1, "reach": t2r - t2, "ecmp": t3 - t2r})


def wait_until_kept(expected: Promise, observer: Observer, timeout: float, interval: float = 0.2,
                    sessions_at_least: bool = False) -> Report:
    """`check` again until the fabric keeps `expected` or `timeout` seconds have passed; the last report."""
    deadline = time.monotonic() + timeout
    while True:
        report = check(expected, observer, sessions_at_least=sessions_at_least)
        if report.ok or time.monotonic() > deadline:
            return report
        time.sleep(interval)
