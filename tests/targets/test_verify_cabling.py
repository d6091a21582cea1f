"""`teton verify cabling BUILD --lldp DIR` on collected LLDP files: clean when every port sees its designed neighbour;
two crossed cables reported once as swapped with both ids; a pulled cable as missing; a neighbour on an unused port
as extra; the three file shapes (lldpctl, SONiC's show lldp table, EOS) read alike; bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.test_cli import run
from teton.fabric.neighbours import NEIGHBOURS_FILE, load_neighbours
from teton.targets.cabling.lldp import parse


def _lldpctl(seen: dict[str, tuple[str, str]]) -> str:
    """What `lldpctl -f json` prints for ports that see (system, port id); lldpd prints one interface as an object."""
    entries = [{port: {"via": "LLDP", "chassis": {system: {"id": {"type": "mac", "value": "02:00:00:00:00:01"}}},
                       "port": {"id": {"type": "local", "value": pid}, "ttl": "120"}}}
               for port, (system, pid) in sorted(seen.items())]
    return json.dumps({"lldp": {"interface": entries[0] if len(entries) == 1 else entries}})


@pytest.fixture
def views(lab_build) -> dict[str, dict[str, tuple[str, str]]]:
    """What every device of the lab sees when it is cabled as designed: {device: {port: (system, port id)}}."""
    expected = load_neighbours((lab_build / NEIGHBOURS_FILE).read_text())
    return {d: {p: (n.system, n.port_id) for p, n in ports.items()} for d, ports in expected.items()}


def _write(folder: Path, views: dict[str, dict[str, tuple[str, str]]]) -> Path:
    folder.mkdir(exist_ok=True)
    for device, seen in views.items():
        (folder / f"{device}.json").write_text(_lldpctl(seen))
    return folder


def _verify(build: Path, folder: Path) -> tuple[int, dict]:
    code, out = run("verify", "cabling", str(build), "--lldp", str(folder), "--json")
    return code, json.loads(out[out.index("{"):]) if code in (0, 1) else {}


def test_a_fabric_cabled_as_designed_is_clean(lab_build, views, tmp_path):
    code, report = _verify(lab_build, _write(tmp_path / "lldp", views))
    assert code == 0 and report["ok"] and report["as_designed"] == report["ports"] > 200
    assert not (report["swapped"] or report["miswired"] or report["missing"] or report["extra"])


def test_two_crossed_cables_are_reported_once_as_swapped_with_both_ids(lab_build, views, tmp_path):
    rtsw = views["z01-r001-rtsw"]
    rtsw["Ethernet8"], rtsw["Ethernet32"] = rtsw["Ethernet32"], rtsw["Ethernet8"]    # crossed at the switch
    h1 = views["z01-r001-h1"]
    h1["be0"], h1["be1"] = h1["be1"], h1["be0"]
    code, report = _verify(lab_build, _write(tmp_path / "lldp", views))
    assert code == 1 and not report["ok"]
    assert [s["cables"] for s in report["swapped"]] == [["z01-r001-45-000", "z01-r001-45-001"]]
    assert len(report["swapped"][0]["ends"]) == 4 and not report["miswired"] and not report["missing"]


def test_a_pulled_cable_is_missing_and_a_stray_one_extra(lab_build, views, tmp_path):
    del views["z01-ctsw01"]["Ethernet3/3/1"]                 # the CTSW-ATSW cable z01-n01-01-002, both ends
    del views["atsw01"]["Ethernet3/1/1"]
    views["z01-r001-rtsw"]["Ethernet248"] = ("z01-r001-h1", "be7")     # a port the design leaves unused
    views["z01-r001-rtsw"]["eth0"] = ("oob-switch-1", "Ethernet12")    # the management port: not a fabric port
    code, report = _verify(lab_build, _write(tmp_path / "lldp", views))
    assert code == 1
    assert [m["cable"] for m in report["missing"]] == ["z01-n01-01-002"]
    assert report["missing"][0]["a"] == "atsw01 Ethernet3/1/1" or report["missing"][0]["b"] == "atsw01 Ethernet3/1/1"
    assert report["extra"] == [{"device": "z01-r001-rtsw", "port": "Ethernet248", "found": "z01-r001-h1 be7",
                                "found_cable": "z01-r001-45-007"}]


def test_a_second_neighbour_beside_the_designed_one_is_extra(lab_build, views, tmp_path):
    folder = _write(tmp_path / "lldp", views)
    data = json.loads((folder / "z01-r001-h1.json").read_text())
    stray = {"be0": {"via": "LLDP", "chassis": {"z01-r002-rtsw": {}}, "port": {"id": {"type": "local",
                                                                                       "value": "eth2/1/1"}}}}
    data["lldp"]["interface"].append(stray)      # be0 sees its RTSW and, through something in between, another
    (folder / "z01-r001-h1.json").write_text(json.dumps(data))
    code, report = _verify(lab_build, folder)
    assert code == 1 and not report["miswired"] and not report["missing"]
    assert [(e["device"], e["port"], e["found"], e["beside"]) for e in report["extra"]] == [
        ("z01-r001-h1", "be0", "z01-r002-rtsw eth2/1/1", f"z01-r001-rtsw {views['z01-r001-h1']['be0'][1]}")]
    code, text = run("verify", "cabling", str(lab_build), "--lldp", str(folder))
    assert code == 1 and "beside its designed neighbour z01-r001-rtsw" in text


def test_one_port_plugged_into_the_wrong_switch_is_miswired(lab_build, views, tmp_path):
    views["z01-r001-h2"]["fe0"] = ("z01-r002-frsw", "Ethernet1/1")
    code, report = _verify(lab_build, _write(tmp_path / "lldp", views))
    assert code == 1 and len(report["miswired"]) == 1
    m = report["miswired"][0]
    assert (m["device"], m["port"], m["found"]) == ("z01-r001-h2", "fe0", "z01-r002-frsw Ethernet1/1")
    assert m["cable"].startswith("z01-r001-") and m["found_cable"].startswith("z01-r002-")


def test_sonic_and_eos_shapes_read_as_lldpctl_does(lab_build, views, tmp_path):
    folder = _write(tmp_path / "lldp", views)
    rtsw = views["z01-r001-rtsw"]
    (folder / "z01-r001-rtsw.json").write_text(json.dumps(
        [{"LocalPort": p, "RemoteDevice": s, "RemotePortID": i, "Capability": "R", "RemotePortDescr": ""}
         for p, (s, i) in rtsw.items()]))
    (folder / "z01-ctsw01.json").write_text(json.dumps({"lldpNeighbors": [
        {"port": p, "neighborDevice": s, "neighborPort": i, "ttl": 120} for p, (s, i) in views["z01-ctsw01"].items()]}))
    (folder / "z01-r002-rtsw.json").write_text(json.dumps({f"LLDP_ENTRY_TABLE:{p}": {
        "lldp_rem_sys_name": s, "lldp_rem_port_id": i} for p, (s, i) in views["z01-r002-rtsw"].items()}))
    assert _verify(lab_build, folder)[0] == 0
    json0 = {"lldp": [{"interface": [{"name": "be0", "chassis": [{"name": [{"value": "z01-r001-rtsw"}]}],
                                      "port": [{"id": [{"type": "local", "value": "eth2/1/1"}]}]}]}]}
    assert [tuple(s) for s in parse(json.dumps(json0), "x")] == [("be0", "z01-r001-rtsw", "eth2/1/1")]


def test_bad_input_exits_2_naming_the_file(lab_build, views, tmp_path):
    folder = _write(tmp_path / "lldp", views)
    (folder / "z01-r001-h1.json").write_text("{not json")
    code, out = run("verify", "cabling", str(lab_build), "--lldp", str(folder))
    assert code == 2 and "z01-r001-h1.json" in out and "not JSON" in out
    (folder / "z01-r001-h1.json").write_text(_lldpctl(views["z01-r001-h1"]))
    (folder / "no-such-switch.json").write_text(_lldpctl({"Ethernet0": ("x", "y")}))
    code, out = run("verify", "cabling", str(lab_build), "--lldp", str(folder))
    assert code == 2 and "no-such-switch" in out
    code, out = run("verify", "cabling", str(tmp_path), "--lldp", str(folder))
    assert code == 2 and "neighbours.json" in out
