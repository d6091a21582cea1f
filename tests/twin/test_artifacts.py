"""The twin's plan comes from the rendered artifacts; its expectations from the build's fabric.json (no root needed)."""

from __future__ import annotations

import pytest

from teton.expect import NO_FAILURES, EcmpModel, expected_sessions
from teton.findings import TetonError
from teton.targets.frr import render_frr
from teton.twin.artifacts import twin_plan


def test_plan_has_backend_switches_hosts_and_cabled_links(lab_build):
    source = twin_plan(lab_build)
    kinds = {n.name: n.kind for n in source.plan.nodes}
    assert source.plan.name == "lab"
    assert sum(k == "switch" for k in kinds.values()) == 14 and sum(k == "host" for k in kinds.values()) == 8
    assert not any(name.endswith("frsw") or "fsw" in name for name in kinds)      # backend only
    assert len(source.plan.links) == 96 and all(link.mtu == 9100 for link in source.plan.links)
    sessions = expected_sessions(source.fabric, sorted(source.origin), NO_FAILURES)
    assert sessions["z01-r001-rtsw"] == 8 and sessions["atsw01"] == 16 and sum(sessions.values()) == 128


def test_sonic_switches_run_their_rendered_frr_conf_unchanged(lab_build):
    node = next(n for n in twin_plan(lab_build).plan.nodes if n.name == "z01-r001-rtsw")
    assert node.frr_conf == (lab_build / "devices/z01-r001-rtsw/frr.conf").read_text()
    lo = next(i for i in node.interfaces if i.name == "lo")
    assert lo.addresses == ("10.0.0.6/32", "fd00:0:0:1::7/128")         # no all-zero interface id (RFC 6164)


def test_eos_switches_run_the_frr_spelling_of_exactly_the_designed_routing(lab_build, lab_fabric):
    """Read back from structured-config.json, EOS's routing is the design's: the twin runs what the design says."""
    source = twin_plan(lab_build)
    node = next(n for n in source.plan.nodes if n.name == "z01-ctsw01")
    assert node.frr_conf == render_frr("z01-ctsw01", lab_fabric.devices["z01-ctsw01"].routing)
    assert "neighbor RTSW_V4 passive" in node.frr_conf and "timers connect 1" in node.frr_conf
    assert source.origin["z01-ctsw01"].as_frr and not source.origin["z01-r001-rtsw"].as_frr
    assert "z01-ctsw01" in source.as_frr() and "z01-r001-rtsw" not in source.as_frr()


def test_hosts_route_each_nic_to_its_own_rack_switch_port(lab_build):
    host = next(n for n in twin_plan(lab_build).plan.nodes if n.name == "z01-r001-h1")
    assert len(host.interfaces) == 8
    assert ("10.64.0.3", "10.64.0.2", "be1") in host.source_routes
    assert ("fd00:1::5", "fd00:1::4", "be1") in host.source_routes


def test_ecmp_model_matches_the_design_and_narrows_under_failures(lab_fabric):
    m = EcmpModel(lab_fabric)
    assert m.next_hops("z01-r001-rtsw", "z02-r001-rtsw") == 4      # all CTSWs of its zone
    assert m.next_hops("z01-ctsw01", "z02-r001-rtsw") == 2         # both ATSWs
    assert m.next_hops("atsw01", "z01-r002-rtsw") == 4             # the zone's CTSWs share an ASN
    assert m.next_hops("z01-ctsw01", "z01-r002-rtsw") == 1
    m = EcmpModel(lab_fabric, {"z01-ctsw01"})
    assert m.next_hops("z01-r001-rtsw", "z01-r002-rtsw") == 3
    assert m.next_hops("z02-r001-rtsw", "z01-r001-rtsw") == 4      # other zones still use all their CTSWs
    cut = frozenset({"z01-r002-rtsw:Ethernet128", "z01-ctsw01:Ethernet3/2/1"})
    m = EcmpModel(lab_fabric, set(), {cut})
    assert m.next_hops("z01-ctsw01", "z01-r002-rtsw") == 0         # BGP drops the detour through its own zone ASN
    assert m.next_hops("z01-r001-rtsw", "z01-r002-rtsw") == 3


def test_an_infiniband_build_is_refused_with_a_pointer_to_the_simulator(lab_ib_build):
    with pytest.raises(TetonError, match=r"'lab-ib' has an infiniband backend; the twin runs a routed Ethernet "
                                         r"backend in FRR.*ibsim.*OpenSM.*teton ib verify"):
        twin_plan(lab_ib_build)
