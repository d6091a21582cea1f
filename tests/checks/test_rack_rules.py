"""`racks:` gives one rack fewer hosts (a rack being filled, servers taken out): that rack's own switches change, its
other hosts and its uplinks keep their ports and addresses, and a rack that is not there or too full is an error."""

from __future__ import annotations

from tests.helpers import write_spec
from teton.checks import check_spec
from teton.pipeline import design_spec
from teton.spec.load import load_spec


def _lab6(lab_data: dict) -> dict:
    lab_data["racks_per_zone"] = 6
    lab_data["backend"]["addressing"]["ipv4"]["host_links"] = "10.64.0.0/22"
    lab_data["backend"]["ctsw"]["oversubscription"] = 3.0
    return lab_data


def test_a_rack_with_fewer_hosts_keeps_every_other_port_and_address(tmp_path, lab_data):
    data = _lab6(lab_data)
    full = design_spec(p := write_spec(tmp_path, data, "a.yaml"), load_spec(p)).fabric
    data["racks"] = {"z01-r002": {"hosts": 1}}
    less = design_spec(p := write_spec(tmp_path, data, "b.yaml"), load_spec(p)).fabric
    gone = full.devices.keys() - less.devices.keys()
    assert gone == {"z01-r002-h2"}
    changed = {n for n in less.devices if less.devices[n] != full.devices[n]}
    assert changed == {"z01-r002-rtsw", "z01-r002-frsw"}
    rtsw_full, rtsw_less = full.devices["z01-r002-rtsw"], less.devices["z01-r002-rtsw"]
    assert {i for i in rtsw_less.interfaces} < {i for i in rtsw_full.interfaces}
    assert {i.peer for i in rtsw_full.interfaces} - {i.peer for i in rtsw_less.interfaces} == {"z01-r002-h2"}
    assert [i for i in rtsw_less.interfaces if i.direction == "up"] == \
        [i for i in rtsw_full.interfaces if i.direction == "up"]


def test_an_unknown_or_overfull_rack_is_an_error_at_its_path(tmp_path, lab_data):
    lab_data["racks"] = {"z09-r001": {"hosts": 1}, "z01-r002": {"hosts": lab_data["hosts_per_rack"] + 1}}
    spec = write_spec(tmp_path, lab_data)
    found = {f.path: f for f in check_spec(load_spec(spec), str(spec)) if f.rule == "racks"}
    assert set(found) == {"racks.z09-r001", "racks.z01-r002.hosts"}
    assert "not a compute rack" in found["racks.z09-r001"].message
    assert found["racks.z01-r002.hosts"].severity == "error"
