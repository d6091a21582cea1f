"""End to end: the lab spec's backend fabric as a twin with real FRR, verified, failed, restored, torn down."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.helpers import LAB

pytestmark = [pytest.mark.root,
              pytest.mark.skipif(os.geteuid() != 0, reason="needs root for network namespaces and FRR daemons")]
SPEC = str(LAB)


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("tt-lab-")]


@pytest.fixture(scope="module")
def twin():
    from teton.twin import service

    service.down(SPEC)
    report = service.up(SPEC)
    try:
        yield report
    finally:
        service.down(SPEC)


def test_lab_twin_comes_up_with_every_session_and_full_ecmp(twin):
    assert (twin["switches"], twin["hosts"], twin["links"]) == (14, 8, 96)
    assert twin["sessions"] == 128 and twin["ecmp_mismatches"] == []
    assert twin["converged_s"] < 30
    assert "z01-ctsw01" in twin["eos_as_frr"] and "z01-r001-rtsw" not in twin["eos_as_frr"]
    assert len(_namespaces()) == 22


def test_verify_checks_sessions_every_same_rail_pair_and_ecmp(twin):
    from teton.twin import service

    r = service.verify(SPEC)
    assert r["ok"], r
    assert r["bgp"]["established"] == r["bgp"]["expected_sessions"] == 128
    assert r["same_rail_ping"]["pinged"] == r["same_rail_ping"]["of"] == 28 * 8 * 2   # all pairs, 8 rails, v4+v6
    assert r["ecmp"]["checked"] > 0 and r["ecmp"]["mismatched"] == []


def test_kernel_has_the_designed_ecmp_width(twin):
    from teton.twin.service import _twin

    t = _twin("lab")
    assert t.kernel_nexthops("z01-r001-rtsw", "10.64.0.96/27") == 4     # a rack in the other zone: 4 CTSWs
    assert t.kernel_nexthops("atsw01", "10.64.0.0/27") == 4             # a rack: the 4 CTSWs of its zone


def test_ctsw_failure_keeps_every_same_rail_pair_reachable(twin):
    from teton.twin import service
    from teton.twin.service import _twin

    r = service.fail(SPEC, "z01-ctsw01")
    try:
        rc = r["reconvergence"]
        assert rc["ecmp_mismatched"] == [] and rc["ecmp_settled_s"] < 10
        assert _twin("lab").kernel_nexthops("z01-r001-rtsw", "10.64.0.96/27") == 3   # narrower by one CTSW
        v = service.verify(SPEC)
        assert v["ok"], v
        assert v["bgp"]["expected_sessions"] == 128 - 16                              # its 8 peers x 2 families
        assert v["same_rail_ping"]["failed"] == []
    finally:
        service.restore(SPEC)
    assert service.verify(SPEC)["ok"]


def test_link_failure_narrows_ecmp_towards_that_rack_only(twin):
    from teton.twin import service
    from teton.twin.service import _twin

    r = service.fail(SPEC, "z02-r001-rtsw:Ethernet64")
    try:
        assert r["reconvergence"]["ecmp_mismatched"] == []
        t = _twin("lab")
        assert t.kernel_nexthops("z02-r002-rtsw", "10.64.0.64/27") == 3   # same zone: one CTSW lost its path
        assert t.kernel_nexthops("z02-r002-rtsw", "10.64.0.0/27") == 4    # other racks: unchanged
        assert service.verify(SPEC)["ok"]
    finally:
        service.restore(SPEC)


def test_down_finds_leftovers_of_a_crashed_run_by_name(twin):
    from teton.twin import service

    # a crash: the state folder is gone, the namespaces and daemons are still there
    shutil.rmtree(service.state_dir("lab"))
    assert _namespaces()
    r = service.down(SPEC)
    assert any(x.startswith("netns tt-lab-") for x in r["leftovers_removed"])
    assert _namespaces() == []
    left = subprocess.run(["pgrep", "-f", "/run/teton/twin/lab"], capture_output=True, text=True).stdout
    assert left.strip() == ""
