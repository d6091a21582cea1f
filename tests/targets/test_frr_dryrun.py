"""FRR's own parser (`vtysh --dryrun`) accepts every FRR file of the lab: the SONiC switches' frr.conf as rendered,
and the FRR spelling the twin runs for every EOS switch."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from teton.targets.frr import render_frr

pytestmark = pytest.mark.skipif(shutil.which("vtysh") is None, reason="vtysh comes with FRR, which scripts/setup "
                                "installs from Debian")


def _dryrun(path) -> subprocess.CompletedProcess:
    return subprocess.run(["vtysh", "--dryrun", "-f", str(path)], capture_output=True, text=True, timeout=60)


def test_every_rendered_frr_conf_parses(lab_build):
    files = sorted(lab_build.glob("devices/*/frr.conf"))
    assert len(files) == 13                       # 4 RTSW, 7 front-end RSW and 2 front-end spines run SONiC
    for f in files:
        r = _dryrun(f)
        assert r.returncode == 0, f"{f}: {r.stdout}{r.stderr}"


def test_the_frr_spelling_of_every_eos_switch_parses(lab_fabric, tmp_path):
    eos = [d for d in lab_fabric.devices.values() if d.nos == "eos"]
    assert eos
    for d in eos:
        path = tmp_path / f"{d.name}.conf"
        path.write_text(render_frr(d.name, d.routing))
        r = _dryrun(path)
        assert r.returncode == 0, f"{d.name}: {r.stdout}{r.stderr}"


def test_the_dry_run_does_refuse_a_bad_line(lab_build, tmp_path):
    path = tmp_path / "bad.conf"
    path.write_text((lab_build / "devices/z01-r001-rtsw/frr.conf").read_text().replace(
        " update-delay 120", " update-delay 120\n neighbor CTSW_V4 frobnicate"))
    assert _dryrun(path).returncode != 0
