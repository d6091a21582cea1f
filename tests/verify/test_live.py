"""`teton verify live`'s check (teton.verify.live) on the lab, through a fleet of stand-in devices that show what the
design promises, under a failure or a recabling a test makes: which sessions are down (by peer), which ECMP widths
fell (switch, destination, expected, seen), which cables are crossed (by cable id), what a transport does not read;
by promise and by device.  The twin and the transports are tested on their own (tests/e2e, tests/targets)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from teton.expect import NO_FAILURES, Failures, Sampling, expected_peers, promise
from teton.fabric.neighbours import all_expected
from teton.findings import TetonError
from teton.targets.transports import Device, NotObserved
from teton.verify.live import Fleet, switches_of, verify_live

CTSW = "z01-ctsw01"


@dataclass
class Shown:
    """A fabric of stand-in devices showing the design under `failures`; `lldp` as EOS prints it, per switch."""

    fabric: object
    failures: Failures = NO_FAILURES
    lldp: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    unreachable: set[str] = field(default_factory=set)
    no_routes: set[str] = field(default_factory=set)        # switches whose transport does not read routes
    no_peers: set[str] = field(default_factory=set)         # ... nor peers

    def __post_init__(self) -> None:
        f = self.fabric
        switches = switches_of(f)
        self.peers = {sw: frozenset(n.address for n in ns) for sw, ns in expected_peers(f, switches,
                                                                                         self.failures).items()}
        whole = promise(f, [], self.failures, Sampling(ecmp=10**6, pings=0, reach=0))
        self.widths = {(p.switch, p.prefix): p.width for p in whole.ecmp}
        self.lldp = {d: [{"port": n.port, "neighborDevice": n.system, "neighborPort": n.port_id} for n in ns]
                     for d, ns in all_expected(f).items() if d in switches}

    def _alive(self, device: Device) -> None:
        if device.name in self.failures.devices:
            raise TetonError(f"{device.name}: connection refused")

    def established_peers(self, device: Device) -> frozenset[str]:
        if device.name in self.no_peers:
            raise NotObserved(f"{device.name}: peers are not read")
        self._alive(device)
        return self.peers[device.name]

    def nexthops(self, device: Device, prefix: str) -> int:
        if device.name in self.no_routes:
            raise NotObserved(f"{device.name}: routes are not read")
        self._alive(device)
        return self.widths.get((device.name, prefix), 0)

    def lldp_of(self, device: Device) -> object:
        self._alive(device)
        return {"lldpNeighbors": self.lldp[device.name]}

    def reaches(self, host: Device, src: str, dst: str) -> bool:
        return dst not in self.unreachable


def fleet(shown: Shown) -> Fleet:
    class Reader:
        established_peers = staticmethod(shown.established_peers)
        nexthops = staticmethod(shown.nexthops)
        lldp = staticmethod(shown.lldp_of)

    return Fleet("stand-ins", lambda s: (Reader(), Device(s, "sonic", {})),
                 lambda h: (shown, Device(h, "host", {})))


@pytest.fixture(scope="module")
def neighbours(lab_fabric):
    return {d: {n.port: n for n in ns} for d, ns in all_expected(lab_fabric).items()}


def test_a_fabric_as_designed_keeps_every_promise(lab_fabric, neighbours):
    steps = []
    r = verify_live(lab_fabric, neighbours, fleet(Shown(lab_fabric)), progress=lambda *a: steps.append(a))
    assert r.ok, r.lines()
    j = r.to_json()
    assert j["by_device"] == {} and j["errors"] == {} and j["unobserved"] == []
    assert j["switches"] == 29 == j["lldp_read"] and j["promises"]["sessions"]["expected"] == 168
    assert j["promises"]["lldp"]["as_designed"] == j["promises"]["lldp"]["ports"] > 0
    assert j["promises"]["same_rail"]["pinged"] == 448 and j["promises"]["reach"]["pinged"] > 0
    assert steps[-1][1] == steps[-1][2] == len(steps)                       # every step heard, to the last
    assert {what for what, _, _ in steps} == {"sessions", "LLDP", "pings", "ECMP widths"}
    assert "every promise kept" in r.summary()


def test_a_failed_ctsw_names_its_sessions_by_peer_and_the_ecmp_widths_that_fell(lab_fabric, neighbours):
    failed = Failures(devices=(CTSW,))
    r = verify_live(lab_fabric, neighbours, fleet(Shown(lab_fabric, failed)))
    assert not r.ok
    s = r.sessions()
    designed = expected_peers(lab_fabric, [CTSW])[CTSW]
    # every designed session of the CTSW, each named from its other end, and nothing else
    assert sorted((d["switch"], d["port"], d["family"], d["peer"], d["peer_port"]) for d in s["down"]) == sorted(
        (*n.peer.split(":"), n.family, CTSW, n.interface) for n in designed)
    assert s["unanswered"] == [{"switch": CTSW, "sessions": len(designed), "error": f"{CTSW}: connection refused"}]
    e = r.ecmp()
    healthy = {(p.switch, p.prefix): p.width for p in r.report.promise.ecmp}
    under = promise(lab_fabric, [], failed, Sampling(ecmp=10**6, pings=0, reach=0))
    fell = {(p.switch, p.prefix): p.width for p in under.ecmp if p.width < healthy[(p.switch, p.prefix)]}
    assert fell and {(x["switch"], x["prefix"]): x["seen"] for x in e["fell"]} == fell
    assert all(x["expected"] == healthy[(x["switch"], x["prefix"])] for x in e["fell"])
    assert {x["switch"] for x in e["unanswered"]} == {CTSW} and e["wider"] == []
    by = r.by_device()
    assert by[CTSW][0] == f"BGP does not answer: its {len(designed)} designed sessions not seen"
    rtsw = next(n for n in designed if n.family == "ipv4").peer.split(":")
    assert any(line.startswith(f"session {rtsw[1]} ipv4 to {CTSW} ") and line.endswith("not Established")
               for line in by[rtsw[0]])
    assert r.report.pings == () and "sessions down" in r.summary()


def test_two_crossed_host_cables_are_named_by_their_cable_ids(lab_fabric, neighbours):
    shown = Shown(lab_fabric)
    rows = {row["port"]: row for row in shown.lldp["z01-r001-rtsw"]}
    a, b = neighbours["z01-r001-h1"]["be0"], neighbours["z01-r001-h1"]["be1"]
    rows[a.peer_port]["neighborPort"], rows[b.peer_port]["neighborPort"] = "be1", "be0"   # h1's be0 and be1 crossed
    r = verify_live(lab_fabric, neighbours, fleet(shown))
    lldp = r.lldp()
    assert not r.ok and [x["cables"] for x in lldp["swapped"]] == [sorted([a.cable, b.cable])]
    assert lldp["miswired"] == lldp["missing"] == lldp["extra"] == []
    assert r.by_device()["z01-r001-rtsw"] == [f"cables {' and '.join(sorted([a.cable, b.cable]))} crossed: "
                                              f"{'; '.join(lldp['swapped'][0]['ends'])}"]


def test_a_read_a_transport_does_not_make_is_not_observed_not_passed_nor_failed(lab_fabric, neighbours):
    shown = Shown(lab_fabric, no_routes={"z01-r001-rtsw"}, no_peers={"atsw01"})
    r = verify_live(lab_fabric, neighbours, fleet(shown))
    assert r.ok and [(u.device, u.what) for u in r.unobserved if u.what == "sessions"] == [("atsw01", "sessions")]
    skipped = [u for u in r.unobserved if u.what == "ECMP widths"]
    assert [u.device for u in skipped] == ["z01-r001-rtsw"] and "routes are not read" in skipped[0].why
    assert r.ecmp()["checked"] == len(r.report.promise.ecmp) - sum(
        1 for p in r.report.promise.ecmp if p.switch == "z01-r001-rtsw")
    assert "not observed" in r.summary()


def test_only_one_tier_asks_its_switches_and_pings_no_host(lab_fabric, neighbours):
    shown = Shown(lab_fabric)
    shown.unreachable = {"10.0.0.1"}                       # not asked: no pings with --only
    r = verify_live(lab_fabric, neighbours, fleet(shown), only="ctsw")
    assert r.ok and r.switches == tuple(sorted(n for n, d in lab_fabric.devices.items() if d.role == "ctsw"))
    assert {p.switch for p in r.report.promise.ecmp} <= set(r.switches) and r.report.promise.pings == ()
    assert set(r.lldp_read) == set(r.switches)
    with pytest.raises(TetonError, match=r"--only 'leaf': the routed switches of lab are atsw, ctsw, fe-rsw, fsw, "
                                         r"rtsw, ssw"):
        verify_live(lab_fabric, neighbours, fleet(shown), only="leaf")
