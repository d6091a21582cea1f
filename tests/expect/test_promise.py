"""teton.expect: one promise, checked through any observer; sampling is a parameter (no root, no twin needed)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests.helpers import INVENTORY
from teton.expect import NO_FAILURES, Failures, PingProbe, Sampling, check, expected_sessions, promise


@dataclass
class FakeFabric:
    """An observer that shows exactly the promise, except what a test breaks."""

    sessions: dict[str, int]
    widths: dict[tuple[str, str], int]
    unreachable: set[str] = field(default_factory=set)

    def established(self, switch: str) -> int:
        return self.sessions.get(switch, -1)

    def nexthops(self, switch: str, prefix: str) -> int:
        return self.widths[(switch, prefix)]

    def reaches(self, probe: PingProbe) -> bool:
        return probe.dst not in self.unreachable


def _showing(p):
    return FakeFabric(dict(p.sessions), {(e.switch, e.prefix): e.width for e in p.ecmp})


def test_a_fabric_that_keeps_the_promise_passes_and_one_that_breaks_it_says_where(lab_fabric):
    switches = sorted(n for n, d in lab_fabric.devices.items() if d.role in ("rtsw", "ctsw", "atsw"))
    p = promise(lab_fabric, switches, NO_FAILURES, Sampling(ecmp=20, pings=10))
    assert len(p.ecmp) == 20 and len(p.pings) == 10 and p.pings_total > 10
    observer = _showing(p)
    report = check(p, observer)
    assert report.ok and not report.unchecked and report.established == sum(p.sessions.values())
    observer.sessions[switches[0]] -= 1
    probe = p.ecmp[0]
    observer.widths[(probe.switch, probe.prefix)] = probe.width + 1
    observer.unreachable.add(p.pings[0].dst)
    report = check(p, observer)
    assert not report.ok
    assert [m.switch for m in report.sessions] == [switches[0]]
    assert [m.probe for m in report.ecmp] == [probe]
    assert p.pings[0] in report.pings
    assert any(line.startswith(f"{switches[0]}: ") for line in report.problems())


def test_sampling_narrows_the_same_promise(lab_fabric):
    whole = promise(lab_fabric, [], NO_FAILURES, Sampling(ecmp=10_000, pings=0))
    one = promise(lab_fabric, [], NO_FAILURES, Sampling(ecmp=10_000, pings=0, ecmp_from=("z01-r001-rtsw",)))
    assert one.ecmp and set(one.ecmp) <= set(whole.ecmp)
    assert {e.switch for e in one.ecmp} == {"z01-r001-rtsw"}
    assert check(one, _showing(whole)).unchecked == ("sessions", "same-rail pings")


def test_a_failed_switch_is_not_expected_and_its_peers_expect_fewer_sessions(lab_fabric):
    full = expected_sessions(lab_fabric, ["z01-ctsw01", "z01-r001-rtsw"])
    failed = expected_sessions(lab_fabric, ["z01-ctsw01", "z01-r001-rtsw"], Failures(devices=("z01-ctsw01",)))
    assert "z01-ctsw01" not in failed
    assert failed["z01-r001-rtsw"] < full["z01-r001-rtsw"]
    assert Failures.from_json(Failures(("a",), (("a:1", "b:1"),)).to_json()) == Failures(("a",), (("a:1", "b:1"),))


@dataclass
class PeersShown(FakeFabric):
    """An observer that reads peer addresses (a `PeerObserver`): each switch's designed peers, but what a test took."""

    peers: dict[str, frozenset[str] | None] = field(default_factory=dict)

    def established_peers(self, switch: str) -> frozenset[str] | None:
        return self.peers.get(switch)


def test_an_observer_of_peer_addresses_names_each_designed_session_down(lab_fabric):
    switches = ["z01-ctsw01", "z01-r001-rtsw"]
    p = promise(lab_fabric, switches, NO_FAILURES, Sampling(ecmp=0, pings=0, reach=0))
    assert {sw: len(n) for sw, n in p.peers.items()} == p.sessions == expected_sessions(lab_fabric, switches)
    observer = PeersShown({}, {}, peers={sw: frozenset(n.address for n in p.peers[sw]) for sw in switches})
    assert check(p, observer).ok
    lost = next(n for n in p.peers["z01-r001-rtsw"] if n.peer.startswith("z01-ctsw01:"))
    observer.peers["z01-r001-rtsw"] = observer.peers["z01-r001-rtsw"] - {lost.address} | {"192.0.2.99"}
    observer.peers["z01-ctsw01"] = None                                    # its bgpd does not answer
    report = check(p, observer, sessions_at_least=True)
    by = {m.switch: m for m in report.sessions}
    assert by["z01-r001-rtsw"].down == (lost,)       # as many peers as designed, but not the designed ones
    assert by["z01-ctsw01"].established == -1 and by["z01-ctsw01"].down == p.peers["z01-ctsw01"]
    assert f"z01-r001-rtsw: session {lost.interface} {lost.family} to {lost.peer} ({lost.address}) not " \
           "Established" in report.problems()


@pytest.fixture(scope="module")
def site_fabric():
    """The lab site (inventory/site-lab.yaml) as one Fabric: lab-a and lab-b, and the BAG switches joining their
    backends (what a site's merged build holds and its twin runs)."""
    from teton.site.design import design_site, merged
    from teton.site.load import load_site

    return merged(design_site(load_site(INVENTORY / "site-lab.yaml")))


def test_a_site_promises_one_backend_through_its_aggregation_tier_and_a_front_end_per_cluster(site_fabric):
    from teton.expect import TIER, ecmp_probes, frontend_pairs, lost_paths

    assert TIER["bag"] == TIER["atsw"] + 1                 # the BAG switches: routed, above the ATSWs
    probes = ecmp_probes(site_fabric, 10_000)
    cluster = {n: n.partition("--")[0] if "--" in n else "site" for n in site_fabric.devices}
    role = {n: d.role for n, d in site_fabric.devices.items()}
    # the backend is one network across the site, the BAG switches in it; each front end is its cluster's alone
    assert ("bag01", "lab-b--z02-r002-rtsw") in probes and ("lab-a--z01-r001-rtsw", "lab-b--z02-r002-rtsw") in probes
    assert not any(role[t] == "fe-rsw" and cluster[x] != cluster[t] for x, t in probes)
    assert not any(role[x] == "bag" and role[t] == "fe-rsw" for x, t in probes)
    model = NO_FAILURES.model(site_fabric)
    assert model.next_hops("lab-a--z01-r001-rtsw", "lab-b--z02-r002-rtsw") == 4     # every CTSW of its zone
    assert model.next_hops("lab-a--z01-ctsw01", "lab-b--z02-r002-rtsw") == 2        # both ATSWs
    assert model.next_hops("lab-a--atsw01", "lab-b--z02-r002-rtsw") == 2            # both BAG switches
    assert model.next_hops("bag01", "lab-b--z02-r002-rtsw") == 2                    # lab-b's two ATSWs
    reach, total = frontend_pairs(site_fabric, 10_000)
    assert total == 2 * 8 * 7 and all(cluster[p.host] == cluster[p.peer] for p in reach)
    # one BAG switch carries the site; without both, every rack pair across the clusters is cut off
    assert Failures(devices=("bag01",)).model(site_fabric).next_hops("lab-a--atsw01", "lab-b--z02-r002-rtsw") == 1
    apart = lost_paths(site_fabric, Failures(devices=("bag01", "bag02")))
    assert len(apart) == 2 * 4 * 4 and all(p.after == 0 and cluster[p.rack] != cluster[p.towards] for p in apart)
