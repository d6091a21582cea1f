"""End to end: the lab's whole cluster as a twin with Debian's lldpd in every namespace, each announcing what its
device's files configure (SONiC's PORT aliases, EOS's interface names, the lldpd role's variables on a server);
`teton verify cabling` against the build is clean, then names two cables crossed on purpose as swapped (both cable
ids) and a link taken out as missing; `restore` puts the cabling back and the fabric converges as designed."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.helpers import LAB
from teton.cli import main

pytestmark = pytest.mark.root

BUILD = "/run/teton/twin/lab/build"     # the twin's snapshot of the build it runs


@pytest.fixture(scope="module")
def twin():
    from teton.twin import service

    service.down("lab")
    report = service.up(str(LAB))
    try:
        yield report
    finally:
        service.down("lab")


def _invoke(*args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, list(args))
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, r.output


def _collect(folder: Path) -> dict:
    code, out = _invoke("twin", "lldp", "lab", "-o", str(folder), "--json")
    assert code == 0, out
    return json.loads(out)


def _check(folder: Path) -> tuple[int, dict]:
    code, out = _invoke("verify", "cabling", BUILD, "--lldp", str(folder), "--json")
    return code, json.loads(out)


def _lldpd_namespaces() -> set[str]:
    """The twin's namespaces an lldpd runs in (lldpd renames its processes: found by executable)."""
    pids = subprocess.run(["pgrep", "-x", "lldpd"], capture_output=True, text=True).stdout.split()
    found = (subprocess.run(["ip", "netns", "identify", p], capture_output=True, text=True).stdout.strip()
             for p in pids)
    return {ns for ns in found if ns.startswith("tt-lab-")}


def test_every_device_sees_its_designed_neighbours(twin, tmp_path):
    r = _collect(tmp_path / "lldp")
    expected = json.loads(Path(BUILD, "cabling", "neighbours.json").read_text())
    # every switch and server of the twin announces itself; each sees one neighbour per cabled Ethernet port
    assert r["settled"] and r["devices"] == 29 + 15 == len(expected)
    assert r["neighbours"] == sum(len(ports) for ports in expected.values())
    seen = json.loads((tmp_path / "lldp" / "z01-r001-rtsw.json").read_text())["lldp"]["interface"]
    ports = {name: body for entry in seen for name, body in entry.items()}
    # a SONiC switch's kernel port Ethernet48 sees the CTSW (EOS, run as FRR with a hashed kernel name) by its
    # EOS interface name; the CTSW sees the SONiC port's alias, as lldpmgrd announces it
    assert ports["Ethernet48"]["port"]["id"] == {"type": "local", "value": "Ethernet3/1/1"}
    assert next(iter(ports["Ethernet48"]["chassis"])) == "z01-ctsw01"
    ctsw = json.loads((tmp_path / "lldp" / "z01-ctsw01.json").read_text())["lldp"]["interface"]
    ctsw_ports = {name: body for entry in ctsw for name, body in entry.items()}
    alias = expected["z01-r001-rtsw"]["Ethernet48"]["port_id"]
    assert alias.startswith("eth") and ctsw_ports["Ethernet3/1/1"]["port"]["id"]["value"] == alias
    # a server announces its NIC names (portidsubtype ifname), as the lldpd role configures it
    host = json.loads((tmp_path / "lldp" / "z01-r001-rtsw.json").read_text())
    assert "z01-r001-h1" in json.dumps(host)
    code, report = _check(tmp_path / "lldp")
    assert code == 0, report
    assert report["ok"] and report["as_designed"] == report["ports"] == r["neighbours"]


def test_two_crossed_cables_are_reported_swapped_and_a_pulled_one_missing(twin, tmp_path):
    expected = json.loads(Path(BUILD, "cabling", "neighbours.json").read_text())
    c1 = expected["z01-r001-rtsw"]["Ethernet48"]["cable"]
    c2 = expected["z01-r001-rtsw"]["Ethernet16"]["cable"]
    code, out = _invoke("twin", "swap", "lab", "z01-r001-rtsw:Ethernet48", "z01-r001-rtsw:Ethernet16", "--json")
    assert code == 0, out
    swap = json.loads(out)
    assert swap["cables"] == [c1, c2] and not swap["as_designed"]
    assert swap["now"] == ["z01-r001-rtsw:Ethernet48 <-> z01-ctsw02:Ethernet3/1/1",
                           "z01-r001-rtsw:Ethernet16 <-> z01-ctsw01:Ethernet3/1/1"]
    pulled = expected["z01-r001-h1"]["be0"]["cable"]
    code, out = _invoke("twin", "fail", "lab", "z01-r001-h1:be0", "--json")
    assert json.loads(out)["how"] == "link down", out
    assert _collect(tmp_path / "after")["settled"]
    code, report = _check(tmp_path / "after")
    assert code == 1
    assert [sorted(s["cables"]) for s in report["swapped"]] == [sorted([c1, c2])]
    assert len(report["swapped"][0]["ends"]) == 4        # each end sees the far end of the other cable
    assert [m["cable"] for m in report["missing"]] == [pulled]
    assert report["miswired"] == [] and report["extra"] == []
    code, text = _invoke("verify", "cabling", BUILD, "--lldp", str(tmp_path / "after"))
    assert code == 1 and f"swapped   cables {c1} and {c2}" in text and f"missing   cable {pulled}" in text

    # restore uncrosses and plugs back; the cabling and the routing are as designed again
    code, out = _invoke("twin", "restore", "lab", "--json")
    restored = json.loads(out)
    assert code == 0 and restored["uncrossed"] == [["z01-r001-rtsw:Ethernet48", "z01-r001-rtsw:Ethernet16"]]
    assert _collect(tmp_path / "restored")["settled"]
    assert _check(tmp_path / "restored")[0] == 0
    code, out = _invoke("twin", "verify", "lab", "--json")
    assert code == 0 and json.loads(out)["ok"], out


def test_the_same_two_ports_again_put_the_cables_back(twin, tmp_path):
    ports = ("z01-fsw01:Ethernet3/1/1", "z01-fsw02:Ethernet3/2/1")     # two EOS FSWs' ports (hashed kernel names)
    code, out = _invoke("twin", "swap", "lab", *ports, "--json")
    assert code == 0 and not json.loads(out)["as_designed"]
    code, out = _invoke("twin", "swap", "lab", *reversed(ports), "--json")
    assert code == 0 and json.loads(out)["as_designed"], out
    assert _collect(tmp_path / "lldp")["settled"] and _check(tmp_path / "lldp")[0] == 0
    code, out = _invoke("twin", "restore", "lab", "--json")
    assert code == 0 and json.loads(out)["uncrossed"] == []          # nothing left to undo


def test_swapping_one_cable_with_itself_or_a_port_of_no_device_is_refused(twin):
    code, out = _invoke("twin", "swap", "lab", "z01-r001-rtsw:Ethernet48", "z01-ctsw01:Ethernet3/1/1")
    assert code == 1 and "two ends of one cable" in out
    code, out = _invoke("twin", "swap", "lab", "z01-r001-rtsw:Ethernet999", "z01-r001-rtsw:Ethernet48")
    assert code == 2 and "no port" in out


def test_down_stops_every_lldpd(twin, tmp_path):
    from teton.twin import service
    from teton.twin.processes import alive

    _collect(tmp_path / "lldp")
    assert len(_lldpd_namespaces()) == 29 + 15
    pids = [int(p.read_text()) for p in Path("/run/teton/twin/lab/rt/lldp").glob("*.pid")]
    assert len(pids) == 29 + 15
    service.down("lab")
    assert _lldpd_namespaces() == set()
    assert [p for p in pids if alive(p)] == []
