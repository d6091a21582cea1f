"""How a side of a diff is obtained: replayed from the render cache when that spec was rendered before (its fabric.json
read back for the facts, not designed again, while a designed other side renders), designed otherwise; the report is
the same either way."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import write_spec
from teton.diff import diff_specs, sides
from teton.pipeline import render_spec
from teton.pipeline.cache import RenderCache


def _specs(tmp_path: Path, lab_data: dict) -> tuple[Path, Path]:
    lab_data["racks_per_zone"] = 6
    lab_data["backend"]["addressing"]["ipv4"]["host_links"] = "10.64.0.0/22"
    lab_data["backend"]["ctsw"]["oversubscription"] = 3.0
    old = write_spec(tmp_path, lab_data, "old.yaml")
    lab_data["racks"] = {"z01-r005": {"hosts": 1}}
    return old, write_spec(tmp_path, lab_data, "new.yaml")


def test_a_side_rendered_before_is_replayed_not_designed_and_the_report_is_the_same(tmp_path, lab_data, monkeypatch):
    old, new = _specs(tmp_path, lab_data)
    plain = diff_specs(str(old), str(new))
    cache = RenderCache(tmp_path / "cache")
    render_spec(old, cache=cache)
    designed: list[object] = []
    real = sides.design_spec
    monkeypatch.setattr(sides, "design_spec", lambda *a, **k: designed.append(a) or real(*a, **k))
    read: list[str] = []
    read_back = sides.Side.read_back
    monkeypatch.setattr(sides.Side, "read_back", lambda self: read.append(self.label) or read_back(self))
    first = diff_specs(str(old), str(new), cache=cache)
    assert len(designed) == 1 and first.comparison.old.replayed and not first.comparison.new.replayed
    assert read == [str(old)]       # the rendered side's fabric.json read while the other's files render
    again = diff_specs(str(old), str(new), cache=cache)
    assert len(designed) == 1 and again.comparison.new.replayed
    assert read == [str(old)]       # both replayed: the facts are in the cache, nothing read back
    for fmt in ("json", "text", "markdown"):
        assert first.render(fmt) == plain.render(fmt) == again.render(fmt)
    assert plain.devices_changed == ["z01-r005-frsw", "z01-r005-h2", "z01-r005-rtsw"]
