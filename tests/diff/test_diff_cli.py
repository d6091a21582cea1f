"""`teton diff` from the command line on lab-sized specs: sides from files and from git, the three formats, exit codes,
and errors a user can act on (exit 2, no traceback)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import LAB, write_spec
from teton.cli import main


def teton(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture
def lab6(tmp_path: Path, lab_data: dict) -> tuple[dict, Path]:
    lab_data["racks_per_zone"] = 6
    lab_data["backend"]["addressing"]["ipv4"]["host_links"] = "10.64.0.0/22"
    lab_data["backend"]["ctsw"]["oversubscription"] = 3.0
    return lab_data, write_spec(tmp_path, lab_data, "lab6.yaml")


def test_nothing_changes_exit_0(tmp_path):
    copy = tmp_path / "lab.yaml"
    shutil.copy(LAB, copy)
    code, out, err = teton("diff", str(LAB), str(copy))
    assert code == 0, err
    assert "verdict: NONE" in out and "no device and no file changes" in out


def test_one_rack_is_low_exit_1_with_every_format(tmp_path, lab6):
    data, old = lab6
    data["racks"] = {"z02-r003": {"hosts": 1}}
    new = write_spec(tmp_path, data, "new.yaml")
    code, text, err = teton("diff", str(old), str(new))
    assert code == 1, err
    assert "verdict: LOW" in text and "=== rtsw · zone 2 · 1 device(s)" in text
    assert "# z02-r003-h2 (z02-r003): removed" in text
    code, js, _ = teton("diff", str(old), str(new), "--format", "json")
    data = json.loads(js)
    assert code == 1 and data["verdict"] == "low"
    assert data["devices_changed"] == ["z02-r003-frsw", "z02-r003-h2", "z02-r003-rtsw"]
    rtsw = next(d for d in data["devices"] if d["name"] == "z02-r003-rtsw")
    assert rtsw["files"] and all(f["removed"] > 0 for f in rtsw["files"])
    code, md, _ = teton("diff", str(old), str(new), "--format", "markdown", "-o", str(tmp_path / "c.md"))
    assert code == 1 and md == ""
    assert "**Verdict: 🟢 LOW**" in (tmp_path / "c.md").read_text()


def test_a_storage_rack_added_is_medium(tmp_path, lab_data):
    old = write_spec(tmp_path, lab_data, "old.yaml")
    assert lab_data["storage"], "the lab has storage racks"
    lab_data["storage"][-1]["racks"] += 1
    new = write_spec(tmp_path, lab_data, "new.yaml")
    code, js, err = teton("diff", str(old), str(new), "--format", "json")
    data = json.loads(js)
    assert code == 1, err
    assert data["verdict"] == "medium", data["reasons"]
    added = [d for d in data["devices"] if d["status"] == "added"]
    assert added and {d["role"] for d in added} == {"fe-rsw", "storage"}
    assert all(d["status"] in ("added", "changed") for d in data["devices"])


def test_a_qos_change_is_high_and_refused_unless_allowed(tmp_path, lab_data):
    old = write_spec(tmp_path, lab_data, "old.yaml")
    lab_data["backend"]["qos"]["roce_dscp"] = 24
    new = write_spec(tmp_path, lab_data, "new.yaml")
    code, out, err = teton("diff", str(old), str(new))
    assert code == 2 and "verdict: HIGH" in out and "refused" in err
    code, _, _ = teton("diff", str(old), str(new), "--allow-high")
    assert code == 1


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True)


def test_a_side_read_from_git_without_a_checkout(tmp_path, lab_data, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q")
    spec = write_spec(repo, lab_data, "cluster.yaml")
    git(repo, "add", "cluster.yaml")
    git(repo, "commit", "-q", "-m", "base")
    lab_data["backend"]["bgp"]["timers"]["hold"] = 9
    write_spec(repo, lab_data, "cluster.yaml")
    monkeypatch.chdir(repo)
    code, js, err = teton("diff", "HEAD:cluster.yaml", "cluster.yaml", "--format", "json", "--allow-high")
    assert code == 1, err
    data = json.loads(js)
    assert data["old"] == "HEAD:cluster.yaml" and data["devices_changed"]
    assert spec.read_text() != ""
    code, _, err = teton("diff", "no-such-ref:cluster.yaml", "cluster.yaml")
    assert code == 2 and "git show failed" in err and "Traceback" not in err


def test_a_broken_side_is_a_finding_naming_that_side(tmp_path, lab_data):
    old = write_spec(tmp_path, lab_data, "old.yaml")
    lab_data["zones"] = "two"
    bad = write_spec(tmp_path, lab_data, "bad.yaml")
    code, out, err = teton("diff", str(old), str(bad))
    assert code == 2 and str(bad) in err and "zones" in err and out == ""
    code, _, err = teton("diff", str(old), str(tmp_path / "missing.yaml"))
    assert code == 2 and "missing.yaml" in err


def test_the_cache_can_be_skipped(tmp_path):
    code, _, err = teton("diff", str(LAB), str(LAB), "--no-cache")
    assert code == 0 and "render cache" not in err
