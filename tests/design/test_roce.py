from __future__ import annotations

from collections import Counter

from tests.helpers import LAB
from teton.design import design
from teton.fabric import Fabric
from teton.spec.load import load_spec


def test_lab_has_every_device_and_link(lab_fabric: Fabric):
    roles = Counter(d.role for d in lab_fabric.devices.values())
    assert roles["rtsw"] == 4 and roles["ctsw"] == 8 and roles["atsw"] == 2 and roles["host"] == 8
    kinds = Counter(link.kind for link in lab_fabric.links)
    assert kinds["host-rtsw"] == 64 and kinds["rtsw-ctsw"] == 16 and kinds["ctsw-atsw"] == 16


def test_rtsw_port_i_goes_to_nic_i_of_its_hosts(lab_fabric: Fabric):
    rtsw = lab_fabric.devices["z01-r002-rtsw"]
    down = [i for i in rtsw.interfaces if i.kind == "host-rtsw"]
    assert [(i.ordinal, i.peer, i.peer_port) for i in down[:2]] == [(0, "z01-r002-h1", "be0"),
                                                                     (1, "z01-r002-h1", "be1")]
    assert (down[8].ordinal, down[8].peer, down[8].peer_port) == (8, "z01-r002-h2", "be0")
    ports = {p.name: p for p in rtsw.ports}                              # named by the first of its 8 lanes
    assert all(i.name == f"Ethernet{ports[i.name].lanes[0]}" and len(ports[i.name].lanes) == 8 for i in down)


def test_rtsw_uplink_j_goes_to_ctsw_j_of_its_zone(lab_fabric: Fabric):
    rtsw = lab_fabric.devices["z02-r001-rtsw"]
    up = [i for i in rtsw.interfaces if i.direction == "up"]
    assert [i.peer for i in up] == [f"z02-ctsw{j:02d}" for j in range(1, 5)]


def test_ctsw_downlinks_in_rack_order_then_one_uplink_per_atsw(lab_fabric: Fabric):
    ctsw = lab_fabric.devices["z01-ctsw03"]
    assert [(i.name, i.peer) for i in ctsw.interfaces] == [
        ("Ethernet3/1/1", "z01-r001-rtsw"), ("Ethernet3/2/1", "z01-r002-rtsw"),
        ("Ethernet3/3/1", "atsw01"), ("Ethernet3/4/1", "atsw02")]


def test_link_addresses_north_end_first_and_both_ends_agree(lab_fabric: Fabric):
    rtsw = lab_fabric.devices["z01-r001-rtsw"]
    first = rtsw.interfaces[0]
    assert (first.ipv4, first.peer_ipv4) == ("10.64.0.0/31", "10.64.0.1")
    # IPv6 skips the /127 holding the all-zero interface id (RFC 6164 section 5.1)
    assert (first.ipv6, first.peer_ipv6) == ("fd00:1::2/127", "fd00:1::3")
    host = lab_fabric.devices["z01-r001-h1"]
    assert host.interfaces[0].ipv4 == "10.64.0.1/31" and host.interfaces[0].peer_ipv4 == "10.64.0.0"
    assert rtsw.prefixes4 == ("10.64.0.0/27",) and rtsw.prefixes6 == ("fd00:1::/64",)
    assert lab_fabric.devices["z01-r002-rtsw"].prefixes4 == ("10.64.0.32/27",)


def test_asns_follow_rfc7938_plan(lab_fabric: Fabric):
    d = lab_fabric.devices
    assert d["atsw01"].asn == d["atsw02"].asn == 4200000000
    assert d["z01-ctsw01"].asn == d["z01-ctsw04"].asn == 4200000101 and d["z02-ctsw01"].asn == 4200000102
    assert d["z02-r002-rtsw"].asn == 4201002002
    assert d["z01-r001-rtsw"].loopback4 == "10.0.0.6/32" and d["atsw01"].loopback4 == "10.0.0.0/32"


def test_placement_puts_hosts_low_and_the_rtsw_on_top(lab_fabric: Fabric):
    d = lab_fabric.devices
    assert (d["z01-r001-h1"].rack, d["z01-r001-h1"].ru, d["z01-r001-h2"].ru) == ("z01-r001", 1, 5)
    assert d["z01-r001-rtsw"].ru + d["z01-r001-rtsw"].height_ru - 1 == 48


def test_storage_racks_are_counted_and_placed(lab_fabric: Fabric):
    sp = [d for d in lab_fabric.devices.values() if d.role == "storage"]
    assert Counter(d.attrs["storage_role"] for d in sp) == {"tectonic": 4, "hammerspace": 2}
    assert {d.rack for d in sp} == {"s1-r01", "s2-r01"}
    assert all(any(i.kind == "storage-fersw" for i in d.interfaces) for d in sp)


def test_design_is_deterministic():
    a, b = design(load_spec(LAB)), design(load_spec(LAB))
    assert list(a.devices) == list(b.devices) and a.links == b.links and a.devices == b.devices
