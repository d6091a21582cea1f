"""The 24k reference with FBOSS rack switches (every RTSW on Minipack2, every front-end RSW on Wedge400): designed,
rendered and strict-checked, and read back with the strict check again."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.helpers import REF24K, fboss, write_spec
from teton.buildfolder import BuildFolder
from teton.findings import TetonError
from teton.pipeline import load_and_design
from teton.targets import RenderContext, get
from teton.targets.fboss.data import find_fboss_dir

pytestmark = pytest.mark.scale24k


def test_the_24k_reference_with_fboss_rack_switches_renders_and_reads_back_clean(tmp_path):
    try:
        find_fboss_dir()
    except TetonError as exc:
        pytest.fail(f"FBOSS's reference files are needed (scripts/setup provides them): {exc}")
    spec = write_spec(tmp_path, fboss(yaml.safe_load(REF24K.read_text())), REF24K.name)
    designed = load_and_design(spec)
    fabric = designed.fabric
    target = get("fboss")
    devices = target.devices(fabric)
    roles = {d.role for d in devices}
    assert roles == {"rtsw", "fe-rsw"} and len(devices) > 3000
    files = target.render(fabric, RenderContext())              # raises SpecError on any strict-check finding
    assert len(files) == 2 * len(devices)
    one = json.loads(files[f"devices/{devices[0].name}/agent.conf"])
    assert one["sw"]["ports"][0]["name"].startswith("eth")
    source = BuildFolder(files={**files, "fabric.json": ""})
    sample = fabric.devices[devices[0].name], fabric.devices[devices[-1].name]
    for d in sample:
        view, found = target.read_one(source, d, None, fabric.models[d.model].platform["fboss"])
        assert found == [] and view is not None and view.bgp is not None
