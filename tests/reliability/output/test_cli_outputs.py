"""Careless and hostile use of the commands around the build folder: each case exits with its code and message, no
traceback, and nothing a user had is lost."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import LAB, ROOT, write_spec
from teton.cli import main


def cli(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), env=env)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output
    return result.exit_code, result.output


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


# ----------------------------------------------------------------------------------------------- the output folder


def test_render_into_a_folder_that_is_not_a_build_keeps_its_files(tmp_path):
    home = tmp_path / "notes"
    home.mkdir()
    (home / "todo.txt").write_text("buy optics\n")
    (home / "sub").mkdir()
    (home / "sub" / "x.bin").write_bytes(b"\0\1\2")
    before = files(home)
    code, out = cli("render", str(LAB), "-o", str(home))
    assert code == 2 and "is not a teton build" in out and "--force" in out
    assert files(home) == before


def test_force_replaces_a_folder_that_is_not_a_build(tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    (other / "old.txt").write_text("x")
    assert cli("render", str(LAB), "-o", str(other), "--force")[0] == 0
    assert not (other / "old.txt").exists() and (other / "manifest.json").is_file()


@pytest.mark.parametrize("where", [".", "/", "~"])
def test_render_refuses_the_current_folder_the_root_and_home(tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    target = str(tmp_path) if where == "~" else where
    code, out = cli("render", str(LAB), "-o", target, "--force")
    assert code == 2 and "refus" in out.lower()
    assert os.listdir(tmp_path) == []


def test_render_under_a_parent_that_is_a_file(tmp_path):
    (tmp_path / "afile").write_text("x")
    code, out = cli("render", str(LAB), "-o", str(tmp_path / "afile" / "build"))
    assert code == 2 and "afile" in out and "not a folder" in out


def test_only_eos_keeps_the_other_targets_files(tmp_path):
    out = tmp_path / "b"
    assert cli("render", str(LAB), "-o", str(out))[0] == 0
    before = files(out)
    owners = {e["target"] for e in json.loads(before["manifest.json"])["files"].values()}
    assert {"eos", "sonic", "ansible", "slurm"} <= owners
    code, text = cli("render", str(LAB), "-o", str(out), "--only", "eos", "--json")
    assert code == 0 and json.loads(text.strip().splitlines()[-1])["kept"] == sorted(owners - {"eos"})
    after = files(out)
    assert set(after) == set(before)
    assert {k for k in after if after[k] != before[k]} <= {"manifest.json"}


def test_a_symlinked_output_folder_stays_a_symlink(tmp_path):
    real = tmp_path / "real"
    assert cli("render", str(LAB), "-o", str(real))[0] == 0
    link = tmp_path / "link"
    link.symlink_to(real)
    assert cli("render", str(LAB), "-o", str(link))[0] == 0
    assert link.is_symlink() and (real / "manifest.json").is_file()


@pytest.mark.root("mounting a read-only file system")
def test_render_onto_a_read_only_file_system(tmp_path):
    mnt = tmp_path / "ro"
    mnt.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,ro", "tmpfs", str(mnt)], check=True)
    try:
        code, out = cli("render", str(LAB), "-o", str(mnt / "build"))
        assert code == 2 and "read-only" in out
    finally:
        subprocess.run(["umount", str(mnt)], check=True)


def test_workers_die_with_a_killed_render(tmp_path):
    """A killed `teton render` leaves no worker process behind (they used to outlive it by ~15 s)."""
    data = yaml.safe_load(LAB.read_text())
    data.update(zones=4, racks_per_zone=40)              # 160 SONiC rack switches: two workers
    data["backend"]["atsw"]["count"] = 2
    data["backend"]["ctsw"]["oversubscription"] = 20.0   # 40 racks down, 2 ATSWs up
    data["storage"][1]["client_gbps"] = 1                # 160 hosts per NFS server: a light load (rule storage-load)
    data["backend"]["addressing"]["ipv4"].update(loopbacks="10.0.0.0/22", fabric_links="10.4.0.0/20",
                                                 host_links="10.64.0.0/18")
    data["frontend"]["addressing"]["ipv4"].update(loopbacks="10.128.0.0/22", fabric_links="10.132.0.0/20",
                                                  host_links="10.192.0.0/16")
    data["management"].update(network="10.240.0.0/20", gateway="10.240.0.1")
    data["management"]["prefixes"][0] = "10.240.0.0/20"
    spec = write_spec(tmp_path, data)
    env = dict(os.environ, TETON_WORKERS="2")
    proc = subprocess.Popen([sys.executable, "-m", "teton.cli", "render", str(spec), "-o", str(tmp_path / "b")],
                            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        workers: list[int] = []
        while time.monotonic() < deadline and not workers:
            workers = _children(proc.pid)
            time.sleep(0.05)
        assert workers, "the render never forked its workers"
        time.sleep(0.3)                                   # they are busy with their chunks (~2 s each)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 0.5
        while time.monotonic() < deadline and any(_alive(p) for p in workers):
            time.sleep(0.05)
        assert not any(_alive(p) for p in workers)
    finally:
        proc.kill()


def _children(pid: int) -> list[int]:
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(x) for x in text.split()]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


# ------------------------------------------------------------------------------------------------------- settings


def test_workers_setting_that_is_not_a_number(tmp_path):
    code, out = cli("render", str(LAB), "-o", str(tmp_path / "b"), env={"TETON_WORKERS": "abc"})
    assert code == 2 and "TETON_WORKERS='abc'" in out


def test_yang_dir_that_is_empty(tmp_path):
    empty = tmp_path / "models"
    empty.mkdir()
    code, out = cli("render", str(LAB), "-o", str(tmp_path / "b"), "--yang-dir", str(empty))
    assert code == 2 and "holds no .yang files" in out and not (tmp_path / "b").exists()


# ------------------------------------------------------------------------------------------ validate --rendered


@pytest.fixture
def build(lab_build, tmp_path):
    out = tmp_path / "lab"
    shutil.copytree(lab_build, out)
    return out


def _rendered(build: Path) -> tuple[int, list[dict]]:
    code, out = cli("validate", "--rendered", str(build), "--json")
    return code, json.loads(out[:out.rindex("}") + 1])["findings"]


def test_a_corrupt_host_file_is_a_finding(build):
    (build / "hosts/backend.json").write_text('{"qos": {"pfc_priorities": [3]}, "nics": [tru')
    code, found = _rendered(build)
    assert code == 2 and any(f["file"] == "hosts/backend.json" and f["rule"] == "io" for f in found)


def test_every_file_corrupt_at_once_never_raises(build):
    for p in build.rglob("*"):
        if p.is_file() and p.name != "manifest.json":
            p.write_bytes(b"\xff\xfe garbage {[")
    code, found = _rendered(build)
    assert code == 2 and {f["rule"] for f in found} >= {"io", "manifest"}


def test_a_hand_edit_is_caught_by_the_manifest(build):
    path = build / "devices/z01-r001-rtsw/frr.conf"
    path.write_text(path.read_text().replace("maximum-paths 4", "maximum-paths 8"))
    code, found = _rendered(build)
    assert code == 2 and {(f["file"], f["rule"]) for f in found} == {("devices/z01-r001-rtsw/frr.conf", "manifest")}


def test_a_startup_config_that_is_not_its_structured_config(build):
    path = build / "devices/z01-ctsw01/startup-config"
    path.write_text(path.read_text().replace("maximum-paths 2 ecmp 2", "maximum-paths 64 ecmp 64"))
    code, found = _rendered(build)
    rules = {(f["file"], f["rule"]) for f in found}
    assert code == 2 and ("devices/z01-ctsw01/startup-config", "startup-config") in rules
    assert any("maximum-paths 64" in f["message"] for f in found if f["rule"] == "startup-config")


@pytest.mark.parametrize("rel,old,new", [
    ("devices/z01-r001-rtsw/frr.conf", "password TETON_SECRET_bgp_backend", "password hunter2"),
    ("devices/z01-ctsw01/startup-config", "key 7 TETON_SECRET_aaa_key", "key 7 070C285F4D06"),
    ("devices/z01-r001-rtsw/config_db.json", '"passkey": "TETON_SECRET_aaa_key"', '"passkey": "s3cr3t"'),
])
def test_a_plaintext_secret_anywhere_is_found(build, rel, old, new):
    path = build / rel
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    code, found = _rendered(build)
    secret = [f for f in found if f["rule"] == "plaintext-secret"]
    assert code == 2 and [f["file"] for f in secret] == [rel]
    assert all(new.split()[-1].strip('"') not in f["message"] for f in secret)   # never printed


def test_roce_dscp_on_a_lossy_class_is_caught_in_the_files(build):
    """RoCE's DSCP moved to the CNP class on one switch: the cross-device QoS rules see it."""
    path = build / "devices/z01-r001-rtsw/config_db.json"
    db = json.loads(path.read_text())
    db["DSCP_TO_TC_MAP"]["ROCE"]["26"] = "6"
    path.write_text(json.dumps(db))
    code, found = _rendered(build)
    assert code == 2 and any(f["rule"] == "qos-lossless" and "DSCP 26" in f["message"] for f in found)


def test_a_folder_that_is_no_build(tmp_path):
    code, found = _rendered(tmp_path)
    assert code == 2 and {f["rule"] for f in found} == {"manifest", "io"}


def test_only_never_follows_a_hand_made_manifest_outside_the_build(tmp_path):
    out = tmp_path / "b"
    assert cli("render", str(LAB), "-o", str(out))[0] == 0
    manifest = json.loads((out / "manifest.json").read_text())
    secret = tmp_path / "outside.txt"
    secret.write_text("not yours")
    manifest["files"]["../outside.txt"] = {"sha256": "0", "bytes": 9, "target": "someone"}
    manifest["files"]["/etc/hostname"] = {"sha256": "0", "bytes": 9, "target": "someone"}
    (out / "manifest.json").write_text(json.dumps(manifest))
    assert cli("render", str(LAB), "-o", str(out), "--only", "eos")[0] == 0
    written = json.loads((out / "manifest.json").read_text())["files"]
    assert "../outside.txt" not in written and "/etc/hostname" not in written
    assert sorted(p.name for p in tmp_path.iterdir()) == [".b.lock", "b", "outside.txt"]
