"""A whole build's files are written while it renders (`teton.pipeline.write_rendering`): the folder is the one the
render-then-write path publishes, byte for byte, and what the render hands over early is only a draft (a path given
again, a file dropped, a path leading out, a render that fails half-way) that never reaches the published folder."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import write_spec
from teton.findings import SpecError
from teton.pipeline import Rendered, build, render_spec, spec_source, staging, write, write_rendering
from teton.pipeline.output import OutputError
from teton.targets import schedule
from teton.targets.base import RenderContext, Staged, Target


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _calls(monkeypatch: pytest.MonkeyPatch, method: str) -> list[tuple[str, Any]]:
    """(target, what it was given) of every call of `Stager.<method>` from now on; the method still runs."""
    calls: list[tuple[str, Any]] = []
    real = getattr(staging.Stager, method)

    def recorded(self: staging.Stager, target: str, given: Any) -> None:
        calls.append((target, given))
        real(self, target, given)

    monkeypatch.setattr(staging.Stager, method, recorded)
    return calls


@pytest.mark.parametrize("forked", [False, True], ids=["in-place", "forked-pool"])
def test_a_build_written_while_it_renders_is_the_folder_written_after(tmp_path, lab_data, monkeypatch, forked):
    """`build` streams; `render_spec` + `write` is the reference path.  Forked: the lab's tasks run in the forked
    pool (its cost estimate forced over the threshold), so files arrive as tasks end, in any order, and the workers
    write their own; in place (forced under it), the parent writes every file."""
    monkeypatch.setattr(schedule, "MIN_FORK_COST", 0.0 if forked else float("inf"))
    spec = write_spec(tmp_path, lab_data)
    arrived = _calls(monkeypatch, "put")
    took = _calls(monkeypatch, "took")
    streamed = build(spec, tmp_path / "streamed")
    written = [rel for _, staged in took for rel in staged]
    assert len(arrived) > 5, "the render handed its tasks' files over as they ended"
    # forked, the workers wrote every file but those the targets' `finish` adds in the parent (SONiC's per-SKU files,
    # ANTA's inventory), the EOS switches' catalogs included (made in the workers, only their paths come back)
    manifest = json.loads((streamed.path / "manifest.json").read_text())["files"]
    assert any(rel.startswith("anta/") for rel in written) == forked
    assert sorted(written) == (sorted(rel for rel in manifest
                                      if not rel.startswith("sku/") and rel != "anta/inventory.yml") if forked else [])
    r = render_spec(spec)
    count, _ = write(tmp_path / "after", r.files, r.figures, source=spec_source(r.cluster))
    assert _tree(streamed.path) == _tree(tmp_path / "after")
    assert streamed.files == count == len(_tree(streamed.path))


def _fake(files: dict[str, dict[str, str]]) -> Rendered:
    return Rendered(cluster=None, fabric=None, files=files, figures={"switches": 1},  # type: ignore[arg-type]
                    warnings=[])


def test_drafts_handed_over_early_are_settled_by_the_final_files(tmp_path):
    """A path handed over twice with other content, a file handed over and then dropped, a path two targets give:
    the folder holds exactly the final files (the later target's), the manifest their hashes."""
    final = {"sonic": {"devices/a/config_db.json": "final a\n", "devices/b/config_db.json": "b\n",
                       "shared.txt": "sonic's\n"},
             "eos": {"devices/c/startup-config": "c\n", "shared.txt": "eos's\n"}}

    def produce(sink):
        sink("sonic", {"devices/a/config_db.json": "draft a\n", "devices/gone/config_db.json": "dropped\n"})
        sink("sonic", {"devices/a/config_db.json": "second draft a\n"})
        sink("eos", {"shared.txt": "eos's draft\n"})
        sink("sonic", {"devices/b/config_db.json": final["sonic"]["devices/b/config_db.json"]})
        return _fake(final)

    out = tmp_path / "out"
    count, _ = write_rendering(out, produce)
    tree = _tree(out)
    manifest = json.loads(tree.pop("manifest.json"))
    assert tree == {"devices/a/config_db.json": b"final a\n", "devices/b/config_db.json": b"b\n",
                    "devices/c/startup-config": b"c\n", "shared.txt": b"eos's\n"}
    assert not (out / "devices" / "gone" / "config_db.json").exists()
    assert manifest["files"]["shared.txt"]["target"] == "eos"
    assert count == 5


def test_a_failed_or_refused_render_leaves_the_previous_build_and_no_staging(tmp_path):
    """Files handed over before the render fails (a SpecError) or before a path that leads out is handed over are
    in the staging folder only: the previous build stays as it was and the staging folder is removed."""
    out = tmp_path / "out"
    write_rendering(out, lambda sink: _fake({"sonic": {"devices/a/config_db.json": "old\n"}}))
    before = _tree(out)

    def fails(sink):
        sink("sonic", {"devices/a/config_db.json": "new\n", "devices/b/config_db.json": "new\n"})
        raise SpecError([])

    with pytest.raises(SpecError):
        write_rendering(out, fails)
    assert _tree(out) == before

    def leads_out(sink):
        sink("sonic", {"devices/a/config_db.json": "new\n"})
        sink("sonic", {"../outside": "x\n"})
        return _fake({})

    with pytest.raises(OutputError, match="not a path inside the build folder"):
        write_rendering(out, leads_out)
    assert _tree(out) == before
    assert not (tmp_path / "outside").exists()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != "out") == [".out.lock"]


class _Fake(Target):
    name = "fake"


def test_a_worker_writes_only_inside_the_build_and_a_path_once(tmp_path):
    """What a worker writes (`Stager.write`) is refused as the parent's is: a path that leads out by its text or
    through a symlinked folder; a path two workers wrote, or that the final files give again, is an error (the parent
    has no text to settle it); the sha256 and size it sends back are the file's."""
    tmp = tmp_path / "stage"
    tmp.mkdir()
    stager = staging.Stager(tmp)
    ctx = RenderContext()
    with pytest.raises(OutputError, match="not a path inside the build folder"):
        stager.write(_Fake(), {"../outside": "x\n"}, ctx)
    (tmp_path / "elsewhere").mkdir()
    (tmp / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OutputError, match="leads out of the build folder"):
        stager.write(_Fake(), {"link/file": "x\n"}, ctx)
    assert not (tmp_path / "elsewhere" / "file").exists()
    staged = stager.write(_Fake(), {"a/b.txt": "é\n"}, ctx)
    assert staged == {"a/b.txt": Staged(hashlib.sha256("é\n".encode()).hexdigest(), 3)}
    assert (tmp / "a" / "b.txt").read_bytes() == "é\n".encode()
    stager.took("fake", staged)
    with pytest.raises(OutputError, match="targets fake and other both give the file path 'a/b.txt'"):
        stager.took("other", staged)
    with pytest.raises(OutputError, match="targets fake and sonic both give the file path 'a/b.txt'"):
        stager.finish({"sonic": {"a/b.txt": "again\n"}})
    stager.close()
