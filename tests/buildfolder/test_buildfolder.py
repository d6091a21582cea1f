"""`teton.buildfolder`: the one reader of a build folder, on disk and in memory, and the layout the targets write."""

from __future__ import annotations

import json
import shutil

import pytest

from teton.buildfolder import (
    FABRIC_JSON,
    BuildFileError,
    BuildFolder,
    device_dir,
    device_of,
    device_path,
    host_vars_path,
    is_device_file,
)
from teton.findings import TetonError
from teton.manifest import MANIFEST


def test_the_layout_names_a_device_and_its_files_both_ways():
    rel = device_path("z01-r001-rtsw", "frr.conf")
    assert rel.startswith(device_dir("z01-r001-rtsw") + "/")
    assert is_device_file(rel) and device_of(rel) == "z01-r001-rtsw"
    assert not is_device_file(FABRIC_JSON) and device_of(FABRIC_JSON) is None
    assert device_of(host_vars_path("z01-r001-h1")) is None


def test_every_file_the_build_holds_is_in_its_layout(lab_build):
    folder = BuildFolder.open(lab_build)
    paths = folder.paths()
    assert MANIFEST in paths and FABRIC_JSON in paths
    assert set(folder.manifest()["files"]) == set(paths) - {MANIFEST}
    fabric = folder.fabric()
    for sw in fabric.switches("sonic"):
        assert set(folder.device_files(sw.name)) == {"config_db.json", "frr.conf"}
    hosts = [d.name for d in fabric.devices.values() if d.role == "host"]
    assert set(folder.host_vars(hosts)) == {host_vars_path(h) for h in hosts}


def test_the_fabric_is_read_once_and_agrees_with_the_raw_records(lab_build, lab_fabric):
    folder = BuildFolder(lab_build)
    assert folder.fabric() is folder.fabric()
    assert folder.cluster() == lab_fabric.name
    placed = {p.name: p for p in folder.placements()}
    assert placed.keys() == lab_fabric.devices.keys()
    for name, d in lab_fabric.devices.items():
        p = placed[name]
        assert (p.role, p.nos, p.zone, p.rack) == (d.role, d.nos, d.zone, d.rack)


def test_a_render_in_memory_reads_as_the_folder_does(lab_build):
    on_disk = BuildFolder(lab_build)
    in_memory = BuildFolder(files={rel: on_disk.text(rel) for rel in on_disk.paths()})
    assert in_memory.paths() == on_disk.paths()
    assert in_memory.manifest() == on_disk.manifest()
    assert in_memory.cluster() == on_disk.cluster()
    sw = on_disk.fabric().switches()[0].name
    assert in_memory.device_files(sw) == on_disk.device_files(sw)


def test_a_folder_without_a_manifest_is_no_build(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    (tmp_path / "b" / MANIFEST).unlink()
    with pytest.raises(TetonError, match="is not a teton build folder"):
        BuildFolder.open(tmp_path / "b")


def test_missing_and_broken_files_are_errors_naming_the_file(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    folder = BuildFolder(tmp_path / "b")
    with pytest.raises(BuildFileError, match="is missing: the build has no files for nosuch") as missing:
        folder.device_files("nosuch")
    assert missing.value.path == device_dir("nosuch")
    (tmp_path / "b" / FABRIC_JSON).write_text(json.dumps({"fabric": {"format": -1}}))
    with pytest.raises(BuildFileError, match="is format -1") as old:
        BuildFolder(tmp_path / "b").placements()
    assert old.value.path == FABRIC_JSON
    (tmp_path / "b" / FABRIC_JSON).write_bytes(b"\xff\xfe")
    with pytest.raises(BuildFileError, match="cannot be read"):
        BuildFolder(tmp_path / "b").cluster()


def test_hidden_files_are_left_out_only_when_asked(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    (tmp_path / "b" / ".gitkeep").write_text("")
    (tmp_path / "b" / ".git").mkdir()
    (tmp_path / "b" / ".git" / "HEAD").write_text("ref")
    folder = BuildFolder(tmp_path / "b")
    assert ".gitkeep" in folder.paths() and ".git/HEAD" in folder.paths()
    assert not [p for p in folder.paths(hidden=False) if p.startswith(".")]


# --------------------------------------------------------------------------------- bounds (what a hostile folder tries)

def test_a_symlink_leading_out_of_the_folder_is_not_followed(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    (tmp_path / "secret").write_text("private key")
    (tmp_path / "b" / FABRIC_JSON).unlink()
    (tmp_path / "b" / FABRIC_JSON).symlink_to(tmp_path / "secret")
    with pytest.raises(BuildFileError, match="leads out of the build folder") as exc:
        BuildFolder(tmp_path / "b").fabric()
    assert "private key" not in str(exc.value)


def test_a_device_folder_linked_to_the_build_itself_is_refused(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    (tmp_path / "b" / "devices" / "loop").symlink_to("..")
    with pytest.raises(BuildFileError, match="through a symlink"):
        BuildFolder(tmp_path / "b").device_files("loop")


def test_dev_zero_as_fabric_json_is_refused_without_reading_it(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    (tmp_path / "b" / FABRIC_JSON).unlink()
    (tmp_path / "b" / FABRIC_JSON).symlink_to("/dev/zero")
    with pytest.raises(BuildFileError, match="leads out of the build folder"):
        BuildFolder(tmp_path / "b").fabric()


def test_a_fifo_in_the_folder_does_not_hang_the_reader(tmp_path, lab_build):
    import os

    shutil.copytree(lab_build, tmp_path / "b")
    os.mkfifo(tmp_path / "b" / "cabling.csv.fifo")
    with pytest.raises(BuildFileError, match="not a regular file"):
        BuildFolder(tmp_path / "b").bytes("cabling.csv.fifo")


def test_a_huge_sparse_file_is_refused_by_its_size(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    with open(tmp_path / "b" / "cabling.csv", "r+b") as f:
        f.truncate(50 * 1024**3)
    with pytest.raises(BuildFileError, match="more than a reader reads"):
        BuildFolder(tmp_path / "b").bytes("cabling.csv")
    with pytest.raises(BuildFileError, match="holds more than"):
        BuildFolder(tmp_path / "b").paths()


@pytest.mark.parametrize("rel", ["../outside", "/etc/passwd", "devices/../fabric.json", "a//b", ""])
def test_a_path_that_is_not_inside_the_folder_is_refused(lab_build, rel):
    with pytest.raises(BuildFileError, match="not a path inside"):
        BuildFolder(lab_build).bytes(rel)


@pytest.mark.parametrize("name", ["..", ".", "a/b", "../../etc", "x\ny", ""])
def test_a_device_name_that_is_a_path_never_becomes_one(name):
    with pytest.raises(BuildFileError, match="is not a name"):
        device_dir(name)


def test_duplicate_or_path_like_device_names_in_fabric_json_are_refused(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    data = json.loads((tmp_path / "b" / FABRIC_JSON).read_text())
    data["devices"].append(dict(data["devices"][0]))
    (tmp_path / "b" / FABRIC_JSON).write_text(json.dumps(data))
    with pytest.raises(BuildFileError, match="listed twice"):
        BuildFolder(tmp_path / "b").placements()
    data["devices"][-1]["name"] = "../../etc"
    (tmp_path / "b" / FABRIC_JSON).write_text(json.dumps(data))
    with pytest.raises(BuildFileError, match="is not a name"):
        BuildFolder(tmp_path / "b").placements()
