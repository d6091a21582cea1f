from __future__ import annotations

from teton.checks import spec_rules
from teton.spec.model import Cluster


def _cluster(data: dict) -> Cluster:
    return Cluster.model_validate(data)


def _rules(findings) -> list[tuple[str, str]]:
    return [(f.rule, f.path) for f in findings]


def test_lab_passes_every_spec_rule(lab_cluster):
    assert [f for rule in spec_rules.SPEC_RULES for f in rule(lab_cluster, "lab.yaml")] == []


def test_unknown_model_is_named(lab_data):
    lab_data["backend"]["ctsw"]["model"] = "arista-7899r9"
    (f,) = spec_rules.unknown_model(_cluster(lab_data), "s.yaml")
    assert (f.rule, f.path) == ("unknown-model", "backend.ctsw.model") and "arista-7808r3" in f.message


def test_a_spec_can_add_a_model_to_the_catalogue(lab_data):
    lab_data["switch_models"] = [{
        "name": "my-spine", "vendor": "x", "asic": "y", "asic_tbps": 51.2, "port_naming": "eos-fixed",
        "port_groups": [{"count": 64, "speed_gbps": 400, "lanes": 8, "form_factor": "OSFP"}], "nos": ["eos"]}]
    lab_data["backend"]["ctsw"]["model"] = "my-spine"
    assert list(spec_rules.unknown_model(_cluster(lab_data), "s.yaml")) == []


def test_nos_the_model_cannot_run(lab_data):
    lab_data["backend"]["ctsw"]["nos"] = "sonic"
    (f,) = spec_rules.nos_unsupported(_cluster(lab_data), "s.yaml")
    assert (f.rule, f.path) == ("nos-unsupported", "backend.ctsw.nos")


def test_ports_overcommitted_when_hosts_need_more_ports_than_the_rtsw_has(lab_data):
    lab_data["hosts_per_rack"] = 8                        # 64 NICs + 4 uplinks > 64 ports
    findings = list(spec_rules.ports_overcommitted(_cluster(lab_data), "s.yaml"))
    assert ("ports-overcommitted", "backend.rtsw") in _rules(findings)


def test_ports_overcommitted_when_used_ports_exceed_the_asic(lab_data):
    """On a model whose front panel is oversubscribed, the ports a tier uses must still fit the ASIC."""
    lab_data["switch_models"] = [{
        "name": "oversub-64x400", "vendor": "x", "asic": "Tomahawk3", "asic_tbps": 12.8, "oversubscribed": True,
        "port_naming": "sonic", "serdes": 512, "serdes_gbps": 50, "nos": ["sonic"],
        "port_groups": [{"count": 64, "speed_gbps": 400, "lanes": 8, "form_factor": "QSFP-DD"}]}]
    lab_data["backend"]["rtsw"]["model"] = "oversub-64x400"
    lab_data["hosts_per_rack"] = 4                        # 32x400G down + 4 up = 14.4 Tb/s > 12.8
    findings = [f for f in spec_rules.ports_overcommitted(_cluster(lab_data), "s.yaml") if f.path == "backend.rtsw"]
    assert len(findings) == 1 and "Tomahawk3 switches 12.8 Tb/s" in findings[0].message


def test_pool_exhausted_names_the_pool(lab_data):
    lab_data["backend"]["addressing"]["ipv4"]["fabric_links"] = "10.1.0.0/28"   # 8 /31s for 32 links
    (f,) = spec_rules.pool_exhausted(_cluster(lab_data), "s.yaml")
    assert (f.rule, f.path) == ("pool-exhausted", "backend.addressing.ipv4.fabric_links")
    assert "needs 32" in f.message


def test_pool_smaller_than_one_block(lab_data):
    lab_data["backend"]["addressing"]["ipv6"]["host_links"] = "fd00:1::/96"
    (f,) = spec_rules.pool_exhausted(_cluster(lab_data), "s.yaml")
    assert f.path == "backend.addressing.ipv6.host_links"


def test_asn_plan_clash_between_tiers(lab_data):
    lab_data["backend"]["asn"]["rtsw"] = 4199999100   # RTSWs get 4200000101.. : the CTSWs' ASNs
    findings = list(spec_rules.asn_plan_clash(_cluster(lab_data), "s.yaml"))
    assert ("asn-clash", "backend.asn.rtsw") in _rules(findings)


def test_asn_stride_too_small_for_the_racks(lab_data):
    lab_data["backend"]["asn"]["rtsw_zone_stride"] = 2
    findings = list(spec_rules.asn_plan_clash(_cluster(lab_data), "s.yaml"))
    assert ("asn-clash", "backend.asn.rtsw_zone_stride") in _rules(findings)


def test_mtu_above_the_model_maximum(lab_data):
    lab_data["backend"]["mtu"] = 9216                      # Minipack2 takes 9216, the 7804R3 only 9214
    findings = list(spec_rules.mtu_out_of_range(_cluster(lab_data), "s.yaml"))
    assert _rules(findings) == [("mtu-mismatch", "backend.mtu"), ("mtu-mismatch", "backend.mtu")]
    assert "arista-7804r3" in findings[0].message


def test_an_infiniband_backend_passes_every_spec_rule(lab_data):
    lab_data["backend"] = {"kind": "infiniband"}           # every default: QM9700 tiers, ftree, an HA pair
    assert [f for rule in spec_rules.SPEC_RULES for f in rule(_cluster(lab_data), "s.yaml")] == []
