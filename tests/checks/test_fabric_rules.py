from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import Any

from teton.checks import fabric_rules
from teton.design import design
from teton.fabric import Fabric
from teton.spec.model import Cluster


def _edit(fabric: Fabric, name: str, **changes: Any) -> Fabric:
    """The Fabric is frozen: a copy with one device changed."""
    devices = dict(fabric.devices)
    devices[name] = replace(devices[name], **changes)
    return replace(fabric, devices=MappingProxyType(devices))


def test_lab_passes_every_fabric_rule(lab_fabric):
    assert [f for rule in fabric_rules.FABRIC_RULES for f in rule(lab_fabric, "lab.yaml")] == []


def test_duplicate_device_name(lab_fabric):
    f = replace(lab_fabric, duplicate_names=("atsw01",))
    (finding,) = fabric_rules.duplicate_names(f, "s.yaml")
    assert finding.rule == "duplicate-name" and "atsw01" in finding.message


def test_duplicate_port_on_one_device(lab_fabric):
    rtsw = lab_fabric.devices["z01-r001-rtsw"]
    interfaces = list(rtsw.interfaces)
    interfaces[1] = interfaces[1]._replace(name=interfaces[0].name)
    f = _edit(lab_fabric, "z01-r001-rtsw", interfaces=tuple(interfaces))
    (finding,) = fabric_rules.duplicate_names(f, "s.yaml")
    assert "z01-r001-rtsw: port Ethernet8 is cabled twice" in finding.message


def test_asn_clash_between_two_rtsws(lab_fabric):
    f = _edit(lab_fabric, "z01-r002-rtsw", asn=lab_fabric.devices["z01-r001-rtsw"].asn)
    (finding,) = fabric_rules.asn_clash(f, "s.yaml")
    assert finding.path == "backend.asn" and "z01-r001-rtsw" in finding.message and "z01-r002-rtsw" in finding.message


def test_ctsws_of_one_zone_may_share_an_asn_but_not_across_zones(lab_fabric):
    assert list(fabric_rules.asn_clash(lab_fabric, "s.yaml")) == []
    f = _edit(lab_fabric, "z02-ctsw01", asn=lab_fabric.devices["z01-ctsw01"].asn)
    (finding,) = fabric_rules.asn_clash(f, "s.yaml")
    assert "z02-ctsw01" in finding.message


def test_loopback_clash(lab_fabric):
    f = _edit(lab_fabric, "atsw02", loopback4=lab_fabric.devices["atsw01"].loopback4)
    rules = {x.message for x in fabric_rules.loopback_clash(f, "s.yaml")}
    assert any("loopback 10.0.0.0 is on atsw01, atsw02" == m for m in rules)


def test_loopback_and_link_pools_overlap(lab_data):
    lab_data["backend"]["addressing"]["ipv4"]["loopbacks"] = "10.1.0.0/24"   # same as fabric_links
    f = design(Cluster.model_validate(lab_data))
    findings = list(fabric_rules.loopback_clash(f, "s.yaml"))
    assert findings and all(x.rule == "loopback-clash" for x in findings)
    assert any("pools overlap" in x.message for x in findings)


def test_speed_and_mtu_mismatch_across_a_link(lab_fabric):
    interfaces = list(lab_fabric.devices["z01-r001-rtsw"].interfaces)
    interfaces[0] = interfaces[0]._replace(speed_gbps=200)
    interfaces[1] = interfaces[1]._replace(mtu=1500)
    f = _edit(lab_fabric, "z01-r001-rtsw", interfaces=tuple(interfaces))
    got = {(x.rule, x.path) for x in fabric_rules.link_mismatch(f, "s.yaml")}
    assert got == {("speed-mismatch", "backend"), ("mtu-mismatch", "backend.mtu")}


def test_oversubscription_off_goal(lab_data):
    lab_data["backend"]["rtsw"]["oversubscription"] = 1.0     # lab RTSWs have 16 down, 4 up: 4:1
    f = design(Cluster.model_validate(lab_data))
    (finding,) = fabric_rules.oversubscription_off_goal(f, "s.yaml")
    assert finding.path == "backend.rtsw.oversubscription" and "4:1" in finding.message
