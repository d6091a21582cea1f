"""`teton verify live`: every promise of `teton.expect` checked on the running devices, each read through its own
transport (the twin's, or each NOS's live one: eAPI, SSH), and the LLDP neighbours its build's cabling promises.

What is checked is what `teton twin verify` checks, as the design promises it without failures: each routed
switch's sessions, named (`expect.expected_peers`: a session down is said by its peer's address, device and port),
ECMP widths towards the other racks (a fixed sample on a big fabric), same-rail pings and the front end's reach from
the GPU hosts; and every switch's LLDP neighbours against `cabling/neighbours.json` (`teton verify cabling`'s
comparison: crossed cables by cable id and both ends).  `only` narrows it to one tier's switches (their sessions,
their ECMP widths, their LLDP; no pings).

Each device is asked through a `Fleet`, which the caller makes (`teton.deploy.live` from the twin or the transport
registry): a switch's `Reader`, a server's `Pinger`.  A device that does not answer fails what it was asked, with
its error; a read its transport does not make (`NotObserved`: FBOSS's routes and LLDP) is listed as not observed,
neither kept nor broken.  Sessions and LLDP are read from every switch at once (threads), then `teton.expect.check`
asks the rest; `progress` hears every step.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from teton.expect import NO_FAILURES, PING_SAMPLE, TIER, PingProbe, Promise, Sampling, check, promise
from teton.fabric.model import Fabric
from teton.fabric.neighbours import Neighbour
from teton.findings import TetonError
from teton.targets.cabling.lldp import LldpError, Seen, parse_data
from teton.targets.cabling.verify import compare
from teton.targets.transports import Device, NotObserved, Pinger, Reader
from teton.verify.live_report import LiveReport, Unobserved

PARALLEL = 16        # devices asked at once
_T = TypeVar("_T")

Progress = Callable[[str, int, int], None]
"""(what is being asked, steps done, steps in all): called after every step, from any thread."""


@dataclass(frozen=True)
class Fleet:
    """How the running devices are reached: `where` they run ("twin NAME", "live"), each switch's reader and each
    server's pinger with the `Device` to hand it (TetonError: no way to reach it), and what to remark once they
    were asked (a twin whose LLDP did not settle)."""

    where: str
    reader: Callable[[str], tuple[Reader, Device]]
    pinger: Callable[[str], tuple[Pinger, Device]]
    remarks: Callable[[], tuple[str, ...]] = tuple


def switches_of(fabric: Fabric, only: str | None = None) -> list[str]:
    """The routed switches `teton verify live` asks (those of role `only`); TetonError naming the roles there are."""
    routed = sorted(n for n, d in fabric.devices.items() if d.role in TIER)
    if only is None:
        return routed
    roles = sorted({fabric.devices[n].role for n in routed})
    if only not in roles:
        raise TetonError(f"--only {only!r}: the routed switches of {fabric.name} are {', '.join(roles)}")
    return [n for n in routed if fabric.devices[n].role == only]


class _Asked:
    """What the devices answered, as `teton.expect.check` asks it (an Observer that reads peer addresses); every
    answer counted for `progress`, every error and every read not made recorded by device."""

    def __init__(self, fleet: Fleet, expected: Promise, total: int, progress: Progress | None):
        self.fleet, self.expected, self.total, self.progress = fleet, expected, total, progress
        self.widths = {(p.switch, p.prefix): p.width for p in expected.ecmp}
        self.peers: dict[str, frozenset[str] | None] = {}
        self.errors: dict[str, str] = {}
        self.unobserved: dict[tuple[str, str], tuple[str, int]] = {}     # (device, what) -> (why, reads not made)
        self._done = 0
        self._lock = threading.Lock()

    def step(self, what: str) -> None:
        with self._lock:
            self._done += 1
            done = self._done
        if self.progress is not None:
            self.progress(what, done, self.total)

    def ask(self, device: str, what: str, read: Callable[[], _T], instead: _T, unobserved: _T) -> _T:
        """`read()`, else `instead` with the error recorded, or `unobserved` when the transport does not read it."""
        try:
            return read()
        except NotObserved as exc:
            with self._lock:
                self.unobserved[(device, what)] = (str(exc), self.unobserved.get((device, what), ("", 0))[1] + 1)
            return unobserved
        except (TetonError, OSError) as exc:
            with self._lock:
                self.errors.setdefault(device, str(exc) or type(exc).__name__)
            return instead
        finally:
            self.step(what)

    def read_peers(self, switch: str) -> frozenset[str] | None:
        def read() -> frozenset[str] | None:
            reader, device = self.fleet.reader(switch)
            return reader.established_peers(device)

        designed = frozenset(n.address for n in self.expected.peers.get(switch, ()))
        return self.ask(switch, "sessions", read, None, designed)

    # the Observer `teton.expect.check` asks
    def established_peers(self, switch: str) -> frozenset[str] | None:
        return self.peers.get(switch)

    def established(self, switch: str) -> int:
        peers = self.peers.get(switch)
        return -1 if peers is None else len(peers)

    def nexthops(self, switch: str, prefix: str) -> int:
        def read() -> int:
            reader, device = self.fleet.reader(switch)
            return reader.nexthops(device, prefix)

        return self.ask(switch, "ECMP widths", read, -1, self.widths.get((switch, prefix), -1))

    def reaches(self, probe: PingProbe) -> bool:
        def read() -> bool:
            pinger, device = self.fleet.pinger(probe.host)
            return pinger.reaches(device, probe.src, probe.dst)

        return self.ask(probe.host, "pings", read, False, True)


def _each(pool: ThreadPoolExecutor, items: Sequence[str], fn: Callable[[str], _T]) -> dict[str, _T]:
    return dict(zip(items, pool.map(fn, items), strict=True))


def verify_live(fabric: Fabric, neighbours: Mapping[str, Mapping[str, Neighbour]], fleet: Fleet,
                only: str | None = None, sampling: Sampling | None = None,
                progress: Progress | None = None) -> LiveReport:
    """Ask every running device of `fabric` what the design promises it shows (`neighbours`: the build's expected
    LLDP neighbours, `cabling/neighbours.json`)."""
    switches = switches_of(fabric, only)
    t0 = time.monotonic()
    if sampling is None:
        pings = 0 if only is not None else PING_SAMPLE
        sampling = Sampling(pings=pings, reach=pings, ecmp_from=tuple(switches) if only is not None else None)
    expected = promise(fabric, switches, NO_FAILURES, sampling)
    lldp_of = [s for s in switches if s in neighbours]
    total = len(switches) + len(lldp_of) + len(expected.ecmp) + len(expected.pings) + len(expected.reach)
    asked = _Asked(fleet, expected, total, progress)
    seen: dict[str, list[Seen]] = {}
    with ThreadPoolExecutor(PARALLEL) as pool:
        asked.peers = _each(pool, list(expected.sessions), asked.read_peers)
        t1 = time.monotonic()
        for switch, data in _each(pool, lldp_of, lambda s: _lldp(asked, s)).items():
            if data is not None:
                try:
                    seen[switch] = parse_data(data, f"{switch}'s LLDP")
                except LldpError as exc:
                    asked.errors.setdefault(switch, str(exc))
    t2 = time.monotonic()
    report = check(expected, asked, parallel=PARALLEL // 2, sessions_at_least=True)
    cabling = compare({d: dict(p) for d, p in neighbours.items()}, seen) if seen else None
    seconds = {"sessions": t1 - t0, "lldp": t2 - t1, **{k: v for k, v in report.seconds.items() if k != "sessions"},
               "total": time.monotonic() - t0}
    unobserved = tuple(Unobserved(d, what, why, n) for (d, what), (why, n) in sorted(asked.unobserved.items()))
    return LiveReport(where=fleet.where, only=only, switches=tuple(switches), report=report, cabling=cabling,
                      lldp_read=tuple(sorted(seen)), unobserved=unobserved, errors=dict(sorted(asked.errors.items())),
                      seconds={k: round(v, 3) for k, v in seconds.items()}, remarks=fleet.remarks())


def _lldp(asked: _Asked, switch: str) -> Any:
    def read() -> Any:
        reader, device = asked.fleet.reader(switch)
        return reader.lldp(device)

    return asked.ask(switch, "LLDP", read, None, None)
