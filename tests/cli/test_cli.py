from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import LAB, REF24K, ROOT, write_spec
from teton.cli import main
from teton.pipeline.output import OutputError, publish


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


@pytest.mark.scale24k
def test_plan_of_the_24k_reference_matches_the_published_cluster():
    code, out = run("plan", str(REF24K), "--json")
    assert code == 0
    p = json.loads(out)
    assert (p["gpus"], p["hosts"], p["racks"], p["zones"]) == (24576, 3072, 1536, 8)
    assert p["switches"] == {"rtsw": 1536, "ctsw": 128, "atsw": 28}
    assert p["links"]["host-rtsw"] == 24576 and p["links"]["rtsw-ctsw"] == 24576 and p["links"]["ctsw-atsw"] == 3584
    assert p["oversubscription"]["rtsw"] == 1.0 and round(p["oversubscription"]["ctsw"]) == 7
    assert p["injection_tbps"] == 9830.4                       # 24,576 x 400G (docs/sources.md section 9)
    assert 690 < p["bisection_tbps"] < 720                     # ~0.70 Pb/s at 1:7 (docs/sources.md section 9)


def test_plan_table_for_people():
    code, out = run("plan", str(LAB))
    assert code == 0 and "64 / 8 / 4 / 2" in out and "rtsw 4:1" in out


def test_validate_ok_and_json_findings():
    code, out = run("validate", str(LAB), "--json")
    assert code == 0 and json.loads(out) == {"findings": [], "ok": True}


@pytest.mark.parametrize("mutate,path", [
    (lambda d: d.__setitem__("hosts_per_rack", 16), "backend.rtsw"),                       # ports overcommitted
    (lambda d: d["backend"]["asn"].__setitem__("rtsw", 4199999100), "backend.asn.rtsw"),    # ASN clash
    (lambda d: d["backend"].__setitem__("mtuu", 9000), "backend.mtuu"),                     # misspelled key
    (lambda d: d.__setitem__("zones", "two"), "zones"),                                     # string for a number
])
def test_broken_specs_exit_2_naming_the_path(tmp_path, lab_data, mutate, path):
    mutate(lab_data)
    spec = write_spec(tmp_path, lab_data)
    code, out = run("validate", str(spec), "--json")
    assert code == 2
    findings = json.loads(out[:out.rindex("}") + 1])
    assert path in [f["path"] for f in findings["findings"]]
    assert all(f["file"] == str(spec) for f in findings["findings"])


def test_rule_findings_carry_the_line_of_their_spec_path(tmp_path):
    text = LAB.read_text().replace("  asn: {atsw: 4200000000, ctsw: 4200000100, rtsw: 4201000000,",
                                   "  asn: {atsw: 4200000000, ctsw: 4200000100, rtsw: 4199999100,")
    spec = write_spec(tmp_path, text)
    code, out = run("validate", str(spec), "--json")
    findings = json.loads(out[:out.rindex("}") + 1])["findings"]
    line = text.splitlines().index(next(x for x in text.splitlines() if "rtsw: 4199999100" in x)) + 1
    assert code == 2 and {(f["path"], f["line"]) for f in findings} == {("backend.asn.rtsw", line)}


def test_yaml_that_does_not_parse_exits_2_with_the_line(tmp_path):
    spec = write_spec(tmp_path, "name: lab\nbackend: {kind: roce\n")
    code, out = run("validate", str(spec))
    assert code == 2 and f"{spec}:3" in out and "YAML does not parse" in out and "[yaml]" in out


def test_render_writes_fabric_cabling_and_manifest(tmp_path):
    out_dir = tmp_path / "b"
    code, _ = run("render", str(LAB), "-o", str(out_dir))
    assert code == 0
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert {"fabric.json", "cabling.csv"} <= set(manifest["files"])
    assert manifest["plan"]["gpus"] == 64
    import hashlib
    for rel, entry in manifest["files"].items():
        assert hashlib.sha256((out_dir / rel).read_bytes()).hexdigest() == entry["sha256"]
    rows = (out_dir / "cabling.csv").read_text().splitlines()
    assert rows[0].startswith("cable_id,kind,zone,rack,site,hall,a_row,a_rack,a_ru,a_device,a_port")
    assert len(rows) - 1 == sum(manifest["plan"]["links"].values())
    assert rows[1].startswith("z01-r001-45-000,host-rtsw,1,z01-r001,lab-hall-1,hall1,1,z01-r001,1,z01-r001-h1,be0,")
    fabric = json.loads((out_dir / "fabric.json").read_text())
    assert len(fabric["links"]) == len(rows) - 1


def test_failed_render_keeps_what_was_written(tmp_path, lab_data):
    out_dir = tmp_path / "b"
    assert run("render", str(LAB), "-o", str(out_dir))[0] == 0
    before = {p: p.read_bytes() for p in out_dir.rglob("*") if p.is_file()}
    lab_data["zones"] = "x"
    assert run("render", str(write_spec(tmp_path, lab_data)), "-o", str(out_dir))[0] == 2

    def half_way(tmp):
        (tmp / "a").write_text("1")
        (tmp / "a" / "b").write_text("2")                         # fails half-way through writing

    with pytest.raises(OutputError, match="a part of the path is a file"):
        publish(out_dir, half_way)
    assert {p: p.read_bytes() for p in out_dir.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(".lock")) == ["b", "spec.yaml"]


def test_render_is_byte_identical_across_runs_and_hash_seeds(tmp_path):
    outs = []
    for seed in ("0", "12345"):
        out_dir = tmp_path / seed
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, "-m", "teton.cli", "render", str(LAB), "-o", str(out_dir)], check=True,
                       env=env, capture_output=True, cwd=ROOT)
        outs.append({p.relative_to(out_dir): p.read_bytes() for p in out_dir.rglob("*") if p.is_file()})
    assert outs[0] == outs[1] and len(outs[0]) >= 3


def test_python_and_yaml_specs_render_identically(tmp_path):
    a, b = tmp_path / "py", tmp_path / "yaml"
    assert run("render", str(LAB.with_suffix(".py")), "-o", str(a))[0] == 0
    assert run("render", str(LAB), "-o", str(b))[0] == 0
    def files(root):
        return [(p.relative_to(root), p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]

    assert len(files(a)) > 40 and files(a) == files(b)


def test_schema_is_2020_12_and_accepts_the_bundled_specs_only():
    code, out = run("schema")
    schema = json.loads(out)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    validator = jsonschema.Draft202012Validator(schema)
    for spec in (LAB, REF24K):
        assert list(validator.iter_errors(yaml.safe_load(spec.read_text()))) == []
    bad = yaml.safe_load(LAB.read_text())
    bad["backend"]["mtuu"] = 1
    assert list(validator.iter_errors(bad))


def test_the_console_script_reports_without_a_traceback(tmp_path):
    spec = write_spec(tmp_path, "zones: [\n")
    teton = Path(sys.executable).with_name("teton")
    r = subprocess.run([str(teton), "render", str(spec)], capture_output=True, text=True)
    assert r.returncode == 2 and "Traceback" not in r.stderr + r.stdout and "YAML does not parse" in r.stderr
