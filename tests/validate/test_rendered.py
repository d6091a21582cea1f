"""Cross-device and vendor checks over rendered files: break a value on purpose, see the device and the path."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from teton.cli import main
from teton.validate.rendered import validate_rendered


@pytest.fixture
def build(lab_build, tmp_path):
    out = tmp_path / "lab"
    shutil.copytree(lab_build, out)
    return out


def _edit_json(path, fn):
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def test_lab_build_is_clean(lab_build):
    assert validate_rendered(lab_build) == []


def test_mtu_out_of_range_is_caught_by_sonic_yang(build):
    _edit_json(build / "devices/z01-r001-rtsw/config_db.json", lambda d: d["PORT"]["Ethernet0"].update(mtu="9300"))
    found = [(f.file, f.path, f.rule) for f in validate_rendered(build)]
    assert ("devices/z01-r001-rtsw/config_db.json", "PORT|Ethernet0/mtu", "sonic-yang") in found
    assert any(r == "mtu-mismatch" and f == "devices/z01-r001-rtsw/config_db.json" for f, _, r in found)


def test_mtu_out_of_range_on_eos_is_caught_by_pyavd(build):
    _edit_json(build / "devices/z01-ctsw01/structured-config.json",
               lambda d: d["ethernet_interfaces"][0].update(mtu=99999))
    found = [(f.file, f.path, f.rule) for f in validate_rendered(build)]
    assert ("devices/z01-ctsw01/structured-config.json", "ethernet_interfaces[0].mtu", "avd-schema") in found


def test_mtu_that_differs_across_a_link(build):
    _edit_json(build / "devices/z01-ctsw01/structured-config.json",
               lambda d: d["ethernet_interfaces"][0].update(mtu=9000))
    (f,) = [f for f in validate_rendered(build) if f.rule == "mtu-mismatch"]
    assert "z01-ctsw01" in f.message and "z01-r001-rtsw" in f.message and "9000" in f.message


def test_neighbour_with_the_wrong_asn(build):
    def wrong(d):
        d["router_bgp"]["neighbors"][0]["remote_as"] = "4201001999"
    _edit_json(build / "devices/z01-ctsw01/structured-config.json", wrong)
    found = [f for f in validate_rendered(build) if f.rule == "bgp-session"]
    assert [(f.file, f.path) for f in found] == [("devices/z01-ctsw01/structured-config.json",
                                                  "router_bgp.neighbors[0]")]
    assert "z01-r001-rtsw" in found[0].message and "4201001001" in found[0].message


def test_session_missing_on_one_end(build):
    path = build / "devices/z01-r001-rtsw/frr.conf"
    lines = [x for x in path.read_text().splitlines() if not x.startswith(" neighbor 10.1.0.0 ")]
    path.write_text("\n".join(lines) + "\n")
    found = [f for f in validate_rendered(build) if f.rule in ("bgp-session", "sonic-frr-mismatch")]
    assert any(f.file == "devices/z01-ctsw01/structured-config.json" and "no session back" in f.message
               for f in found)


def test_bgp_neighbor_rows_in_config_db_are_refused(build):
    """bgpcfgd would configure such neighbours itself, beside frr.conf's peer groups and policies."""
    _edit_json(build / "devices/z01-r001-rtsw/config_db.json",
               lambda d: d.update(BGP_NEIGHBOR={"10.1.0.0": {"asn": "4200000101", "name": "z01-ctsw01"}}))
    (f,) = [f for f in validate_rendered(build, vendor=False) if f.rule == "sonic-frr-mismatch"]
    assert f.path == "BGP_NEIGHBOR|10.1.0.0" and "bgpcfgd" in f.message


def test_split_routing_mode_is_refused(build):
    """In 'split' mode SONiC deletes frr.conf and loads per-daemon files: the rendered routing would not run."""
    _edit_json(build / "devices/z01-r001-rtsw/config_db.json",
               lambda d: d["DEVICE_METADATA"]["localhost"].update(docker_routing_config_mode="split"))
    (f,) = [f for f in validate_rendered(build, vendor=False) if f.rule == "sonic-frr-mismatch"]
    assert f.path == "DEVICE_METADATA|localhost/docker_routing_config_mode" and "split-unified" in f.message


def test_pfc_priority_that_differs_on_one_switch(build):
    def prio4(d):
        for row in d["PORT_QOS_MAP"].values():
            row["pfc_enable"] = row["pfcwd_sw_enable"] = "4"
    _edit_json(build / "devices/z02-r002-rtsw/config_db.json", prio4)
    (f,) = [f for f in validate_rendered(build, vendor=False) if f.rule == "qos-mismatch"]
    assert f.file == "devices/z02-r002-rtsw/config_db.json" and "z02-r002-rtsw" in f.message
    assert "[4]" in f.message and "[3]" in f.message


def test_dscp_map_that_differs_on_the_hosts(build):
    _edit_json(build / "hosts/backend.json", lambda d: d["qos"]["dscp_to_priority"].update({"26": 0, "24": 3}))
    found = [f for f in validate_rendered(build, vendor=False) if f.rule == "qos-mismatch"]
    assert [f.file for f in found] == ["hosts/backend.json"] and "DSCP map" in found[0].message


def test_duplicate_router_id(build):
    _edit_json(build / "devices/z01-ctsw02/structured-config.json",
               lambda d: d["router_bgp"].update(router_id="10.0.0.2"))
    assert [f.rule for f in validate_rendered(build, vendor=False) if f.rule != "manifest"] == ["router-id-clash"]


def test_cli_validate_rendered_exits_2_with_the_device_and_path(build):
    _edit_json(build / "devices/z01-r001-rtsw/config_db.json", lambda d: d["PORT"]["Ethernet0"].update(mtu="9300"))
    result = CliRunner().invoke(main, ["validate", "--rendered", str(build)])
    assert result.exit_code == 2
    assert "devices/z01-r001-rtsw/config_db.json: PORT|Ethernet0/mtu: Unsatisfied range" in result.output
