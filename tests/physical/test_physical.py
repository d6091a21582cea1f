"""The physical layer: every link's medium can join its two ends.

The bundled specs have no physical finding and never join an 8 x 50G cage to a 4 x 100G NIC with a passive DAC; five
planted faults are each refused by `teton validate` (exit 2) naming the cable and the fix; the lab cabled with SONiC
and with FBOSS rack switches lands every cable on the same cages, and SONiC's port table agrees with FBOSS's platform
mapping for each cage; the BOM counts each part class as the plan does."""

from __future__ import annotations

import copy
import csv
import io
import json

import pytest
import yaml

from tests.cli.test_cli import run
from tests.helpers import LAB, fboss, write_spec
from teton.catalogue.media import DAC_REACH_M, shared_mode
from teton.checks.physical_rules import physical
from teton.fabric.bom import bom
from teton.fabric.cables import cables, counts
from teton.fabric.physical import Ends
from teton.fabric.plan import plan
from teton.pipeline import load_and_design
from teton.targets.cabling import render_files
from teton.targets.fboss.data import find_fboss_dir, platform_mapping

LAB_DATA = yaml.safe_load(LAB.read_text())


def _no_bad_media(fabric) -> None:
    """No physical finding; no passive DAC across a lane mismatch or past its lane rate's reach; every backend host
    link between an 8 x 50G cage and a 4 x 100G NIC has a gearbox (AEC or optics)."""
    assert list(physical(fabric, "spec")) == []
    ends = Ends(fabric.models)
    host_links = 0
    for c in cables(fabric):
        ea = ends.electrical(fabric.devices[c.a.device], c.a.port)
        eb = ends.electrical(fabric.devices[c.b.device], c.b.port)
        mode = shared_mode(ea, eb, c.speed_gbps)
        if c.medium == "dac":
            assert mode is not None, c
            assert (c.length_class or c.length_m) <= DAC_REACH_M[mode[1]], c
        if c.kind == "host-rtsw" and "8x50G" in c.b.electrical and "4x100G" in c.a.electrical:
            host_links += 1
            assert c.medium in ("aec", "smf", "mmf"), c
    return host_links


@pytest.mark.parametrize("spec", ["inventory/lab.yaml", "inventory/lab-ib.yaml", "inventory/lab.py"])
def test_the_labs_have_no_physical_finding_and_gearbox_every_8x50g_to_4x100g_host_link(spec):
    fabric = load_and_design(spec).fabric
    host_links = _no_bad_media(fabric)
    if spec != "inventory/lab-ib.yaml":
        assert host_links == 64                     # every backend host link of the lab
        assert {c.medium for c in cables(fabric) if c.kind == "host-rtsw"} == {"aec"}


@pytest.mark.scale24k
@pytest.mark.parametrize("spec", ["inventory/reference-roce-24k.yaml", "inventory/reference-ib-24k.yaml"])
def test_the_24k_references_have_no_physical_finding(spec):
    fabric = load_and_design(spec).fabric
    host_links = _no_bad_media(fabric)
    assert host_links == (24576 if "roce" in spec else 0)


def _validate(tmp_path, data: dict) -> tuple[int, str]:
    return run("validate", str(write_spec(tmp_path, data)))


def _lab() -> dict:
    return copy.deepcopy(LAB_DATA)


def test_a_passive_dac_across_a_lane_rate_mismatch_is_refused(tmp_path):
    data = _lab()
    data["backend"]["rtsw"]["medium_down"] = "dac"
    code, out = _validate(tmp_path, data)
    assert code == 2, out
    assert "backend.rtsw.medium_down" in out and "cable z01-r001-45-000" in out
    assert "z01-r001-h1 be0" in out and "z01-r001-rtsw Ethernet8 cage 2/1 (QSFP-DD 8x50G)" in out
    assert "a passive DAC cannot join OSFP 4x100G to QSFP-DD 8x50G" in out and "use an AEC" in out


def test_a_dac_longer_than_its_reach_is_refused(tmp_path):
    data = _lab()
    data["backend"]["rtsw"]["medium_down"] = "aec"      # in reach
    data["frontend"]["rsw"]["medium_down"] = "aec"
    data["backend"]["ctsw"]["medium_down"] = "dac"      # RTSW to CTSW across the hall: QSFP-DD to QSFP-DD, 50G lanes
    code, out = _validate(tmp_path, data)
    assert code == 2, out
    assert "backend.ctsw.medium_down" in out and "cable z01-r001-45-" in out
    assert "DAC at 50G a lane is past its reach of 3 m" in out or "longer than" in out, out
    assert "use an AEC within 5 m, else optics (smf)" in out


def test_a_upc_cord_on_an_apc_module_is_refused(tmp_path):
    data = yaml.safe_load(open("inventory/lab-ib.yaml").read())
    data["backend"]["leaf"]["optics_down"] = {"connector": "MPO-12/UPC"}
    code, out = _validate(tmp_path, data)
    assert code == 2, out
    assert "backend.leaf.optics_down.connector" in out and "cable " in out
    assert "a MPO-12/UPC cord on 400G OSFP SR4 modules (MPO-12/APC): UPC and APC polish do not mate" in out
    assert "order MPO-12/APC OM4 cords" in out


def test_a_multimode_optic_on_single_mode_fibre_is_refused(tmp_path):
    data = yaml.safe_load(open("inventory/lab-ib.yaml").read())
    data["backend"]["leaf"]["optics_down"] = {"cord": "OS2", "connector": "MPO-12/APC"}
    code, out = _validate(tmp_path, data)
    assert code == 2, out
    assert "backend.leaf.optics_down.cord" in out
    assert "a multimode SR4 optic on OS2 single-mode fibre" in out and "use OM4 cords" in out


def test_a_400g_module_in_a_200g_only_cage_is_refused(tmp_path):
    """A Minipack2 entry that claims all 128 cages of its 16Q PIMs at 400G (as SONiC's port table used to invent
    400G cages): past the 64 odd cages its ports land on even ones, which FBOSS's mapping runs at 200G at most, and
    an RTSW with 16 downlinks and 52 uplinks uses four of them."""
    data = _lab()
    data["switch_models"] = [{
        "name": "minipack2-128", "vendor": "Meta (Celestica)", "asic": "Broadcom Tomahawk4", "asic_tbps": 51.2,
        "port_groups": [{"count": 128, "speed_gbps": 400, "lanes": 4, "form_factor": "QSFP-DD",
                         "breakouts": ["1x400G"]}],
        "port_naming": "sonic", "box": "fuji", "slots": 8, "first_slot": 2, "nos": ["sonic"],
        "platform": {"sonic": "x86_64-facebook_minipack2-r0"}, "hwsku": {"sonic": "Facebook-Minipack2-128x400G"},
        "height_ru": 4, "power_w": 2500, "buffer_mb": 113}]
    data["backend"]["rtsw"].update(model="minipack2-128", uplinks_per_ctsw=13, oversubscription=round(16 / 52, 4))
    data["backend"]["addressing"]["ipv4"]["fabric_links"] = "10.1.0.0/20"
    code, out = _validate(tmp_path, data)
    assert code == 2, out
    assert "backend.rtsw.model" in out and "[physical]" in out
    assert "cage 2/2 of minipack2-128 does not run 400G (it runs 200G, 100G, 40G, 10G)" in out
    assert "place the port on a cage that runs it" in out


def test_the_same_cable_lands_on_the_same_cages_whatever_the_nos(tmp_path):
    sonic = load_and_design(str(LAB)).fabric
    fb = load_and_design(str(write_spec(tmp_path, fboss(_lab()), "lab.yaml"))).fabric
    by_id = {c.id: c for c in cables(sonic)}
    other = {c.id: c for c in cables(fb)}
    assert set(by_id) == set(other)
    for cid, c in by_id.items():
        o = other[cid]
        assert (c.a.device, c.a.cage, c.b.device, c.b.cage) == (o.a.device, o.a.cage, o.b.device, o.b.cage), cid
    # the review's examples: a host cable and an uplink, on odd cages (400G) under both NOSes
    assert (by_id["z01-r001-45-000"].b.port, other["z01-r001-45-000"].b.port) == ("Ethernet8", "eth2/1/1")
    assert by_id["z01-r001-45-001"].b.cage == "2/3" and other["z01-r001-45-001"].b.port == "eth2/3/1"
    assert by_id["z01-r001-45-017"].a.cage == "4/3" and other["z01-r001-45-017"].a.port == "eth4/3/1"


@pytest.mark.parametrize("model, platform", [("minipack2", "fuji"), ("wedge400", "wedge400")])
def test_each_used_sonic_port_agrees_with_fbosss_platform_mapping(lab_build, model, platform):
    """SONiC's PORT alias is the FBOSS port of the same cage, and its lanes are the mapping's ASIC lanes for the
    profile at the port's speed (count and numbers)."""
    mapping = platform_mapping(str(find_fboss_dir()), platform)
    cores = {c["name"]: c["physicalID"] for c in mapping["chips"] if c["type"] == 1}
    speeds = {int(p["factor"]["profileID"]): p["profile"]["speed"] // 1000
              for p in mapping["platformSupportedProfiles"]}
    by_name = {e["mapping"]["name"]: e for e in mapping["ports"].values()}
    fabric = load_and_design(str(LAB)).fabric
    checked = 0
    for d in fabric.devices.values():
        if d.model != model or d.nos != "sonic":
            continue
        db = json.loads((lab_build / "devices" / d.name / "config_db.json").read_text())
        for i in d.interfaces:
            row = db["PORT"][i.name]
            alias = row["alias"]                          # eth<PIM>/<cage>/1, or Ethernet<cage>/1 on a fixed box
            entry = by_name[alias if alias.startswith("eth") else "eth1/" + alias.removeprefix("Ethernet")]
            width = len(row["lanes"].split(","))
            pins = next(cfg["pins"]["iphy"] for p, cfg in entry["supportedProfiles"].items()
                        if speeds[int(p)] == i.speed_gbps and len(cfg["pins"]["iphy"]) == width)
            lanes = [cores[x["id"]["chip"]] * 8 + x["id"]["lane"] for x in pins]
            assert row["lanes"] == ",".join(map(str, lanes)), (d.name, i.name)
            assert i.name == f"Ethernet{lanes[0]}"
            checked += 1
    assert checked >= 16


def test_the_boms_counts_per_part_class_equal_the_plans():
    for spec in ("inventory/lab.yaml", "inventory/lab-ib.yaml"):
        fabric = load_and_design(spec).fabric
        p, b, parts = plan(fabric), bom(fabric), counts(cables(fabric))
        assert b["optics"] == p["transceivers"] == parts.optics
        assert b["dacs"] == p["dacs"] and b["aecs"] == p["aecs"] and b["fibres"] == p["cords"]
        rows = list(csv.DictReader(io.StringIO(render_files(fabric)["cabling/bom.csv"])))
        for category, key in (("optics", "transceivers"), ("aecs", "aecs"), ("dacs", "dacs"), ("fibres", "cords")):
            assert {r["item"]: int(r["quantity"]) for r in rows if r["category"] == category} == p[key], category
        assert sum(p["aecs"].values()) == sum(1 for c in cables(fabric) if c.medium == "aec")
    # a buyer's names: the gearbox cable and the IB parts in full
    lab = bom(load_and_design("inventory/lab.yaml").fabric)
    assert any(k.startswith("400G OSFP 4x100G to QSFP-DD 8x50G AEC, ") for k in lab["aecs"])
    ib = bom(load_and_design("inventory/lab-ib.yaml").fabric)
    assert "800G OSFP twin-port 2xSR4" in ib["optics"] and "400G OSFP SR4" in ib["optics"]
    assert all(k.startswith(("MPO-12/APC OM4 cord", "MPO-12/APC OS2 cord")) for k in ib["fibres"])
    assert ib["parts"]["400G OSFP SR4"]["reach_m"] == 50 and ib["parts"]["800G OSFP twin-port 2xSR4"]["power_w"] == 15


def test_a_sites_part_numbers_reach_the_bom(tmp_path):
    data = _lab()
    data.setdefault("floor", {})["parts"] = {"400G QSFP-DD DR4": "ACME-QDD-DR4-01"}
    fabric = load_and_design(str(write_spec(tmp_path, data))).fabric
    rows = list(csv.DictReader(io.StringIO(render_files(fabric)["cabling/bom.csv"])))
    dr4 = next(r for r in rows if r["item"] == "400G QSFP-DD DR4")
    assert (dr4["part_number"], dr4["reach_m"], dr4["power_w_each"]) == ("ACME-QDD-DR4-01", "500", "12")


def test_an_unknown_box_is_refused_naming_the_model(tmp_path):
    data = _lab()
    data["switch_models"] = [dict(name="mp2-x", vendor="v", asic="a", asic_tbps=25.6, box="nosuch",
                                  port_groups=[{"count": 64, "speed_gbps": 400, "lanes": 8, "form_factor": "QSFP-DD"}],
                                  port_naming="sonic", nos=["sonic"], slots=8, first_slot=2)]
    data["backend"]["rtsw"]["model"] = "mp2-x"
    code, out = _validate(tmp_path, data)
    assert code == 2 and "Traceback" not in out, out
    assert "switch_models[0].box" in out and "no front-panel map 'nosuch' (known: fuji, wedge400)" in out
