"""Attack: readers of a build folder without bounds.  `fabric.json` -> /dev/zero took `validate --rendered` to 22 GB
and an OOM kill; a 50 GB sparse artifact was a MemoryError traceback; an 883 MB fabric.json of duplicate devices was
"clean"; `twin up` copied what symlinks in a build point at (and `devices/loop -> ..` was a traceback); device names
with `..` in fabric.json made the provider read outside the build; `ib verify` on a 200 MB dump ran past 300 s at
7 GB, and a FIFO hung it.  Every reader goes through the BuildFolder (bounded, confined) and `ib verify` reads a
bounded regular file, record by record."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading

import pytest

from tests.helpers import LAB, ROOT
from teton.buildfolder import FABRIC_JSON, BuildFileError, BuildFolder
from teton.fabric.serialize import FabricFormatError
from teton.pipeline import build

TETON = ROOT / ".venv" / "bin" / "teton"
MEASURE = """
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)
took = time.monotonic() - t
print(r.returncode, round(took, 3), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stderr.write(r.stdout[-2000:] + r.stderr[-2000:])
"""


@pytest.fixture(scope="module")
def lab_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("build-folder-attack") / "build"
    build(LAB, out, force=True)
    return out


def _copy(lab_build, tmp_path):
    folder = tmp_path / "b"
    shutil.copytree(lab_build, folder)
    return folder


def _validate_rendered(folder):
    """(exit code, seconds, peak RSS in bytes) of `teton validate --rendered folder`, in a process of its own."""
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'infra'}:{ROOT}", "TETON_CACHE": "off"}
    res = subprocess.run([sys.executable, "-c", MEASURE, str(TETON), "validate", "--rendered", str(folder)],
                         capture_output=True, text=True, env=env, timeout=300, check=True)
    code, took, rss_kib = res.stdout.split()
    return int(code), float(took), int(rss_kib) * 1024, res.stderr


def _sparse(folder):
    with open(folder / "cabling.csv", "r+b") as f:
        f.truncate(50 * 1024**3)


def _dev_zero(folder):
    (folder / FABRIC_JSON).unlink()
    (folder / FABRIC_JSON).symlink_to("/dev/zero")


def _two_million_devices(folder):
    """fabric.json with 2,000,000 device records (short ones, so that the file fits the size cap and only the device
    bound can refuse it: written as teton writes, one record a line)."""
    text = (folder / FABRIC_JSON).read_text()
    head, rest = text.split('\n"devices":[\n', 1)
    first, tail = rest.split("\n],\n", 1)
    record = json.loads(first.split(",\n", 1)[0])
    short = {k: record[k] for k in ("name", "role", "nos", "zone", "rack", "mgmt")}
    lines = ",\n".join(json.dumps({**short, "name": f"d{n}"}, separators=(",", ":")) for n in range(2_000_000))
    (folder / FABRIC_JSON).write_text(f'{head}\n"devices":[\n{lines}\n],\n{tail}')
    assert (folder / FABRIC_JSON).stat().st_size > 100 * 1024**2


@pytest.mark.parametrize("attack", [_sparse, _dev_zero, _two_million_devices],
                         ids=["50GB-sparse-file", "dev-zero-link", "2M-device-fabric-json"])
def test_validate_rendered_refuses_an_unbounded_folder_fast_and_small(lab_build, tmp_path, attack):
    folder = _copy(lab_build, tmp_path)
    attack(folder)
    code, took, rss, said = _validate_rendered(folder)
    assert code == 2, said
    assert took < 5.0, f"took {took:.1f} s"
    assert rss < 500 * 1024**2, f"peak RSS {rss / 2**20:.0f} MiB"
    assert "Traceback" not in said and ("more than" in said or "leads out of the build folder" in said), said


def test_a_fabric_json_naming_too_many_devices_is_refused_before_it_is_parsed(lab_build, tmp_path):
    folder = _copy(lab_build, tmp_path)
    _two_million_devices(folder)
    with pytest.raises(BuildFileError, match="MAX_DEVICES"):
        BuildFolder(folder).fabric()
    with pytest.raises(BuildFileError, match="MAX_DEVICES"):
        BuildFolder(folder).placements()


def test_fabric_refuses_duplicate_devices(lab_build, tmp_path):
    """The 883 MB fabric.json of one device listed over and over read as a clean Fabric (the last record won)."""
    folder = _copy(lab_build, tmp_path)
    data = json.loads((folder / FABRIC_JSON).read_text())
    data["devices"].append(dict(data["devices"][0]))
    (folder / FABRIC_JSON).write_text(json.dumps(data))
    with pytest.raises(FabricFormatError, match="listed twice"):
        BuildFolder(folder).fabric()


def test_fabric_refuses_a_device_name_that_is_a_path(lab_build, tmp_path):
    """A name with `..` became devices/<name>/ for the provider's read-back (a private key showed up among a
    Switch's inputs): the Fabric of a build is refused before any of its names becomes a path."""
    folder = _copy(lab_build, tmp_path)
    text = (folder / FABRIC_JSON).read_text()
    victim = json.loads(text)["devices"][-1]["name"]
    (folder / FABRIC_JSON).write_text(text.replace(f'"{victim}"', '"../../../../etc"'))
    with pytest.raises(BuildFileError, match="is not a name"):
        BuildFolder(folder).fabric()


def _renamed_build(tmp_path, name):
    import yaml

    data = yaml.safe_load(LAB.read_text())
    data["name"] = name
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    out = tmp_path / "b"
    build(spec, out, force=True)
    return out


@pytest.mark.parametrize("link", ["file-out", "folder-loop"])
def test_twin_up_refuses_a_symlink_in_the_build(tmp_path, link):
    """`twin up` copied the files symlinks pointed at into its snapshot; `devices/loop -> ..` was a traceback.  It
    reads the build through the BuildFolder: refused, one line, nothing copied and no state left."""
    from teton.findings import TetonError
    from teton.twin import service

    name = f"mba{link[:4].replace('-', '')}"
    folder = _renamed_build(tmp_path, name)
    (tmp_path / "private.key").write_text("PRIVATE KEY")
    if link == "file-out":
        (folder / "cabling.csv").unlink()
        (folder / "cabling.csv").symlink_to(tmp_path / "private.key")
        said = "leads out of the build folder"
    else:
        (folder / "devices" / "loop").symlink_to("..")
        said = "is a symlink to a folder"
    with pytest.raises(TetonError, match=said) as err:
        service.up(str(folder))
    assert "PRIVATE KEY" not in str(err.value)
    assert not service.state_dir(service.twin_name(str(folder))).exists()


def test_cli_twin_up_of_a_looped_build_is_one_line(tmp_path):
    from click.testing import CliRunner

    from teton.cli import main

    folder = _renamed_build(tmp_path, "mbacli")
    (folder / "devices" / "loop").symlink_to("..")
    result = CliRunner().invoke(main, ["twin", "up", str(folder)])
    assert result.exit_code != 0 and "is a symlink to a folder" in result.output, result.output
    assert "Traceback" not in result.output and not isinstance(result.exception, RecursionError)


# ------------------------------------------------------------------------------------------------------ ib verify

@pytest.fixture
def ib_fabric(lab_ib_fabric):
    return lab_ib_fabric


def test_ib_verify_does_not_hang_on_a_fifo(tmp_path, ib_fabric):
    from teton.findings import SpecError
    from teton.targets.opensm.verify import verify_dump

    fifo = tmp_path / "dump"
    os.mkfifo(fifo)
    done: list[BaseException] = []

    def run():
        try:
            verify_dump(ib_fabric, fifo)
        except BaseException as exc:  # noqa: BLE001
            done.append(exc)

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(10)
    if t.is_alive():
        open(fifo, "wb").close()     # release the reader, then fail
        pytest.fail("ib verify hung on a FIFO")
    assert done and isinstance(done[0], SpecError) and "not a regular file" in str(done[0].findings[0])


def test_ib_verify_refuses_a_200mb_dump_by_its_size(tmp_path, ib_fabric):
    from teton.findings import SpecError
    from teton.targets.opensm.verify import verify_dump

    dump = tmp_path / "dump"
    with open(dump, "wb") as f:
        f.truncate(200 * 1024**2)
    with pytest.raises(SpecError, match="larger than"):
        verify_dump(ib_fabric, dump)


def test_ib_verify_stops_reading_a_dump_far_bigger_than_the_design(tmp_path, ib_fabric):
    """Within the size cap, a dump of many more nodes or port lines than the design has is refused while it is read
    (record by record), before its records take memory."""
    import time

    from teton.findings import SpecError
    from teton.targets.opensm.verify import verify_dump

    nodes = tmp_path / "nodes"
    nodes.write_text("".join(f'switchguid=0x{n:016x}\nSwitch\t64 "S-{n:016x}"\n\n' for n in range(1, 400_000)))
    ports = tmp_path / "ports"
    ports.write_text('switchguid=0x0000000000000001\nSwitch\t64 "S-0000000000000001"\n' +
                     "".join(f'[{n}]\t"H-{n:016x}"[1]\n' for n in range(1, 1_000_000)))
    for dump, said in ((nodes, "node records"), (ports, "port lines")):
        t = time.monotonic()
        with pytest.raises(SpecError, match=f"more than [0-9]+ {said}"):
            verify_dump(ib_fabric, dump)
        assert time.monotonic() - t < 30
