"""Vendor reference data is declared by its target and found by one lookup; the render cache's key reads the folders
through those declarations."""

from __future__ import annotations

from pathlib import Path

import pytest

from teton import environment
from teton.findings import TetonError
from teton.pipeline.cache import render_settings
from teton.targets import RenderContext, get, reference_folders, targets
from teton.targets.reference import ReferenceData


def _marked(folder: Path) -> bool:
    return (folder / "marker").is_file()


DATA = ReferenceData(name="demo", label="Demo files", env="TETON_KUEUE_DIR", option="--demo-dir",
                     shared_subdir="no-such-demo", usable=_marked, lacks="has no marker", inside=("sub", ""))


def test_each_target_declares_its_reference_data_with_a_declared_variable():
    declared = {t.name: sorted(r.name for r in t.reference) for t in targets() if t.reference}
    assert declared == {"fboss": ["fboss"], "kubernetes": ["kueue"], "sonic": ["sonic-yang-models"]}
    for t in targets():
        for r in t.reference:
            assert environment.declared(r.env) and "shared" in r.shared.parts


def test_the_lookup_takes_the_given_folder_then_the_variable_then_the_shared_then_the_fetched(tmp_path, monkeypatch):
    monkeypatch.delenv(DATA.env, raising=False)
    good = tmp_path / "good"
    (good / "sub").mkdir(parents=True)
    (good / "sub" / "marker").write_text("")
    assert DATA.find(good) == good / "sub" and DATA.locate(tmp_path) is None
    with pytest.raises(TetonError, match=r"^Demo files: .*empty is not a folder \(from --demo-dir\)$"):
        DATA.find(tmp_path / "empty")
    monkeypatch.setenv(DATA.env, str(tmp_path))
    with pytest.raises(TetonError, match=rf"has no marker \(from {DATA.env}\)"):
        DATA.find()
    monkeypatch.delenv(DATA.env)
    assert DATA.find(shared=tmp_path / "none", cached=good) == good / "sub"
    with pytest.raises(TetonError, match=r"Demo files not found: give --demo-dir DIR \(or TETON_KUEUE_DIR\), or place "
                                         r"it beside the repository \(.*no-such-demo\)$"):
        DATA.find()


def test_the_cache_key_holds_the_folders_each_target_declares(tmp_path, monkeypatch):
    for t in targets():
        for r in t.reference:
            monkeypatch.delenv(r.env, raising=False)
    given = RenderContext(folders=reference_folders({"--yang-dir": tmp_path, "--fboss-dir": None}))
    assert given.folders == {"sonic-yang-models": tmp_path}
    sonic, eos = get("sonic"), get("eos")
    assert render_settings(given, [sonic]) != render_settings(RenderContext(), [sonic])
    assert render_settings(given, [eos]) == render_settings(RenderContext(), [eos])
    monkeypatch.setenv("TETON_FBOSS_DIR", str(tmp_path))
    assert render_settings(RenderContext(), [get("fboss")])[1] == {"fboss": str(tmp_path.resolve())}
    assert render_settings(RenderContext(), [sonic]) == [True, {}]
    with pytest.raises(KeyError, match="--no-such-dir"):
        reference_folders({"--no-such-dir": tmp_path})
