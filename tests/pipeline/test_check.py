"""`teton render --check DIR`: a folder of committed intended configs is compared with what the spec renders; stale
files are listed (differs, missing, extra) and the command exits 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from tests.helpers import write_spec
from teton.cli import main
from teton.pipeline import build


def check(spec: Path, folder: Path, *more: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, ["render", str(spec), "--check", str(folder), *more])
    return r.exit_code, r.stdout, r.stderr


def test_an_up_to_date_folder_passes_and_a_stale_one_lists_every_stale_file(tmp_path, lab_data):
    spec = write_spec(tmp_path, lab_data)
    committed = tmp_path / "intended"
    shutil.copytree(build(spec, tmp_path / "build").path, committed)
    (committed / ".gitkeep").write_text("")                  # hidden files are not compared
    code, out, err = check(spec, committed)
    assert code == 0, err
    assert out == "" and "up to date" in err

    sonic = sorted(committed.glob("devices/*/config_db.json"))[0]
    sonic.write_text(sonic.read_text().replace('"mtu": "9100"', '"mtu": "9000"', 1))
    eos = sorted(committed.glob("devices/*/startup-config"))[0]
    eos.unlink()
    (committed / "devices" / "old-switch").mkdir()
    (committed / "devices" / "old-switch" / "frr.conf").write_text("hostname old-switch\n")
    code, out, err = check(spec, committed)
    assert code == 1
    rows = [line.split() for line in out.splitlines()]
    assert ["differs", str(sonic.relative_to(committed))] in rows
    assert ["missing", str(eos.relative_to(committed))] in rows
    assert ["extra", "devices/old-switch/frr.conf"] in rows
    assert len(rows) == 3 and "3 stale" in err


def test_a_spec_change_makes_the_committed_folder_stale(tmp_path, lab_data):
    spec = write_spec(tmp_path, lab_data)
    committed = build(spec, tmp_path / "intended").path
    lab_data["backend"]["bgp"]["timers"]["hold"] = 9
    write_spec(tmp_path, lab_data)
    r = CliRunner().invoke(main, ["render", str(spec), "--check", str(committed), "--json"])
    assert r.exit_code == 1
    data = json.loads(r.stdout)
    stale = {s["path"] for s in data["stale"]}
    assert not data["ok"] and "manifest.json" in stale and "fabric.json" in stale
    assert any(p.endswith("frr.conf") or p.endswith("startup-config") for p in stale)
    assert all(s["why"] == "differs" for s in data["stale"])


def test_check_takes_a_folder_and_writes_nothing(tmp_path, lab_data):
    spec = write_spec(tmp_path, lab_data)
    code, _, err = check(spec, tmp_path / "nothing-here")
    assert code == 2 and "not a folder" in err
    assert not (tmp_path / "nothing-here").exists()
    code, _, err = check(spec, tmp_path, "--only", "sonic")
    assert code == 2 and "--check compares a whole build" in err
