"""Attacks through backend.guid_map: it is read as a bounded regular file inside the spec's folder, and none of its
content appears in an error."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from tests.helpers import INVENTORY
from teton.design.guids import read_guid_map


def test_guid_map_reading_proc_self_environ_never_echoes_it(tmp_path, monkeypatch):
    monkeypatch.setenv("TETON_SECRET_bgp_backend", "hunter2-env")
    link = tmp_path / "guids.map"
    link.symlink_to("/proc/self/environ")
    gm = read_guid_map(link, root=tmp_path)
    assert gm.problems and not gm.nodes
    assert all("hunter2" not in msg and "TETON_SECRET" not in msg for _, msg in gm.problems)
    assert "outside the spec's folder" in gm.problems[0][1]


def test_guid_map_of_hash_lines_shows_line_numbers_only(tmp_path):
    (tmp_path / "guids.map").write_text("root:$6$abc$secrethash:19000:0:99999:7:::\n"
                                        'user:$6$def$otherhash "x":19000\n')
    gm = read_guid_map(tmp_path / "guids.map", root=tmp_path)
    assert [line for line, _ in gm.problems] == [1, 2]
    assert all("hash" not in msg and "root" not in msg for _, msg in gm.problems)


def test_guid_map_fifo_does_not_hang(tmp_path):
    os.mkfifo(tmp_path / "guids.map")
    gm = read_guid_map(tmp_path / "guids.map", root=tmp_path)
    assert gm.problems == ((None, "cannot be read: it is not a regular file"),)


def test_guid_map_symlink_out_of_the_spec_folder_is_refused(tmp_path):
    outside = tmp_path / "outside.map"
    outside.write_text('0x0c42a10300000001 "spine01"\n')
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "guids.map").symlink_to(outside)
    gm = read_guid_map(tmp_path / "spec" / "guids.map", root=tmp_path / "spec")
    assert not gm.nodes and "outside the spec's folder" in gm.problems[0][1]


def test_validate_of_a_spec_whose_guid_map_is_shadow_like(tmp_path):
    from click.testing import CliRunner

    from teton.cli import main
    d = yaml.safe_load((INVENTORY / "lab-ib.yaml").read_text())
    (tmp_path / "g.map").write_text("root:$6$abc$topsecret:19000\n")
    d["backend"]["guid_map"] = "g.map"
    spec = Path(tmp_path / "spec.yaml")
    spec.write_text(yaml.safe_dump(d))
    r = CliRunner().invoke(main, ["validate", str(spec)])
    assert r.exit_code == 2 and "topsecret" not in r.output and "guid-map" in r.output
