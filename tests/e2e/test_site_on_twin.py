"""End to end: the lab site (inventory/site-lab.yaml: two copies of the lab joined by two BAG switches) as one twin
of its merged build (every cluster device named `<cluster>--<device>`, the BAG switches, every link), verified; a host
of lab-a reaches a host of lab-b over the backend, through the CTSWs, the ATSWs and the aggregation tier; one lab-a
ATSW cut off the tier, or one BAG switch stopped, and the other carries it; both BAG switches stopped, and the
clusters are apart.  The twin has its own name (TETON_SITE_TWIN, default `site`): it lives beside the session's `svc`
twin and the modules' `lab` twins."""

from __future__ import annotations

import ipaddress
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import INVENTORY

pytestmark = pytest.mark.root

NAME = os.environ.get("TETON_SITE_TWIN", "site")
SITE = INVENTORY / "site-lab.yaml"
SRC_HOST, DST_HOST = "lab-a--z01-r001-h1", "lab-b--z02-r002-h2"      # lab-a's zone 1 rack 1, lab-b's zone 2 rack 2
RACK, REMOTE_RACK = "lab-a--z01-r001-rtsw", "lab-b--z02-r002-rtsw"


@dataclass(frozen=True)
class SiteTwin:
    build: Path
    fabric: object        # teton.fabric.model.Fabric of the merged build
    report: object        # teton.twin.service.TwinUp
    up_s: float           # wall time of `up` (snapshot, plan, namespaces, daemons, converged, ECMP installed)


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"tt-{NAME}-")]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Iterator[SiteTwin]:
    """The lab site's merged build, rendered once (what `teton render SITE --merged DIR` writes), up as the twin
    NAME; down at the end, whatever happened."""
    from teton.buildfolder import BuildFolder
    from teton.pipeline import build_fabric
    from teton.site.design import design_site, merged
    from teton.site.load import load_site
    from teton.twin import service

    out = tmp_path_factory.mktemp("site") / "merged"
    build_fabric(merged(design_site(load_site(SITE))), out)
    service.down(name=NAME)
    try:
        t0 = time.monotonic()
        report = service.up(str(out), name=NAME)
        yield SiteTwin(out, BuildFolder(out).fabric(), report, time.monotonic() - t0)
    finally:
        service.down(name=NAME)
    assert _namespaces() == []


def _rail(fabric, host: str, nic: str = "be0") -> tuple[str, str]:
    """The IPv4 and IPv6 addresses of a host's rail NIC, as the merged build designs them."""
    i = fabric.device(host).interface(nic)
    assert i is not None and i.kind == "host-rtsw" and i.ipv4 and i.ipv6, (host, nic, i)
    return i.ipv4.split("/")[0], i.ipv6.split("/")[0]


def _reaches(host: str, src: str, dst: str, count: int = 3) -> bool:
    from teton.twin.service import load_twin

    return load_twin(NAME).ping(host, src, dst, count=count, timeout=1.0)


def _bgp_hops(switch: str, prefix: str) -> list[dict]:
    """FRR's installed next hops of `switch` for exactly `prefix` (vtysh `show ip[v6] route PREFIX json`)."""
    from teton.twin.service import load_twin

    entries = load_twin(NAME).routes(switch, prefix).get(prefix, [])
    return [h for e in entries if e.get("protocol") == "bgp" and e.get("installed")
            for h in e.get("nexthops", []) if h.get("fib")]


def _peer_roles(fabric, switch: str, hops: list[dict]) -> list[str]:
    """The roles of the devices behind `hops` (FRR names the kernel's interface: `linux_ifname` of the port)."""
    from teton.twin.plan import linux_ifname

    ports = {linux_ifname(i.name): i for i in fabric.device(switch).interfaces}
    return sorted(fabric.device(ports[h["interfaceName"]].peer).role for h in hops)


def test_the_merged_site_comes_up_with_its_aggregation_tier(site):
    r = site.report
    # per lab: 14 backend + 15 front-end switches, 8 GPU hosts, 6 storage servers and slurmctl; the tier: 2 BAGs
    assert (r.switches, r.hosts) == (2 * 29 + 2, 2 * 15)
    assert r.links == 2 * 140 + 2 * 4                      # each lab's links; each of the 4 ATSWs to both BAGs
    assert r.networks == ("roce", "frontend", "site") and r.ecmp_mismatches == ()
    assert {"bag01", "bag02", "lab-a--atsw01", "lab-b--z02-ctsw04"} <= set(r.eos_as_frr)   # EOS: the FRR spelling
    assert "lab-b--z01-r001-rtsw" not in r.eos_as_frr                                      # SONiC: its frr.conf
    assert r.sessions == 2 * 168 + 4 * 2 * 2 * 2           # + ATSW-BAG: 4 ATSWs x 2 BAGs x v4/v6, both ends
    assert len(_namespaces()) == 90
    print(f"site twin up in {site.up_s:.1f} s (converged {r.converged_s} s), FRR RSS {r.daemon_rss_mib} MiB")


def test_verify_is_clean_across_the_site(site):
    from teton.expect import ecmp_probes
    from teton.twin import service

    r = service.verify(NAME)
    assert r.ok, r
    assert r.bgp.established == r.bgp.expected_sessions == site.report.sessions and r.bgp.mismatched == ()
    twin = service.load_twin(NAME)
    for bag in ("bag01", "bag02"):        # the tier's sessions: every ATSW of both clusters, v4 and v6
        assert len(twin.established_peers(twin.bgp_summary(bag))) == 4 * 2
    probes = ecmp_probes(site.fabric, 512)
    assert len(probes) == r.ecmp.checked and r.ecmp.mismatched == ()
    # the ECMP widths checked cross the site: from the BAG switches, and from lab-a's switches to lab-b's racks
    assert any(x == "bag01" and t.startswith("lab-b--") for x, t in probes)
    assert any(x.startswith("lab-a--") and t.startswith("lab-b--") for x, t in probes)
    # each lab's front end is its own: its hosts reach its storage and its scheduler, never the other lab's
    assert r.frontend_ping is not None and r.frontend_ping.pinged == r.frontend_ping.of == 2 * 8 * 7
    assert r.same_rail_ping.failed == () and r.same_rail_ping.of == 120 * 8 * 2     # 16 hosts: 120 pairs a rail


def test_a_lab_a_host_reaches_a_lab_b_host_over_the_backend_through_the_tier(site):
    from teton.expect import NO_FAILURES

    (src4, src6), (dst4, dst6) = _rail(site.fabric, SRC_HOST), _rail(site.fabric, DST_HOST)
    assert _reaches(SRC_HOST, src4, dst4) and _reaches(SRC_HOST, src6, dst6)
    assert _reaches(DST_HOST, dst4, src4)
    model = NO_FAILURES.model(site.fabric)
    remote = site.fabric.device(REMOTE_RACK)
    assert ipaddress.ip_address(dst4) in ipaddress.ip_network(remote.prefixes4[0])
    for prefix in (remote.prefixes4[0], remote.prefixes6[0]):
        hops = _bgp_hops(RACK, prefix)            # the ToR: up through every CTSW of its zone
        assert len(hops) == model.next_hops(RACK, REMOTE_RACK) == 4, (prefix, hops)
        assert _peer_roles(site.fabric, RACK, hops) == ["ctsw"] * 4
        hops = _bgp_hops("lab-a--z01-ctsw01", prefix)     # a CTSW: up through both ATSWs
        assert _peer_roles(site.fabric, "lab-a--z01-ctsw01", hops) == ["atsw"] * 2
        hops = _bgp_hops("lab-a--atsw01", prefix)         # an ATSW: up through both BAG switches
        assert _peer_roles(site.fabric, "lab-a--atsw01", hops) == ["bag"] * 2
        hops = _bgp_hops("bag01", prefix)                 # a BAG switch: down to both of lab-b's ATSWs
        assert sorted(site.fabric.device(_peer(site.fabric, "bag01", h)).name for h in hops) == \
            ["lab-b--atsw01", "lab-b--atsw02"]


def _peer(fabric, switch: str, hop: dict) -> str:
    from teton.twin.plan import linux_ifname

    return next(i.peer for i in fabric.device(switch).interfaces if linux_ifname(i.name) == hop["interfaceName"])


def test_an_atsw_cut_off_the_tier_is_carried_by_the_other(site):
    from teton.twin import service

    (src4, _), (dst4, _) = _rail(site.fabric, SRC_HOST), _rail(site.fabric, DST_HOST)
    prefix = site.fabric.device(REMOTE_RACK).prefixes4[0]
    uplinks = [i.name for i in site.fabric.device("lab-a--atsw01").interfaces if i.kind == "atsw-bag"]
    assert len(uplinks) == 2          # one to each BAG switch
    try:
        for port in uplinks:
            r = service.fail(NAME, f"lab-a--atsw01:{port}")
            assert r.survived and r.reconvergence.ecmp_mismatched == (), r
            assert r.lost == ()       # a rack's first hop keeps its 4 CTSWs: no rack pair loses paths
        assert _reaches(SRC_HOST, src4, dst4)
        # lab-a's CTSWs now reach lab-b only through lab-a--atsw02; the ToR still through every CTSW
        assert _peer_roles(site.fabric, "lab-a--z01-ctsw01", _bgp_hops("lab-a--z01-ctsw01", prefix)) == ["atsw"]
        assert len(_bgp_hops(RACK, prefix)) == 4
    finally:
        r = service.restore(NAME)
    assert r.reconvergence.ecmp_mismatched == ()
    assert len(_bgp_hops("lab-a--z01-ctsw01", prefix)) == 2


def test_one_bag_switch_carries_the_site_and_without_both_the_clusters_are_apart(site):
    from teton.twin import service

    (src4, _), (dst4, _) = _rail(site.fabric, SRC_HOST), _rail(site.fabric, DST_HOST)
    prefix = site.fabric.device(REMOTE_RACK).prefixes4[0]
    try:
        r = service.fail(NAME, "bag01")
        assert r.survived and r.lost == () and r.reconvergence.ecmp_mismatched == (), r
        assert _reaches(SRC_HOST, src4, dst4)
        assert [_peer(site.fabric, "lab-a--atsw01", h) for h in _bgp_hops("lab-a--atsw01", prefix)] == ["bag02"]
        # bag02 too (straight on the twin: `fail` would ping every cross-site probe into its timeout): the
        # lab-b prefix is withdrawn from lab-a and the host's ping goes unanswered
        service.load_twin(NAME).stop_node("bag02")      # the twin's state as `fail` left it
        deadline = time.monotonic() + 15
        while _bgp_hops(RACK, prefix) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _bgp_hops(RACK, prefix) == []
        assert not _reaches(SRC_HOST, src4, dst4, count=1)
    finally:
        service.load_twin(NAME).start_node("bag02")     # restarts it unless it runs
        r = service.restore(NAME)
    assert r.reconvergence.ecmp_mismatched == ()
    assert _reaches(SRC_HOST, src4, dst4) and len(_bgp_hops(RACK, prefix)) == 4
