"""The twin's plan comes from the rendered artifacts; its expectations from the build's fabric.json (no root needed)."""

from __future__ import annotations

import pytest

from teton.expect import NO_FAILURES, EcmpModel, expected_sessions
from teton.findings import TetonError
from teton.targets.frr import render_frr
from teton.twin.artifacts import twin_plan


def test_plan_has_both_routed_networks_every_server_and_cabled_links(lab_build):
    source = twin_plan(lab_build)
    kinds = {n.name: n.kind for n in source.plan.nodes}
    assert source.plan.name == "lab"
    # backend: 4 RTSW, 8 CTSW, 2 ATSW; front end: 7 RSW (4 compute, 2 storage, 1 service), 6 FSW, 2 spines
    assert sum(k == "switch" for k in kinds.values()) == 29
    assert {"z01-r001-frsw", "st-fsw01", "ssw01-01", "svc-r01-frsw"} <= set(kinds)
    # 8 GPU hosts, 6 storage servers, the Slurm controller
    assert sum(k == "host" for k in kinds.values()) == 15 and kinds["slurmctl"] == kinds["s2-r01-sp01"] == "host"
    # 96 backend links; front end: 16 GPU + 6 storage + 2 service NICs, 14 RSW-FSW, 6 FSW-spine
    assert len(source.plan.links) == 96 + 24 + 14 + 6 and all(link.mtu == 9100 for link in source.plan.links)
    sessions = expected_sessions(source.fabric, sorted(source.origin), NO_FAILURES)
    assert sessions["z01-r001-rtsw"] == 8 and sessions["atsw01"] == 16
    assert sessions["z01-r001-frsw"] == 2 and sessions["z01-fsw01"] == 3 and sessions["ssw01-01"] == 3   # IPv4 only
    assert sum(sessions.values()) == 128 + 40


def test_servers_route_the_front_end_by_one_ecmp_default_and_each_rail_by_its_source(lab_build):
    nodes = {n.name: n for n in twin_plan(lab_build).plan.nodes}
    gpu = nodes["z01-r001-h1"]
    assert {i.name for i in gpu.interfaces} == {f"be{n}" for n in range(8)} | {"fe0", "fe1"}
    assert gpu.routes == (("default", "10.192.0.0", "fe0"), ("default", "10.192.0.2", "fe1"))
    assert not any(dev.startswith("fe") for _, _, dev in gpu.source_routes)
    assert {dev for _, _, dev in gpu.source_routes} == {f"be{n}" for n in range(8)}
    storage = nodes["s2-r01-sp01"]
    assert [i.name for i in storage.interfaces] == ["fe0"] and storage.routes == (("default", "10.192.0.48", "fe0"),)
    assert [r[2] for r in nodes["slurmctl"].routes] == ["fe0", "fe1"] and nodes["slurmctl"].source_routes == ()


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
    assert len(host.interfaces) == 8 + 2
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
    cut = frozenset({"z01-r002-rtsw:Ethernet48", "z01-ctsw01:Ethernet3/2/1"})
    m = EcmpModel(lab_fabric, set(), {cut})
    assert m.next_hops("z01-ctsw01", "z01-r002-rtsw") == 0         # BGP drops the detour through its own zone ASN
    assert m.next_hops("z01-r001-rtsw", "z01-r002-rtsw") == 3


def test_an_infiniband_clusters_twin_is_its_front_end(lab_ib_build):
    source = twin_plan(lab_ib_build)
    assert source.networks == ("frontend",)
    roles = {source.fabric.devices[n.name].role for n in source.plan.nodes}
    assert roles == {"fe-rsw", "fsw", "ssw", "host", "storage", "service"}          # no leaf, spine or core
    gpu = next(n for n in source.plan.nodes if source.fabric.devices[n.name].role == "host")
    assert {i.name for i in gpu.interfaces} == {"fe0", "fe1"} and gpu.source_routes == ()


def test_a_cluster_without_a_routed_network_is_refused_with_a_pointer_to_the_simulator(tmp_path):
    import yaml

    from tests.helpers import INVENTORY, write_spec
    from teton.pipeline import build

    data = yaml.safe_load((INVENTORY / "lab-ib.yaml").read_text())
    for key in ("frontend", "storage", "services"):
        data.pop(key, None)
    folder = build(str(write_spec(tmp_path, data, "ib-only.yaml")), tmp_path / "build").path
    with pytest.raises(TetonError, match=r"'lab-ib' has an infiniband backend and no front end; the twin runs "
                                         r"routed Ethernet networks in FRR.*ibsim.*OpenSM.*teton ib verify"):
        twin_plan(folder)


def test_a_twin_name_of_its_own_must_name_its_namespaces(tmp_path):
    from teton.twin import service

    with pytest.raises(TetonError, match=r"twin name 'lab-site'.*'lab_site' would do"):
        service.up(str(tmp_path / "nothing.yaml"), name="lab-site")      # refused before anything is read or made
    assert not service.state_dir("lab-site").exists() and not service.state_dir("lab_site").exists()
