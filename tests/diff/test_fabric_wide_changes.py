"""`teton diff` of two fabric-wide changes on the lab, each against the oracle of tests/diff/test_diff_24k.py
(`tests.helpers.changed_devices`: a device changes when its designed record differs, or when it is on one side only):
the RoCE DSCP, which every backend device with a QoS carries, and one ATSW fewer within the room, a decommission that
touches every CTSW and the removed ATSW only.  The same two changes on the 24k reference, timed, are cases of
bench/bench_diff.py (they re-render every backend switch of the 24k: a benchmark's work, not a test's)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers import LAB, changed_devices, fabric_of, write_spec
from teton.diff import diff_specs
from teton.diff.classify import classify


@pytest.fixture
def with_room(tmp_path: Path) -> tuple[dict, Path]:
    """The lab with a room of exactly what it has: its addresses, ports and ids laid out for 2 ATSWs, so one ATSW
    fewer is a decommission within the room, not a renumbering."""
    data = yaml.safe_load(LAB.read_text())
    data["room"] = {"zones": 2, "racks_per_zone": 2, "atsw": 2, "ssw_per_plane": 1, "storage_racks": 2}
    return data, write_spec(tmp_path, data, "base.yaml")


def test_the_roce_dscp_changes_every_backend_device_with_a_qos_and_is_high(tmp_path):
    old = fabric_of(LAB)
    assert old.qos is not None
    other = next(x for x in (24, 28, 30, 34) if x not in {old.qos.cnp_dscp, old.qos.roce_dscp})
    data = yaml.safe_load(LAB.read_text())
    data["backend"]["qos"]["roce_dscp"] = other
    spec = write_spec(tmp_path, data, "copy.yaml")
    new = fabric_of(spec)
    result = diff_specs(str(LAB), str(spec))
    with_qos = {n for n, d in old.devices.items() if d.qos is not None}
    assert {old.devices[n].role for n in with_qos} == {"rtsw", "ctsw", "atsw", "host"}
    assert set(result.devices_changed) == changed_devices(old, new) == with_qos
    assert result.level == "high"
    assert any(r.rule == "fabric-qos" for r in result.reasons)
    assert all(d.status == "changed" for d in result.comparison.devices)
    assert result.exit_code() == 2 and result.exit_code(allow_high=True) == 1


def test_one_atsw_fewer_within_the_room_changes_every_ctsw_and_the_removed_atsw_only(tmp_path, with_room):
    """Every CTSW loses one uplink and its session, nothing else moves, and nothing below the spines changes."""
    data, base = with_room
    old = fabric_of(base)
    data["backend"]["atsw"]["count"] -= 1
    data["backend"]["ctsw"]["oversubscription"] = data["racks_per_zone"] / data["backend"]["atsw"]["count"]
    spec = write_spec(tmp_path, data, "copy.yaml")
    new = fabric_of(spec)
    result = diff_specs(str(base), str(spec))
    ctsws = {n for n, d in old.devices.items() if d.role == "ctsw"}
    gone = {n for n, d in old.devices.items() if d.role == "atsw"} - new.devices.keys()
    assert len(gone) == 1
    assert set(result.devices_changed) == changed_devices(old, new) == ctsws | gone
    for n in ctsws:
        up = [i for i in new.devices[n].interfaces if i.kind == "ctsw-atsw"]
        assert len(up) == len([i for i in old.devices[n].interfaces if i.kind == "ctsw-atsw"]) - 1
    found = classify(result.comparison)
    assert found.kind == "decommission" and {k.kind for k in found.devices if k.existing} == {"attached"}
    assert result.level == "medium"
    assert {r.rule for r in result.reasons} >= {"every-ctsw"}
