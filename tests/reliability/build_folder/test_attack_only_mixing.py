"""Attacks on `render --only`: rendering one target of spec B onto a build of spec A must not publish a mixed build;
the build records which spec it came from, and a build assembled from several runs passes the cross-device checks of
`validate --rendered` before it is published.  Also: files a spec names are hashed for the render cache's record only
when that is bounded (regular, inside the spec's folder, not huge), never waiting on a FIFO."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import write_spec
from teton.cli import main
from teton.findings import SpecError
from teton.pipeline import build, render_spec, write
from teton.pipeline.record import spec_inputs
from teton.spec.load import load_spec


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def readdressed(lab_data: dict, name: str = "lab") -> dict:
    data = json.loads(json.dumps(lab_data))
    data["name"] = name
    data["backend"]["addressing"]["ipv4"]["fabric_links"] = "10.2.0.0/24"
    data["backend"]["addressing"]["ipv4"]["loopbacks"] = "10.3.0.0/24"
    return data


@pytest.mark.parametrize("name", ["other", "lab"])
def test_only_onto_a_build_of_another_spec_is_refused_and_writes_nothing(tmp_path, lab_data, name):
    a = write_spec(tmp_path, lab_data, "a.yaml")
    b = write_spec(tmp_path, readdressed(lab_data, name), "b.yaml")
    out = tmp_path / "build"
    assert CliRunner().invoke(main, ["render", str(a), "-o", str(out)]).exit_code == 0
    before = tree(out)
    r = CliRunner().invoke(main, ["render", str(b), "-o", str(out), "--only", "sonic"])
    assert r.exit_code == 2, r.output
    assert "--only" in r.stderr and "mixed build" in r.stderr
    assert tree(out) == before


def test_only_of_the_same_spec_still_keeps_the_others(tmp_path, lab_data):
    a = write_spec(tmp_path, lab_data, "a.yaml")
    out = tmp_path / "build"
    assert CliRunner().invoke(main, ["render", str(a), "-o", str(out)]).exit_code == 0
    before = tree(out)
    r = CliRunner().invoke(main, ["render", str(a), "-o", str(out), "--only", "sonic"])
    assert r.exit_code == 0, r.output
    assert tree(out) == before


def test_a_build_assembled_from_two_specs_fails_the_cross_device_checks_before_publishing(tmp_path, lab_data):
    """Even without a spec record to compare (a design-only build, a caller of `write`), the assembled build is
    checked: B's SONiC switches do not peer with A's EOS switches."""
    a = write_spec(tmp_path, lab_data, "a.yaml")
    b = write_spec(tmp_path, readdressed(lab_data), "b.yaml")
    out = build(a, tmp_path / "build").path
    before = tree(out)
    r = render_spec(b, only=("sonic",))
    with pytest.raises(SpecError) as err:
        write(out, r.files, r.figures, only=("sonic",))
    rules = {f.rule for f in err.value.findings}
    assert "only" in rules and len(err.value.findings) > 2
    assert tree(out) == before


def test_spec_inputs_are_bounded_regular_and_inside_the_spec_folder(tmp_path, lab_data):
    folder = tmp_path / "spec"
    folder.mkdir()
    spec = write_spec(folder, lab_data)
    cluster = load_spec(spec)
    (folder / "guids.txt").write_text("0x1\n")
    assert spec_inputs(cluster.model_copy(update={"site": "guids.txt"}), folder)[0][0] == "guids.txt"
    big = folder / "big.img"
    with open(big, "wb") as f:
        f.truncate(8 * 1024 ** 3)                                     # 8 GB, sparse
    fifo = folder / "pipe"
    os.mkfifo(fifo)
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    t0 = time.monotonic()
    assert spec_inputs(cluster.model_copy(update={"site": "big.img"}), folder) is None
    assert spec_inputs(cluster.model_copy(update={"site": "pipe"}), folder) == []
    assert spec_inputs(cluster.model_copy(update={"site": "/dev/zero"}), folder) == []
    assert spec_inputs(cluster.model_copy(update={"site": str(outside)}), folder) is None
    assert time.monotonic() - t0 < 2
