"""End to end: `teton verify live BUILD --twin NAME` on the lab's twin (real FRR, lldpd, the kernel's routes and pings
in the namespaces, read through the twin transport): clean as brought up; after a CTSW fails it exits 1 naming exactly
that CTSW's designed sessions (each from its other end, by peer address, device and port) and the ECMP widths that
fell, each at what the design has under that failure; after two of a host's rail cables are crossed, the two cables
by cable id; `restore` makes it clean again.

The lab runs as a twin of its own, named after TETON_SERVICES_TWIN with `lv` after it, beside the session's services
twin (tests/e2e/conftest.py): the services twin comes up from day 0 (`teton ztp serve`), which this worktree's base
does not have yet.  Every test that fails or crosses something restores it before it ends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.e2e.conftest import SERVICES_TWIN
from tests.helpers import LAB, write_spec
from teton.buildfolder import BuildFolder
from teton.cli import main
from teton.expect import Failures, Sampling, expected_peers, promise

pytestmark = pytest.mark.root

NAME = f"{SERVICES_TWIN}lv"[:16]
BUILD = f"/run/teton/twin/{NAME}/build"     # the twin's snapshot of the build it runs
CTSW = "z01-ctsw01"


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    from teton.twin import service

    data = yaml.safe_load(LAB.read_text())
    data["name"] = NAME
    spec = write_spec(tmp_path_factory.mktemp("verify-live"), data, f"{NAME}.yaml")
    service.down(NAME)
    service.up(str(spec))
    try:
        yield service
    finally:
        service.down(NAME)


def verify_live(*args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(main, ["verify", "live", BUILD, "--twin", NAME, "--json", *args])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, json.loads(r.output)


def test_the_twin_as_brought_up_keeps_every_promise(twin):
    code, r = verify_live()
    assert code == 0 and r["ok"], r["by_device"]
    fabric = BuildFolder(Path(BUILD)).fabric()
    p = r["promises"]
    assert r["where"] == f"twin {NAME}" and r["switches"] == 29 == r["lldp_read"] and r["by_device"] == {}
    assert p["sessions"]["expected"] == p["sessions"]["established"] == sum(
        len(x) for x in expected_peers(fabric, [n for n in fabric.devices if fabric.devices[n].routing]).values())
    expected = json.loads(Path(BUILD, "cabling", "neighbours.json").read_text())
    switch_ports = sum(len(ports) for d, ports in expected.items() if fabric.devices[d].nos is not None)
    assert p["lldp"]["as_designed"] == p["lldp"]["ports"] == switch_ports
    assert p["ecmp"]["checked"] > 0 and p["same_rail"]["pinged"] == 448 and p["reach"]["pinged"] > 0
    assert r["remarks"] == [] and r["errors"] == {} and r["unobserved"] == []


def test_a_failed_ctsw_is_named_by_its_sessions_and_the_ecmp_widths_that_fell(twin):
    fabric = BuildFolder(Path(BUILD)).fabric()
    healthy = {(p.switch, p.prefix): p.width for p in promise(fabric, [], sampling=Sampling(ecmp=10**6)).ecmp}
    under = {(p.switch, p.prefix): p.width
             for p in promise(fabric, [], Failures(devices=(CTSW,)), Sampling(ecmp=10**6)).ecmp}
    twin.fail(NAME, CTSW)
    try:
        code, r = verify_live()
        assert code == 1 and not r["ok"]
        s = r["promises"]["sessions"]
        designed = expected_peers(fabric, [CTSW])[CTSW]
        assert [u["switch"] for u in s["unanswered"]] == [CTSW] and s["unanswered"][0]["sessions"] == len(designed)
        # exactly the CTSW's designed sessions, each named from its other end with the CTSW's address and port
        assert sorted((d["switch"], d["port"], d["family"], d["peer"], d["peer_port"], d["address"])
                      for d in s["down"]) == sorted((*n.peer.split(":"), n.family, CTSW, n.interface, n.local_address)
                                                    for n in designed)
        e = r["promises"]["ecmp"]
        fell = {(x["switch"], x["prefix"]): (x["expected"], x["seen"]) for x in e["fell"]}
        assert fell and e["wider"] == [] and e["unanswered"] == []
        for (switch, prefix), (was, seen) in fell.items():
            assert was == healthy[(switch, prefix)] and seen == (0 if switch == CTSW else under[(switch, prefix)])
        # the lab's sample is every (switch, rack) pair: every width the failure cut, and the CTSW's own (no routes)
        assert set(fell) == {k for k in healthy if k[0] == CTSW or under[k] < healthy[k]}
        assert set(r["by_device"]) == {CTSW} | {d["switch"] for d in s["down"]} | {k[0] for k in fell}
        assert r["promises"]["same_rail"]["failed"] == [] and r["promises"]["lldp"]["ok"]
    finally:
        twin.restore(NAME)
    assert verify_live()[0] == 0


def test_two_crossed_rail_cables_are_named_by_their_cable_ids(twin):
    expected = json.loads(Path(BUILD, "cabling", "neighbours.json").read_text())
    cables = sorted(expected["z01-r001-h1"][nic]["cable"] for nic in ("be0", "be1"))
    fabric = BuildFolder(Path(BUILD)).fabric()
    crossed = {a.split("/")[0] for i in fabric.devices["z01-r001-h1"].interfaces if i.name in ("be0", "be1")
               for a in (i.ipv4, i.ipv6) if a}
    twin.swap(NAME, "z01-r001-h1:be0", "z01-r001-h1:be1")
    try:
        code, r = verify_live()
        assert code == 1
        lldp = r["promises"]["lldp"]
        assert [x["cables"] for x in lldp["swapped"]] == [cables] and r["remarks"] == []
        assert lldp["miswired"] == lldp["missing"] == lldp["extra"] == []
        assert r["promises"]["sessions"]["ok"] and r["promises"]["ecmp"]["ok"]
        # what fails is reaching the rails of the two NICs crossed, nothing else
        assert all(p["src"] in crossed for p in r["promises"]["same_rail"]["failed"])
        assert r["by_device"]["z01-r001-rtsw"] == [f"cables {cables[0]} and {cables[1]} crossed: "
                                                   f"{'; '.join(lldp['swapped'][0]['ends'])}"]
    finally:
        twin.restore(NAME)
    code, r = verify_live()
    assert code == 0 and r["promises"]["lldp"]["as_designed"] == r["promises"]["lldp"]["ports"], r["by_device"]


def test_one_tier_in_text(twin):
    r = CliRunner().invoke(main, ["verify", "live", BUILD, "--twin", NAME, "--only", "ctsw"])
    assert r.exit_code == 0 and "8 switches (ctsw)" in r.output and "every promise kept" in r.output, r.output
