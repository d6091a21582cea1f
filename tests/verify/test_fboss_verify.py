"""`teton verify` of a build with FBOSS rack switches (inventory/lab-fboss.yaml): BGP++'s config is read into the same
view as FRR's and EOS's (its policy statements as route maps), so the build is clean with every switch in the model,
and BGP++'s inbound statements are evaluated like the others' route maps.  Its agent configs carry none of FBOSS's
hardware-test flags."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.helpers import INVENTORY
from tests.verify.test_verify import _rules, run
from teton.pipeline import build
from teton.targets.fboss.agent import HW_TEST_FLAGS
from teton.targets.fboss.data import find_fboss_dir
from teton.verify.run import load

RTSW = "z01-r001-rtsw"


@pytest.fixture(scope="module")
def fboss_lab_build(tmp_path_factory):
    find_fboss_dir()            # FBOSS's reference files are needed to render (scripts/setup provides them)
    return build(INVENTORY / "lab-fboss.yaml", tmp_path_factory.mktemp("build") / "lab-fboss").path


def test_verify_of_the_fboss_lab_is_clean_with_every_switch_seen(fboss_lab_build):
    _, fabric = load(fboss_lab_build)
    routed = [d.name for d in fabric.devices.values() if d.routing is not None]
    assert sum(d.nos == "fboss" for d in fabric.devices.values()) == 4
    code, report = run(str(fboss_lab_build))
    assert code == 0 and report["findings"] == [], report["findings"]
    assert report["counts"]["switches"] == len(routed) == 29


def test_bgp_plus_plus_inbound_statements_are_evaluated(fboss_lab_build, tmp_path):
    """A rack switch's BGP++ import statement edited to accept nothing from its spines: verify sees what it loses."""
    build_dir = tmp_path / "build"
    shutil.copytree(fboss_lab_build, build_dir)
    path = build_dir / "devices" / RTSW / "bgpcpp.conf"
    bgp = json.loads(path.read_text())
    for st in bgp["policies"]["bgp_policy_statements"]:
        if st["name"] == "IMPORT_CTSW_V4":
            st["policy_entries"] = []
    path.write_text(json.dumps(bgp))
    code, report = run(str(build_dir))
    assert code == 1
    assert any(RTSW in f["message"] and "IMPORT_CTSW_V4" in f["message"] for f in _rules(report)["rack-reach"])


def test_no_fboss_agent_config_carries_a_hardware_test_flag(fboss_lab_build):
    for agent in fboss_lab_build.glob("devices/*/agent.conf"):
        args = json.loads(agent.read_text())["defaultCommandLineArgs"]
        assert not set(args) & set(HW_TEST_FLAGS), agent
