"""`teton diff` on the 24k reference against copies of it (a rack's hosts, a zone added, an unchanged copy), each
reporting exactly the devices that change and the verdict.  The base is rendered once per session into a render
cache: every diff reads the base from it and renders only the devices whose inputs changed.

Expected device sets are derived from the two Fabrics, never written out: a device changes when its record (placement,
addresses, links, every intent) differs, or when it is on one side only.  Each case also checks what the change
means in the domain (the rack's own switches, the new zone's devices and the ATSWs they attach to).  The two
fabric-wide changes (the RoCE DSCP: every backend device; one ATSW fewer: every CTSW) re-render most of the 24k's
switches: they are tests on the lab (tests/diff/test_fabric_wide_changes.py, the same oracle) and timed cases of
bench/bench_diff.py on the 24k.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import REF24K, changed_devices, fabric_of, write_spec
from teton.cli import main
from teton.diff import DiffResult, diff_specs
from teton.fabric import Fabric
from teton.pipeline import render_spec
from teton.pipeline.cache import ENV_DIR, RenderCache

pytestmark = pytest.mark.scale24k


@pytest.fixture(scope="session")
def base(roce24k_cache) -> tuple[RenderCache, Fabric, Path]:
    """The 24k reference rendered once (every device into the session's cache, shared with its whole build in
    tests/conftest.py, and the spec's record)."""
    cache = roce24k_cache
    rendered = render_spec(REF24K, cache=cache)
    assert rendered.fabric is not None
    return cache, rendered.fabric, REF24K


def spec_copy(tmp_path: Path, change) -> Path:
    data = yaml.safe_load(REF24K.read_text())
    change(data)
    return write_spec(tmp_path, data, "copy.yaml")


def run(base, spec: Path) -> DiffResult:
    cache, _, ref = base
    cache.reset_stats()
    return diff_specs(str(ref), str(spec), cache=cache)


def test_a_the_hosts_of_one_rack(base, tmp_path):
    _, old, _ = base
    racks = sorted({d.rack for d in old.devices.values() if d.role == "rtsw"})
    rack = racks[len(racks) // 3]
    spec = spec_copy(tmp_path, lambda d: d.setdefault("racks", {}).update({rack: {"hosts": 1}}))
    new = fabric_of(spec)
    result = run(base, spec)
    in_rack = {d.name for d in old.devices.values() if d.rack == rack}
    gone = in_rack - new.devices.keys()
    assert gone and all(old.devices[n].role == "host" for n in gone)
    switches = {d.name for d in old.devices.values() if d.rack == rack and d.role in ("rtsw", "fe-rsw")}
    assert set(result.devices_changed) == changed_devices(old, new) == switches | gone
    assert result.level == "low", result.reasons
    s = result.render("json")
    data = json.loads(s)
    assert data["verdict"] == "low" and sorted(data["devices_changed"]) == sorted(switches | gone)
    assert data["summary"]["bgp_sessions_added"] == data["summary"]["bgp_sessions_removed"] == 0
    assert set(data["summary"]["hosts_with_changed_variables"]) == gone
    cache_stats = base[0].stats()
    assert cache_stats["misses"] == len(switches), "only the rack's switches are rendered (on the new side)"


def test_b_one_zone_added(base, tmp_path):
    _, old, _ = base
    spec = spec_copy(tmp_path, lambda d: d.update(zones=d["zones"] + 1))
    new = fabric_of(spec)
    result = run(base, spec)
    zone = max(d.zone or 0 for d in old.devices.values()) + 1
    added = {n for n, d in new.devices.items() if d.zone == zone}
    atsw = {n for n, d in old.devices.items() if d.role == "atsw"}
    assert set(result.devices_changed) == changed_devices(old, new)
    assert added <= set(result.devices_changed) and atsw <= set(result.devices_changed)
    by_name = {d.name: d for d in result.comparison.devices}
    assert all(by_name[n].status == "added" for n in added)
    assert {d.status for d in result.comparison.devices if d.name in atsw} == {"changed"}
    # the reference declares room for 12 zones: an expansion, the ATSWs and the front-end spines only attached
    from teton.diff.classify import classify

    found = classify(result.comparison)
    ssw = {n for n, d in old.devices.items() if d.role == "ssw"}
    assert found.kind == "expansion"
    assert {k.name for k in found.devices if k.existing} == atsw | ssw
    assert {k.kind for k in found.devices if k.existing} == {"attached"}
    assert result.level == "medium"
    assert any(r.rule == "every-atsw" for r in result.reasons)


def test_the_cli_on_an_unchanged_24k_spec_exits_0_from_the_cache(base, tmp_path):
    cache, _, ref = base
    same = spec_copy(tmp_path, lambda d: None)
    env = {ENV_DIR: str(cache.root)}
    got = CliRunner().invoke(main, ["diff", str(ref), str(same), "--format", "json"], env=env)
    assert got.exit_code == 0, got.output
    data = json.loads(got.stdout)
    assert data["verdict"] == "none" and data["devices_changed"] == []


def test_the_markdown_of_a_one_rack_change_fits_a_pull_request_comment(base, tmp_path, monkeypatch):
    cache, old, _ = base
    rack = sorted({d.rack for d in old.devices.values() if d.role == "rtsw"})[0]
    (tmp_path / "main").mkdir()
    shutil.copy(REF24K, tmp_path / "main" / REF24K.name)            # the same spec: its record is in the cache
    spec_copy(tmp_path / "main", lambda d: d.setdefault("racks", {}).update({rack: {"hosts": 1}}))
    (tmp_path / "pr").mkdir()
    (tmp_path / "main" / "copy.yaml").rename(tmp_path / "pr" / REF24K.name)
    monkeypatch.chdir(tmp_path)
    result = diff_specs(f"main/{REF24K.name}", f"pr/{REF24K.name}", cache=cache)
    md = result.render("markdown")
    assert len(md) < 65_536
    assert "**Verdict: 🟢 LOW**" in md and "| tier | zone | changed | added | removed |" in md
    assert md.count("<details>") == md.count("</details>") and md.count("```") % 2 == 0
    for name in result.devices_changed:
        assert f"<code>{name}</code>" in md
    example = os.environ.get("TETON_DIFF_EXAMPLE")          # writes the example of docs/reviewing.md when asked
    if example:
        Path(example).write_text(result.render("markdown", file_lines=8), encoding="utf-8")
