"""A member's or the tier's build of a site checks clean alone: its ATSW-BAG sessions are on its externals' ports
(`Fabric.externals`, devices of another build of the site), so `teton validate --rendered` and `teton verify BUILD`
count them ("N sessions to the site's other builds, proven by `teton verify` of the site") and leave them out of the
single build's model; a neighbour on no device and no external, or one whose ASN is not the external's, stays an
error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from teton.cli import main

# the lab site: each cluster's two ATSWs have one uplink to each of the two BAG switches, in both families
SITE_SESSIONS = {"lab-a": 8, "lab-site": 16}


def _validate(build: Path) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["validate", "--rendered", str(build)])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, r.output


def _verify(build: Path) -> tuple[int, dict]:
    r = CliRunner().invoke(main, ["verify", str(build), "--json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, json.loads(r.stdout)


@pytest.mark.parametrize("build", ["lab-a", "lab-site"])
def test_a_member_and_the_tier_validate_clean_with_their_site_sessions_counted(lab_site, build):
    code, output = _validate(lab_site / build)
    assert code == 0, output
    assert "error" not in output
    assert (f"vendor schemas and cross-device checks clean; {SITE_SESSIONS[build]} sessions to the site's other "
            "builds, proven by `teton verify` of the site") in " ".join(output.split())


@pytest.mark.parametrize("build", ["lab-a", "lab-site"])
def test_a_member_and_the_tier_verify_clean_with_their_site_sessions_counted(lab_site, build):
    code, report = _verify(lab_site / build)
    assert code == 0 and report["ok"], report["findings"]
    assert report["findings"] == []
    assert report["counts"]["site_sessions"] == SITE_SESSIONS[build]
    # the member is the cluster's own routing, as the lab's alone (its BAG sessions left out of the model)
    if build == "lab-a":
        assert report["counts"]["switches"] == 29 and report["counts"]["sessions"]["total"] == 84
    else:
        assert report["counts"]["switches"] == 2 and report["counts"]["sessions"]["total"] == 0
    text = CliRunner().invoke(main, ["verify", str(lab_site / build)])
    assert text.exit_code == 0
    assert f"{SITE_SESSIONS[build]} sessions to the site's other builds" in " ".join(text.output.split())


def _atsw01(tmp_path: Path, lab_site: Path) -> tuple[Path, Path, dict]:
    build = tmp_path / "lab-a"
    shutil.copytree(lab_site / "lab-a", build)
    path = build / "devices" / "atsw01" / "structured-config.json"
    return build, path, json.loads(path.read_text())


def _bag_neighbour(config: dict) -> dict:
    """atsw01's IPv4 neighbour on bag01 (its first uplink)."""
    return next(n for n in config["router_bgp"]["neighbors"] if n.get("description", "").startswith("bag01")
                and ":" not in n["ip_address"])


def test_a_wrong_neighbour_address_on_an_atsw_still_errors(lab_site, tmp_path):
    build, path, config = _atsw01(tmp_path, lab_site)
    n = _bag_neighbour(config)
    was = n["ip_address"]
    n["ip_address"] = "10.99.7.1"              # on no device of the build, no external's port
    path.write_text(json.dumps(config, indent=1))
    code, output = _validate(build)
    flat = " ".join(output.split())
    assert code == 2
    assert "neighbor 10.99.7.1 is no address of any device [bgp-session]" in flat
    assert "devices/atsw01/structured-config.json" in flat
    assert flat.count("[bgp-session]") == 1     # the other uplinks stay sessions to the site
    assert f"neighbor {was} is no address" not in flat
    code, report = _verify(build)
    assert code == 1
    bad = [f for f in report["findings"] if f["severity"] == "error"]
    assert [f["rule"] for f in bad] == ["bgp-session"]
    assert bad[0]["file"] == "devices/atsw01/structured-config.json"
    assert "neighbour 10.99.7.1 cannot come up: no switch of the build has the address" in bad[0]["message"]
    assert report["counts"]["site_sessions"] == SITE_SESSIONS["lab-a"] - 1


def test_a_wrong_remote_as_towards_an_external_errors(lab_site, tmp_path):
    build, path, config = _atsw01(tmp_path, lab_site)
    n = _bag_neighbour(config)
    n["remote_as"] = "4290000099"
    path.write_text(json.dumps(config, indent=1))
    code, output = _validate(build)
    flat = " ".join(output.split())
    assert code == 2
    assert (f"neighbor {n['ip_address']} (bag01, of another build of the site) has ASN 4290000000, configured "
            "remote-as 4290000099") in flat
    code, report = _verify(build)
    assert code == 1
    (bad,) = [f for f in report["findings"] if f["severity"] == "error"]
    assert bad["rule"] == "bgp-session"
    assert "atsw01 expects AS 4290000099 but bag01 runs AS 4290000000" in bad["message"]
