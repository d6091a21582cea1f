"""The run list, the bill of materials and the floor: one row per physical cable with unique ids, the BOM's optic
and DAC counts equal to the run list's and the plan's, XLSX workbooks that read back to the same rows, and a rack over
its power budget refused by validate with the rack and the figures."""

from __future__ import annotations

import csv
import io

import pytest

from tests.cli.test_cli import run
from tests.helpers import write_spec
from teton.fabric.bom import bom
from teton.fabric.cables import cables, counts
from teton.fabric.model import Fabric
from teton.fabric.plan import plan
from teton.pipeline import load_and_design
from teton.targets.cabling import render_files
from teton.targets.cabling.runlist import COLUMNS, SPINES, read_workbook, sheets, workbook_bytes


def _check_runs(spec: str, xlsx: bool = True, fabric: Fabric | None = None) -> None:
    """`xlsx`: the workbook written twice and compared (deterministic), and read back."""
    fabric = fabric or load_and_design(spec).fabric
    files = render_files(fabric)
    rows = list(csv.DictReader(io.StringIO(files["cabling.csv"])))
    assert len(rows) == len(fabric.links)                                   # one row per physical link
    ids = [r["cable_id"] for r in rows]
    assert len(set(ids)) == len(ids)                                        # ids unique
    assert {(r["a_device"], r["a_port"]) for r in rows} | {(r["b_device"], r["b_port"]) for r in rows} == {
        (e.device, e.port) for link in fabric.links for e in (link.a, link.b)}   # each link once, A->Z as designed
    found = cables(fabric)
    parts = counts(found)
    p = plan(fabric)
    b = bom(fabric, found)
    assert b["optics"] == p["transceivers"] == parts.optics and sum(b["optics"].values()) == p["optics"]
    assert b["dacs"] == p["dacs"] and sum(b["dacs"].values()) == p["dac_cables"] == sum(
        1 for r in rows if r["medium"] == "dac")
    ends = sum(1 for r in rows if r["medium"] in ("smf", "mmf") for e in "ab" if "twin-port" not in r[f"{e}_optic"])
    twin_modules = {m for c in found for m in (c.a.module, c.b.module) if " cage " in m}
    assert p["optics"] == ends + len(twin_modules)          # a twin-port module counts once for its two cables
    bom_csv = list(csv.reader(io.StringIO(files["cabling/bom.csv"])))[1:]
    assert {item: int(q) for cat, item, q, *_ in bom_csv if cat == "optics"} == p["transceivers"]
    if xlsx:
        by_sheet = sheets(found)
        data = workbook_bytes({name: (COLUMNS, r) for name, r in by_sheet.items()})
        assert data == workbook_bytes({name: (COLUMNS, r) for name, r in by_sheet.items()})   # deterministic
        back = read_workbook(data)
        assert list(back) == list(by_sheet) and SPINES in back
        for name, sheet_rows in by_sheet.items():
            assert back[name][0] == list(COLUMNS)
            assert back[name][1:] == [[v for v in r] for r in sheet_rows], name
        assert sum(len(r) - 1 for r in back.values()) == len(rows)


def test_lab_run_list_bom_and_workbook():
    _check_runs("inventory/lab.yaml")


def test_lab_ib_twin_port_cages_are_one_module_for_two_cables():
    fabric = load_and_design("inventory/lab-ib.yaml").fabric
    found = cables(fabric)
    leaf = [c for c in found if c.b.device == "z01-leaf0" and c.kind == "host-leaf"]
    assert leaf[0].b.optic == "800G OSFP twin-port 2xSR4" and leaf[0].a.optic == "400G OSFP SR4"
    assert leaf[0].b.module == leaf[1].b.module == "z01-leaf0 cage 1"           # ports 1/1/1 and 1/1/2
    assert leaf[1].id in leaf[0].notes and leaf[0].id in leaf[1].notes
    twin = counts(found).optics["800G OSFP twin-port 2xSR4"]
    assert twin == len({c.b.module for c in found if c.kind in ("host-leaf", "service-leaf")})
    assert plan(fabric)["optics"] == sum(counts(found).optics.values())
    _check_runs("inventory/lab-ib.yaml")


@pytest.mark.scale24k
@pytest.mark.parametrize("spec", ["inventory/reference-roce-24k.yaml", "inventory/reference-ib-24k.yaml"])
def test_24k_run_list_and_bom(spec, request):
    """Both 24k references' run lists and BOMs.  Their workbooks (about a minute of openpyxl each, through the writer
    the labs' workbooks test above) are written and read back by bench/bench_workbook.py."""
    roce = spec.endswith("roce-24k.yaml")        # the session's designed RoCE reference (tests/conftest.py)
    _check_runs(spec, xlsx=False, fabric=request.getfixturevalue("roce24k").fabric if roce else None)


def test_lengths_come_from_the_floor(lab_data, tmp_path):
    near = {c.id: c for c in cables(load_and_design(write_spec(tmp_path, lab_data, "a.yaml")).fabric)}
    lab_data["floor"] = {"row_pitch_m": 12.0, "rack_power_kw": 30}
    far = {c.id: c for c in cables(load_and_design(write_spec(tmp_path, lab_data, "b.yaml")).fabric)}
    up = next(i for i, c in near.items() if c.kind == "rtsw-ctsw")
    assert far[up].length_m > near[up].length_m and far[up].a.row == near[up].a.row
    dac = next(i for i, c in near.items() if c.kind == "host-rtsw")
    assert far[dac].length_m == near[dac].length_m and near[dac].length_class == 2.5   # inside one rack


def test_a_rack_over_its_budget_fails_validate_with_the_rack_and_the_figures(lab_data, tmp_path):
    lab_data["floor"] = {"rack_power_kw": 30, "rack_power": {"z01-r00*": 20, "z01-r002": 24}}
    spec = write_spec(tmp_path, lab_data)
    code, err = run("validate", str(spec))
    assert code == 2
    assert "floor.rack_power.z01-r00*: rack z01-r001 draws 23.7 kW (" in err
    assert "over its budget of 20 kW by 3.7 kW" in err and "[rack-power]" in err
    assert "z01-r002" not in err                       # its own name wins over the pattern: 24 kW holds it
    lab_data["floor"] = {"rack_power_kw": 30}
    assert run("validate", str(write_spec(tmp_path, lab_data)))[0] == 0


def test_dot_and_ibdiagnet_exports_come_from_the_same_cables():
    fabric = load_and_design("inventory/lab-ib.yaml").fabric
    files = render_files(fabric)
    found = cables(fabric)
    edges = [line for line in files["cabling/topology.dot"].splitlines() if " -- " in line]
    ethernet = [c for c in found if c.kind not in ("host-leaf", "service-leaf", "leaf-spine", "spine-core")]
    assert len(edges) == len(ethernet) and all(c.id in e for c, e in zip(ethernet, edges, strict=True))
    assert '"z01-r001-h1":"fe0" -- "z01-r001-frsw":"Ethernet32";' in files["cabling/topology.dot"]
    topo = files["cabling/ibdiagnet.topo"].splitlines()
    ports = [line for line in topo if " -4x-100G-> " in line]
    assert len(ports) == 2 * (len(found) - len(ethernet))                     # each IB cable from both ends
    assert "MQM9700 z01-leaf0" in topo and "HCA z01-r001-h1/mlx5_0" in topo
    assert any(line.startswith("   P1 -4x-100G-> MQM9700 z01-leaf0 P1") for line in topo)
    assert "cabling/ibdiagnet.topo" not in render_files(load_and_design("inventory/lab.yaml").fabric)


def test_verify_is_a_group_whose_default_takes_a_plain_build_argument():
    import click
    from click.testing import CliRunner

    from teton.cli.verify import DefaultGroup

    group = DefaultGroup("verify")

    @group.command("routing")
    @click.argument("build")
    def routing(build: str) -> None:
        click.echo(f"routing {build}")

    group.default = "routing"
    assert CliRunner().invoke(group, ["build/lab"]).output == "routing build/lab\n"
    assert CliRunner().invoke(group, ["routing", "x"]).output == "routing x\n"


def test_a_zone_added_within_the_room_moves_no_rack(tmp_path):
    """Every existing cable keeps its rows and length when a zone, an aggregator and a spine are added (the floor is
    laid out for the room's zones), so the run list's diff is the new cables and the ports where they attach."""
    from tests.design.test_growth import lab_with_room
    from teton.spec.load import load_spec

    data = lab_with_room()
    before = {c.id: c for c in cables(load_and_design(write_spec(tmp_path, data, "before.yaml")).fabric)}
    data["zones"] = 3
    data["backend"]["atsw"]["count"] = 3
    data["frontend"]["ssw"]["per_plane"] = 2
    data["backend"]["ctsw"]["oversubscription"] = 2 / 3
    spec = write_spec(tmp_path, data, "after.yaml")
    load_spec(spec)
    after = {c.id: c for c in cables(load_and_design(spec).fabric)}
    moved = [i for i, c in before.items() if (after[i].length_m, after[i].a.row, after[i].b.row)
             != (c.length_m, c.a.row, c.b.row)]
    assert not moved and len(after) > len(before)
