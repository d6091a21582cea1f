"""What `teton twin up | verify | fail | restore | down` answer: typed records, and their JSON as the CLI prints it.

`teton.twin.service` returns these; the CLI prints `to_json()` (the keys below are its output, and tests read them),
the deploy gate reads the fields (`teton.deploy.twin_client`).  The mismatches are `teton.expect`'s own records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from teton.expect import EcmpMismatch, Failures, PingProbe, RackPaths, SessionMismatch


def pings_json(probes: tuple[PingProbe, ...]) -> list[dict[str, str]]:
    return [{"from": p.host, "src": p.src, "to": p.peer, "dst": p.dst} for p in probes]


def ecmp_json(mismatches: tuple[EcmpMismatch, ...]) -> list[dict[str, Any]]:
    return [{"switch": m.probe.switch, "prefix": m.probe.prefix, "towards": m.probe.towards,
             "expected": m.probe.width, "got": m.got} for m in mismatches]


@dataclass(frozen=True)
class TwinUp:
    """A twin that came up: its size, how long each step took, and the ECMP widths still off the design."""

    twin: str
    switches: int
    hosts: int
    links: int
    render_s: float
    up_s: float
    converged_s: float
    ecmp_installed_s: float
    sessions: int
    daemon_rss_mib: float
    eos_as_frr: tuple[str, ...]                # switches that run the FRR spelling of their read-back routing
    ecmp_mismatches: tuple[EcmpMismatch, ...]
    networks: tuple[str, ...] = ("roce",)      # the routed networks it runs ("roce", "frontend")

    def to_json(self) -> dict[str, Any]:
        return {"twin": self.twin, "networks": list(self.networks), "switches": self.switches, "hosts": self.hosts,
                "links": self.links,
                "render_s": self.render_s, "up_s": self.up_s, "converged_s": self.converged_s,
                "ecmp_installed_s": self.ecmp_installed_s, "sessions": self.sessions,
                "daemon_rss_mib": self.daemon_rss_mib, "eos_as_frr": list(self.eos_as_frr),
                "ecmp_mismatches": ecmp_json(self.ecmp_mismatches)}


@dataclass(frozen=True)
class BgpCheck:
    expected_sessions: int
    established: int
    mismatched: tuple[SessionMismatch, ...]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"expected_sessions": self.expected_sessions, "established": self.established,
                "mismatched": {m.switch: {"established": m.established, "expected": m.expected}
                               for m in self.mismatched},
                "seconds": self.seconds}


@dataclass(frozen=True)
class PingCheck:
    pinged: int
    of: int                                    # same-rail pairs in all (pinged: the sample)
    failed: tuple[PingProbe, ...]
    hosts: int
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"pinged": self.pinged, "of": self.of, "failed": pings_json(self.failed), "hosts": self.hosts,
                "seconds": self.seconds}


@dataclass(frozen=True)
class EcmpCheck:
    checked: int
    mismatched: tuple[EcmpMismatch, ...]
    seconds: float

    def to_json(self) -> dict[str, Any]:
        return {"checked": self.checked, "mismatched": ecmp_json(self.mismatched), "seconds": self.seconds}


@dataclass(frozen=True)
class VerifyReport:
    """`twin verify`: ok only if something was probed (`unchecked` empty) and every check held."""

    twin: str
    ok: bool
    failures: Failures
    unchecked: tuple[str, ...]
    bgp: BgpCheck
    same_rail_ping: PingCheck
    ecmp: EcmpCheck
    eos_as_frr: tuple[str, ...]
    frontend_ping: PingCheck | None = None     # GPU hosts -> storage servers and service hosts; None: no front end

    def to_json(self) -> dict[str, Any]:
        return {"twin": self.twin, "ok": self.ok, "failures": self.failures.to_json(),
                "unchecked": list(self.unchecked), "bgp": self.bgp.to_json(),
                "same_rail_ping": self.same_rail_ping.to_json(), "ecmp": self.ecmp.to_json(),
                "frontend_ping": self.frontend_ping.to_json() if self.frontend_ping else None,
                "eos_as_frr": list(self.eos_as_frr)}


@dataclass(frozen=True)
class Reconvergence:
    """Seconds from a change until the sessions, then every checked ECMP width, matched the design."""

    sessions_settled_s: float
    ecmp_settled_s: float
    ecmp_mismatched: tuple[EcmpMismatch, ...]

    def to_json(self) -> dict[str, Any]:
        return {"sessions_settled_s": self.sessions_settled_s, "ecmp_settled_s": self.ecmp_settled_s,
                "ecmp_mismatched": ecmp_json(self.ecmp_mismatched)}


@dataclass(frozen=True)
class FailResult:
    """A failure applied: how fast the fabric settled, which rack pairs lost paths by design (`lost`, from
    `teton.expect.lost_paths`), and whether every host still reached what it must once it settled (`probed`
    pings, same-rail and front-end, of which `unreached` failed).  Survived: settled as designed, nothing cut
    off, every ping answered."""

    twin: str
    failed: str                                # the switch or link 'device:port' taken down
    how: str                                   # kill, freeze, links, or "link down"
    reconvergence: Reconvergence
    lost: tuple[RackPaths, ...] = ()
    probed: int = 0
    unreached: tuple[PingProbe, ...] = ()

    @property
    def survived(self) -> bool:
        return not self.reconvergence.ecmp_mismatched and not self.unreached and all(p.after for p in self.lost)

    def to_json(self) -> dict[str, Any]:
        cut = sum(1 for p in self.lost if not p.after)
        return {"twin": self.twin, "failed": self.failed, "how": self.how, "survived": self.survived,
                "summary": f"{len(self.lost)} rack pairs lost paths ({cut} of them every path); "
                           f"{self.probed - len(self.unreached)} of {self.probed} pings answered after it settled",
                "lost_paths": [{"rack": p.rack, "towards": p.towards, "paths": f"{p.before} -> {p.after}"}
                               for p in self.lost],
                "unreached": pings_json(self.unreached),
                "reconvergence": self.reconvergence.to_json()}


@dataclass(frozen=True)
class RestoreResult:
    twin: str
    restored: Failures
    restarted: tuple[str, ...]                 # switches whose daemons had died outside teton
    reconvergence: Reconvergence
    uncrossed: tuple[tuple[str, str], ...] = ()   # the port pairs of `twin swap`s undone

    def to_json(self) -> dict[str, Any]:
        return {"twin": self.twin, "restored": self.restored.to_json(), "restarted": list(self.restarted),
                "reconvergence": self.reconvergence.to_json(), "uncrossed": [list(x) for x in self.uncrossed]}


@dataclass(frozen=True)
class DownResult:
    twin: str
    stopped: bool
    leftovers_removed: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {"twin": self.twin, "stopped": self.stopped, "leftovers_removed": list(self.leftovers_removed)}


TwinResult = TwinUp | VerifyReport | FailResult | RestoreResult | DownResult


@dataclass(frozen=True)
class LldpResult:
    """What `teton twin lldp` collected: one file per device, and whether what lldpd saw matched the cables."""

    twin: str
    folder: str
    devices: int
    neighbours: int
    started: int                               # lldpd daemons started by this call (0: they were running)
    settled_s: float
    settled: bool                              # every device saw what the twin's cables make visible

    def to_json(self) -> dict[str, Any]:
        return {"twin": self.twin, "folder": self.folder, "devices": self.devices, "neighbours": self.neighbours,
                "lldpd_started": self.started, "settled_s": self.settled_s, "settled": self.settled}


@dataclass(frozen=True)
class SwapResult:
    """Two cables crossed (`teton twin swap`): the ports, the cables' ids, and the ends as they lie now."""

    twin: str
    ports: tuple[str, str]
    cables: tuple[str, str]
    now: tuple[str, str]                       # "dev:port <-> dev:port" of each new link
    undone: bool                               # the swap put the two cables back as designed

    def to_json(self) -> dict[str, Any]:
        return {"twin": self.twin, "ports": list(self.ports), "cables": list(self.cables), "now": list(self.now),
                "as_designed": self.undone}
