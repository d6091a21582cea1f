"""Checking a promise: an `Observer` (the twin, a live switch) asked every probe of a `Promise`, the differences as a
`Report` (`check`), or again until the fabric keeps it (`wait_until_kept`)."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from teton.expect.model import EcmpProbe, PingProbe, Promise
from teton.fabric.intent import Neighbor


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


@runtime_checkable
class PeerObserver(Protocol):
    """An observer that also reads which peers are Established: `check` then names each designed session down."""

    def established_peers(self, switch: str) -> frozenset[str] | None:
        """The addresses of the Established BGP peers of `switch`; None if it does not answer."""
        ...


@dataclass(frozen=True)
class SessionMismatch:
    switch: str
    established: int      # -1: the switch's bgpd did not answer
    expected: int
    down: tuple[Neighbor, ...] = ()     # the designed sessions not Established (a `PeerObserver`'s answer)


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
            out += [f"{who}session {n.interface} {n.family} to {n.peer} ({n.address}) not Established"
                    for n in s.down if s.established >= 0]
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
    if isinstance(observer, PeerObserver):
        seen = {sw: observer.established_peers(sw) for sw in expected.sessions}
        got = {sw: -1 if peers is None else len(peers) for sw, peers in seen.items()}
        down = {sw: tuple(n for n in expected.peers.get(sw, ()) if peers is None or n.address not in peers)
                for sw, peers in seen.items()}
    else:
        got, down = {sw: observer.established(sw) for sw in expected.sessions}, {}
    sessions = tuple(SessionMismatch(sw, got[sw], want, down.get(sw, ())) for sw, want in expected.sessions.items()
                     if got[sw] < want or (got[sw] != want and not sessions_at_least) or down.get(sw))
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
