"""Attacks on where a build writes: a spec value that becomes a path (a SONiC HwSKU names a folder) or a target that
returns a path leading out of the build must never write outside it.  Refused before anything is written, exit 2,
with the target and the path named."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import write_spec
from teton import targets
from teton.catalogue import builtin_models
from teton.cli import main
from teton.fabric import Fabric
from teton.pipeline import build
from teton.pipeline.output import OutputError, unsafe_path
from teton.targets import Files, RenderContext, Target


def test_a_hwsku_that_climbs_out_of_the_build_writes_nothing_outside(tmp_path, lab_data):
    victim = tmp_path / "srv" / "other" / "victim"
    model = builtin_models()["minipack2"].model_dump(mode="json", exclude_none=True)
    model.update(name="evil-mp2", hwsku={"sonic": "../../../../" + str(victim.relative_to(tmp_path))})
    lab_data["switch_models"] = [model]
    lab_data["backend"]["rtsw"]["model"] = "evil-mp2"
    spec = write_spec(tmp_path, lab_data)
    out = tmp_path / "a" / "b" / "build"
    r = CliRunner().invoke(main, ["render", str(spec), "-o", str(out)])
    assert r.exit_code == 2, r.output
    assert not (tmp_path / "srv").exists()
    assert not out.exists()


class Escaping(Target):
    """Returns one hostile path among honest ones."""

    name = "escaping"
    summary = "test"
    nos = None
    bad = ""

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        return {"escaping/ok.txt": "ok\n", self.bad: "pwned\n"}


@pytest.mark.parametrize("bad", ["../outside.txt", "devices/../../outside.txt", "/tmp/teton-abs-victim",
                                 "devices/a\nb/x", "devices/a\0b", "./x", "devices//x", "a\\..\\x", "manifest.json",
                                 "x/" + "y" * 300])
def test_a_target_returning_a_path_outside_the_build_is_refused_before_writing(tmp_path, lab_data, bad):
    (tmp_path / "spec").mkdir()
    spec = write_spec(tmp_path / "spec", lab_data)
    t = Escaping()
    t.bad = bad
    targets.register(t)
    try:
        out = tmp_path / "out" / "build"
        with pytest.raises(OutputError) as err:
            build(spec, out)
        assert "escaping" in str(err.value) and repr(bad) in str(err.value)
        assert not out.exists() and not (tmp_path / "outside.txt").exists()
        assert not Path("/tmp/teton-abs-victim").exists()
        r = CliRunner().invoke(main, ["render", str(spec), "-o", str(out)])
        assert r.exit_code == 2 and "escaping" in r.stderr and not out.exists()
    finally:
        targets.unregister("escaping")


def test_only_safe_paths_pass_the_writer_guard():
    assert unsafe_path("devices/z01-r001-rtsw/frr.conf") is None
    assert unsafe_path("sku/Facebook-Minipack2-64x400G/qos.json.j2") is None
    for bad in ("", "..", "a/..", "/a", "a\r", "a\x7f", "a/./b", "a/", 3, None):
        assert unsafe_path(bad) is not None, bad
