"""The design decides, a target spells: every NOS of one fabric says the same routing, timers and management VRF, and
what a target reads back from its own files is what the design decided."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import LAB, write_spec
from teton.cli import main
from teton.fabric.serialize import load_fabric
from teton.frr.policy import routing_of
from teton.pipeline import build, load_and_design
from teton.targets import BuildFiles
from teton.targets.eos.readback import read_eos
from teton.targets.frr import render_frr


def _without_connect_retry(routing):
    """EOS has no per-peer connect-retry timer: that one value cannot be read back from an EOS config."""
    return replace(routing, timers=replace(routing.timers, connect_retry=None))


@pytest.fixture(scope="module")
def eos_racks(tmp_path_factory):
    """The lab with EOS rack switches (Arista 7060DX5-64S), no front end, management VRF 'OOB'; rendered."""
    data = yaml.safe_load(LAB.read_text())
    data["backend"]["rtsw"].update(model="arista-7060dx5-64s", nos="eos")
    data.pop("frontend")
    data["storage"] = []
    data["services"] = []           # service hosts sit on the front end
    data["management"]["vrf"] = "OOB"
    folder = tmp_path_factory.mktemp("eos-racks")
    spec = write_spec(folder, data)
    return build(spec, folder / "build").path


def test_eos_rack_switch_aggregates_and_exports_only_what_it_originates_as_frr_does(eos_racks):
    text = (eos_racks / "devices/z01-r001-rtsw/startup-config").read_text()
    assert "   aggregate-address 10.64.0.0/27 summary-only" in text
    assert "   aggregate-address fd00:1::/64 summary-only" in text
    assert "route-map EXPORT_V4 permit 10\n   match ip address prefix-list ORIGINATE_V4" in text
    fabric = load_fabric((eos_racks / "fabric.json").read_text())
    frr = render_frr("z01-r001-rtsw", fabric.devices["z01-r001-rtsw"].routing)
    assert "  aggregate-address 10.64.0.0/27 summary-only" in frr
    assert " match ip address prefix-list ORIGINATE_V4" in frr
    spine = (eos_racks / "devices/z01-ctsw01/startup-config").read_text()
    assert "aggregate-address" not in spine and "ORIGINATE" not in spine          # a spine is transit


def test_what_eos_reads_back_is_the_design_for_every_switch(eos_racks):
    fabric = load_fabric((eos_racks / "fabric.json").read_text())
    source = BuildFiles(eos_racks)
    eos = [d for d in fabric.devices.values() if d.nos == "eos"]
    assert len(eos) == 14
    for d in eos:
        view, findings = read_eos(d.name, source.json(f"devices/{d.name}/structured-config.json"))
        assert findings == []
        assert view.bgp is not None and routing_of(view.bgp) == _without_connect_retry(d.routing), d.name


def test_management_vrf_is_honoured(eos_racks):
    text = (eos_racks / "devices/z01-ctsw01/startup-config").read_text()
    assert "vrf instance OOB" in text and "   vrf OOB" in text and "tacacs-server host 192.0.2.49 vrf OOB" in text
    assert "vrf MGMT" not in text and "vrf mgmt" not in text


def test_a_management_vrf_sonic_cannot_spell_is_a_spec_error(tmp_path, lab_data):
    lab_data["management"]["vrf"] = "OOB"
    result = CliRunner().invoke(main, ["validate", "--json", str(write_spec(tmp_path, lab_data))])
    findings = [f for f in json.loads(result.output[:result.output.rindex("}") + 1])["findings"]
                if f["severity"] == "error"]
    assert result.exit_code == 2
    assert [(f["path"], f["rule"]) for f in findings] == [("management.vrf", "sonic")]
    assert "'mgmt'" in findings[0]["message"] and findings[0]["line"] is not None


def test_bgp_timers_come_from_the_spec_model_alone(tmp_path, lab_data):
    """No timers in the spec: every NOS, the fabric and the twin's FRR get the model's defaults (1 s / 3 s / 1 s)."""
    lab_data["backend"]["bgp"].pop("timers")
    out = build(write_spec(tmp_path, lab_data), tmp_path / "b").path
    frr = (out / "devices/z01-r001-rtsw/frr.conf").read_text()
    assert " timers bgp 1 3" in frr and " neighbor CTSW_V4 timers connect 1" in frr
    assert "   neighbor RTSW_V4 timers 1 3" in (out / "devices/z01-ctsw01/startup-config").read_text()
    fabric = load_fabric((out / "fabric.json").read_text())
    assert {(r.timers.keepalive, r.timers.hold, r.timers.connect_retry)
            for d in fabric.devices.values() if (r := d.routing)} == {(1, 3, 1)}


def test_a_nos_without_a_target_is_an_error_naming_the_tier(tmp_path, lab_data):
    lab_data["backend"]["rtsw"]["nos"] = "cumulus"      # a NOS teton has no target for
    result = CliRunner().invoke(main, ["render", str(write_spec(tmp_path, lab_data)), "-o", str(tmp_path / "b")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "backend.rtsw.nos" in result.output and "no target renders 'cumulus'" in result.output
    assert "rtsw switches would get no configuration" in result.output
    assert not (tmp_path / "b").exists()


def test_the_fabric_json_round_trip_is_exact(lab_build, lab_fabric):
    assert load_fabric((lab_build / "fabric.json").read_text()) == lab_fabric


def test_every_switch_and_host_carries_the_same_qos_and_management_objects(lab_fabric):
    backend = [d for d in lab_fabric.devices.values() if d.plane == "backend" and d.role != "storage"]
    assert {id(d.qos) for d in backend} == {id(lab_fabric.qos)}
    assert {id(d.management) for d in lab_fabric.devices.values() if d.nos} == {id(lab_fabric.management)}


def test_a_design_built_twice_is_equal(lab_fabric):
    assert load_and_design(LAB).fabric == lab_fabric


def test_radius_renders_on_both_noses(tmp_path, lab_data):
    """aaa_protocol: radius passed validate and then failed the EOS schema; now both NOSes spell it."""
    lab_data["management"]["aaa_protocol"] = "radius"
    out = build(write_spec(tmp_path, lab_data), tmp_path / "b").path
    eos = (out / "devices/z01-ctsw01/startup-config").read_text()
    assert "radius-server host 192.0.2.49 vrf mgmt key 7 TETON_SECRET_aaa_key" in eos
    assert "aaa group server radius AAA-MGMT" in eos and "ip radius vrf mgmt source-interface Management0" in eos
    db = json.loads((out / "devices/z01-r001-rtsw/config_db.json").read_text())
    assert db["RADIUS_SERVER"]["192.0.2.49"]["passkey"] == "TETON_SECRET_aaa_key" and "TACPLUS" not in db


def test_a_drained_switch_prepends_its_asn_on_both_noses(tmp_path, lab_data):
    lab_data["backend"]["drain"] = ["z01-ctsw01", "z01-r001-rtsw"]
    out = build(write_spec(tmp_path, lab_data), tmp_path / "b").path
    eos = (out / "devices/z01-ctsw01/startup-config").read_text()
    assert "route-map EXPORT_V4 permit 10\n   set as-path prepend 4200000101 4200000101 4200000101" in eos
    frr = (out / "devices/z01-r001-rtsw/frr.conf").read_text()
    assert " set as-path prepend 4201001001 4201001001 4201001001" in frr
    assert "prepend" not in (out / "devices/z01-r002-rtsw/frr.conf").read_text()
    view, _ = read_eos("z01-ctsw01", json.loads((out / "devices/z01-ctsw01/structured-config.json").read_text()))
    assert view.bgp is not None and routing_of(view.bgp).drain_prepend == 3


def test_draining_a_switch_the_fabric_does_not_have_is_an_error(tmp_path, lab_data):
    lab_data["backend"]["drain"] = ["z01-ctsw09"]
    result = CliRunner().invoke(main, ["validate", "--json", str(write_spec(tmp_path, lab_data))])
    findings = [f for f in json.loads(result.output[:result.output.rindex("}") + 1])["findings"]
                if f["severity"] == "error"]
    assert result.exit_code == 2 and [(f["path"], f["rule"]) for f in findings] == [("backend.drain[0]", "drain")]


def test_bfd_is_spelled_on_both_noses_and_sonic_says_what_it_needs(tmp_path, lab_data):
    lab_data["backend"]["bgp"]["bfd"] = True
    spec = write_spec(tmp_path, lab_data)
    designed = load_and_design(spec)
    (warning,) = [f for f in designed.warnings if f.rule == "sonic"]
    assert warning.path == "backend.bgp.bfd" and "bfdd" in warning.message and warning.severity == "warning"
    out = build(spec, tmp_path / "b").path
    assert " neighbor CTSW_V4 bfd" in (out / "devices/z01-r001-rtsw/frr.conf").read_text()
    assert "   neighbor RTSW_V4 bfd" in (out / "devices/z01-ctsw01/startup-config").read_text()
