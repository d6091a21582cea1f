"""End to end: the lab spec's whole cluster as a twin with real FRR (the RoCE backend and the front end, every GPU
host, storage server and the Slurm controller), verified, failed, restored, torn down."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.helpers import LAB, dcqcn, write_spec

pytestmark = pytest.mark.root


def _namespaces() -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith("tt-lab-")]


@pytest.fixture(scope="module", params=["pfc-only", "dcqcn"])
def spec(request, tmp_path_factory) -> Path:
    """A copy of the lab spec that a test may edit while the twin runs: the lab as it is (PFC only, the reference's
    choice), then its DCQCN variant (ECN on)."""
    path = tmp_path_factory.mktemp("spec") / "lab.yaml"
    if request.param == "dcqcn":
        write_spec(path.parent, dcqcn(yaml.safe_load(LAB.read_text())), "lab.yaml")
    else:
        shutil.copy(LAB, path)
    return path


@pytest.fixture(scope="module")
def twin(spec):
    from teton.twin import service

    service.down(str(spec))
    report = service.up(str(spec))
    try:
        yield report
    finally:
        service.down("lab")


def test_lab_twin_comes_up_with_every_session_and_full_ecmp(twin, spec):
    # backend 14 switches, front end 15 (7 RSWs, 6 FSWs, 2 spines); 8 GPU hosts, 6 storage servers, slurmctl
    assert (twin.switches, twin.hosts, twin.links) == (29, 15, 140)
    assert twin.sessions == 128 + 40 and twin.ecmp_mismatches == ()
    assert twin.converged_s < 30
    assert "z01-ctsw01" in twin.eos_as_frr and "z01-fsw01" in twin.eos_as_frr       # EOS: the FRR spelling
    assert "z01-r001-rtsw" not in twin.eos_as_frr and "ssw01-01" not in twin.eos_as_frr
    assert twin.to_json()["ecmp_mismatches"] == [] and twin.to_json()["eos_as_frr"] == list(twin.eos_as_frr)
    assert len(_namespaces()) == 29 + 15


def test_verify_checks_sessions_same_rail_pairs_the_front_end_and_ecmp(twin, spec):
    from teton.twin import service

    r = service.verify(str(spec))
    assert r.ok, r
    assert r.bgp.established == r.bgp.expected_sessions == 168
    assert r.same_rail_ping.pinged == r.same_rail_ping.of == 28 * 8 * 2   # all pairs, 8 rails, v4+v6
    # every GPU host to every storage server (4 Tectonic, 2 Hammerspace) and the Slurm controller (IPv4 front end)
    assert r.frontend_ping is not None and r.frontend_ping.pinged == r.frontend_ping.of == 8 * 7
    assert r.frontend_ping.failed == ()
    # every switch towards every rack switch of its own network: 14 x 4 on the backend, 15 x 7 on the front end
    assert r.ecmp.checked == (14 * 4 - 4) + (15 * 7 - 7) and r.ecmp.mismatched == ()
    j = r.to_json()      # what `teton twin verify --json` prints
    assert set(j) == {"twin", "ok", "failures", "unchecked", "bgp", "same_rail_ping", "ecmp", "frontend_ping",
                      "eos_as_frr"}
    assert j["bgp"]["mismatched"] == {} and j["same_rail_ping"]["failed"] == [] and j["ecmp"]["mismatched"] == []
    assert j["failures"] == {"devices": [], "links": []} and j["frontend_ping"]["failed"] == []


def test_the_front_end_joins_every_zone_the_storage_and_the_scheduler(twin, spec):
    from teton.twin.service import load_twin

    t = load_twin("lab")
    gpu = "10.192.0.1"                                                   # z01-r001-h1 fe0
    for server, address in (("s1-r01-sp01", "10.192.0.41"), ("s2-r01-sp01", "10.192.0.49"),
                            ("slurmctl", "10.192.0.33"), ("z02-r002-h2", "10.192.0.31")):
        assert t.ping("z01-r001-h1", gpu, address), f"z01-r001-h1 does not reach {server} ({address})"
    # the storage rack's aggregate from a zone-1 RSW: over both FSWs of its zone, each through its spine plane
    assert t.kernel_nexthops("z01-r001-frsw", "10.192.0.40/29") == 2
    assert t.kernel_nexthops("z01-r001-h1", "0.0.0.0/0") == 2            # the host: ECMP over fe0 and fe1


@pytest.mark.parametrize("switch", ["z01-fsw01", "ssw01-01"])
def test_a_failed_fsw_or_spine_is_survived_and_says_which_racks_lost_paths(twin, spec, switch):
    from teton.twin import service

    r = service.fail(str(spec), switch)
    try:
        assert r.survived, r.to_json()
        assert r.reconvergence.ecmp_mismatched == () and r.reconvergence.ecmp_settled_s < 10
        assert r.lost and all(p.before == 2 and p.after == 1 for p in r.lost)      # one plane of two left
        assert r.probed == 28 * 8 * 2 + 8 * 7 and r.unreached == ()
        j = r.to_json()
        assert j["survived"] and j["lost_paths"][0]["paths"] == "2 -> 1"
        assert j["summary"].startswith(f"{len(r.lost)} rack pairs lost paths (0 of them every path)")
        v = service.verify(str(spec))
        assert v.ok, v
        assert v.frontend_ping is not None and v.frontend_ping.failed == ()
    finally:
        service.restore(str(spec))
    assert service.verify(str(spec)).ok


def test_losing_both_fsws_of_a_zone_cuts_it_off_and_the_report_says_so(twin, spec):
    from teton.twin import service

    try:
        service.fail(str(spec), "z01-fsw01")
        r = service.fail(str(spec), "z01-fsw02")
        assert not r.survived
        cut = {p.rack for p in r.lost if p.after == 0}
        assert cut >= {"z01-r001-frsw", "z01-r002-frsw", "s1-r01-frsw"}
        # with the zone's FSWs gone its hosts reach no storage: the design says so, the twin agrees
        assert {p.peer for p in r.unreached if p.host.startswith("z01-")} == {
            "s1-r01-sp01", "s1-r01-sp02", "s1-r01-sp03", "s1-r01-sp04", "s2-r01-sp01", "s2-r01-sp02", "slurmctl"}
    finally:
        service.restore(str(spec))
    assert service.verify(str(spec)).ok


def test_kernel_has_the_designed_ecmp_width(twin, spec):
    from teton.twin.service import load_twin

    t = load_twin("lab")
    assert t.kernel_nexthops("z01-r001-rtsw", "10.64.0.96/27") == 4     # a rack in the other zone: 4 CTSWs
    assert t.kernel_nexthops("atsw01", "10.64.0.0/27") == 4             # a rack: the 4 CTSWs of its zone


def test_ctsw_failure_keeps_every_same_rail_pair_reachable(twin, spec):
    from teton.twin import service
    from teton.twin.service import load_twin

    r = service.fail(str(spec), "z01-ctsw01")
    try:
        rc = r.reconvergence
        assert rc.ecmp_mismatched == () and rc.ecmp_settled_s < 10
        assert load_twin("lab").kernel_nexthops("z01-r001-rtsw", "10.64.0.96/27") == 3   # narrower by one CTSW
        v = service.verify(str(spec))
        assert v.ok, v
        assert v.bgp.expected_sessions == 168 - 16                              # its 8 peers x 2 families
        assert v.same_rail_ping.failed == ()
        assert v.to_json()["failures"] == {"devices": ["z01-ctsw01"], "links": []}
    finally:
        service.restore(str(spec))
    assert service.verify(str(spec)).ok


def test_link_failure_narrows_ecmp_towards_that_rack_only(twin, spec):
    from teton.twin import service
    from teton.twin.service import load_twin

    r = service.fail(str(spec), "z02-r001-rtsw:Ethernet48")
    try:
        assert r.reconvergence.ecmp_mismatched == () and r.how == "link down"
        t = load_twin("lab")
        assert t.kernel_nexthops("z02-r002-rtsw", "10.64.0.64/27") == 3   # same zone: one CTSW lost its path
        assert t.kernel_nexthops("z02-r002-rtsw", "10.64.0.0/27") == 4    # other racks: unchanged
        assert service.verify(str(spec)).ok
    finally:
        service.restore(str(spec))


def test_editing_the_spec_after_up_changes_nothing_until_the_next_up(twin, spec):
    """The twin checks what runs (its build's fabric.json), not what the spec says now."""
    from teton.twin import service

    original = spec.read_text()
    try:
        spec.write_text(original.replace("per_zone: 4", "per_zone: 2").replace("count: 2}", "count: 1}"))
        r = service.verify(str(spec))
        assert r.ok, r
        assert r.bgp.expected_sessions == r.bgp.established == 168
        assert service.verify("lab").ok                # by the twin's name, too
        spec.write_text("this is not a spec: [")       # even a broken spec cannot change what is checked
        assert service.verify("lab").ok
    finally:
        spec.write_text(original)


def test_verify_with_nothing_probed_is_not_ok(twin, spec):
    from teton.twin import service

    r = service.verify(str(spec), ping_sample=0)
    assert not r.ok and r.unchecked == ("same-rail pings", "front-end reach")
    assert r.to_json()["unchecked"] == ["same-rail pings", "front-end reach"]


def test_restore_restarts_a_daemon_that_died_outside_teton(twin, spec):
    import signal

    from teton.twin import service

    state = json.loads((service.state_dir("lab") / "rt" / "state.json").read_text())
    os.kill(state["pids"]["z02-ctsw03"]["bgpd"], signal.SIGKILL)      # dies outside teton
    r = service.restore(str(spec))
    assert r.restarted == ("z02-ctsw03",) and r.reconvergence.ecmp_mismatched == ()
    assert r.to_json()["restored"] == {"devices": [], "links": []}
    assert service.verify(str(spec)).ok


def test_down_finds_leftovers_of_a_crashed_run_by_name(twin, spec):
    from teton.twin import service

    # a crash: the state folder is gone, the namespaces and daemons are still there
    shutil.rmtree(service.state_dir("lab"))
    assert _namespaces()
    r = service.down(str(spec))
    assert any(x.startswith("netns tt-lab-") for x in r.leftovers_removed) and not r.stopped
    assert _namespaces() == []
    left = subprocess.run(["pgrep", "-f", "/run/teton/twin/lab"], capture_output=True, text=True).stdout
    assert left.strip() == ""


def test_a_twin_too_big_for_the_machine_is_refused_before_anything_starts(spec, monkeypatch):
    from teton.findings import TetonError
    from teton.twin import capacity, service

    service.down("lab")
    monkeypatch.setattr(capacity.Machine, "here", classmethod(lambda cls: cls(cores=1, available_mib=960)))
    with pytest.raises(TetonError, match=r"has 29 switches and 15 hosts; .* runs at most 15 switches"):
        service.up(str(spec))
    assert _namespaces() == [] and not service.state_dir("lab").exists()
