"""The spec's day-0 settings and the design: the `ztp:` section (and the DNS servers beside it) moves no switch's
management address in the bundled specs, an address of the server or an image server inside the switches' range is
kept from them, and rule ztp refuses a quarantine pool that cannot work."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest
import yaml

from tests.helpers import INVENTORY, LAB, REF24K, write_spec
from tests.ztp.helpers import cli
from teton.design import design
from teton.design.management import url_address
from teton.fabric import Fabric
from teton.spec.load import load_spec
from teton.spec.model import Cluster


def _addresses(fabric: Fabric) -> dict[str, str]:
    """{switch: its management address, no prefix length}."""
    return {d.name: str(d.mgmt).split("/", 1)[0] for d in fabric.switches()}


def _without_day0(c: Cluster) -> Cluster:
    """`c` as it was before day 0 had settings: no `ztp:`, no DNS servers or domain in management."""
    return c.model_copy(update={"ztp": None,
                                "management": c.management.model_copy(update={"dns_servers": [], "domain": None})})


@pytest.mark.parametrize("spec", [
    "lab.yaml", "lab.py", "lab-fboss.yaml", pytest.param(REF24K.name, marks=pytest.mark.scale24k)])
def test_the_ztp_section_moves_no_switch_of_a_bundled_spec(spec):
    c = load_spec(INVENTORY / spec)
    assert c.ztp is not None and c.management.dns_servers, f"{spec} carries day 0's settings"
    with_day0 = _addresses(design(c, INVENTORY))
    assert with_day0 == _addresses(design(_without_day0(c), INVENTORY))
    assert len(set(with_day0.values())) == len(with_day0) > 0
    servers = {*c.management.dns_servers, *(url_address(u) for u in (c.ztp.server, *c.ztp.images.values()))} - {None}
    assert servers and not servers & set(with_day0.values())


def test_the_server_and_an_image_server_inside_the_switches_range_are_kept_from_them(tmp_path, lab_fabric):
    before = _addresses(lab_fabric)
    taken = {a: n for n, a in before.items()}
    assert "192.0.2.12" in taken and "192.0.2.13" in taken     # switches sit there without day 0's servers
    data = yaml.safe_load(LAB.read_text())
    data["ztp"].update(server="http://192.0.2.12:8080", images={"sonic": "http://192.0.2.13/sonic-broadcom.bin"})
    after = _addresses(design(load_spec(write_spec(tmp_path, data))))
    assert not {"192.0.2.12", "192.0.2.13"} & set(after.values())
    assert after[taken["192.0.2.12"]] != "192.0.2.12" and after[taken["192.0.2.13"]] != "192.0.2.13"
    net = ipaddress.ip_network("192.0.2.0/24")
    assert len(set(after.values())) == len(after) and all(ipaddress.ip_address(a) in net for a in after.values())
    below = {n for n, a in before.items() if ipaddress.ip_address(a) < ipaddress.ip_address("192.0.2.12")}
    assert below and all(after[n] == before[n] for n in below)       # the switches before the server stay


def test_a_quarantine_pool_where_switches_would_sit_moves_them_out(tmp_path, lab_fabric):
    data = yaml.safe_load(LAB.read_text())
    data["ztp"]["quarantine"] = {"first": "192.0.2.20", "last": "192.0.2.29"}
    pool = range(int(ipaddress.ip_address("192.0.2.20")), int(ipaddress.ip_address("192.0.2.29")) + 1)
    assert [a for a in _addresses(lab_fabric).values() if int(ipaddress.ip_address(a)) in pool]
    after = _addresses(design(load_spec(write_spec(tmp_path, data))))
    assert not [a for a in after.values() if int(ipaddress.ip_address(a)) in pool]
    assert len(set(after.values())) == len(after) == 29


def _validate(spec: Path) -> tuple[int, list[dict]]:
    result = cli("validate", spec, "--json")
    return result.exit_code, json.loads(result.stdout)["findings"]


def _line(spec: Path, text: str) -> int:
    return next(n for n, line in enumerate(spec.read_text().splitlines(), start=1) if line.strip() == text)


@pytest.mark.parametrize(("first", "last", "said"), [
    ("198.51.100.10", "198.51.100.20", "198.51.100.10-198.51.100.20 is not inside the management network 192.0.2.0/24"),
    ("192.0.2.240", "198.51.100.20", "is not inside the management network"),
    ("2001:db8::10", "2001:db8::20", "is not inside the management network"),
    ("192.0.2.250", "192.0.2.240", "first 192.0.2.250 is after last 192.0.2.240"),
], ids=["outside", "half outside", "another family", "upside down"])
def test_rule_ztp_refuses_a_quarantine_pool_that_cannot_work(tmp_path, first, last, said):
    data = yaml.safe_load(LAB.read_text())
    data["ztp"]["quarantine"] = {"first": first, "last": last}
    spec = write_spec(tmp_path, data)
    code, findings = _validate(spec)
    errors = [f for f in findings if f["severity"] == "error"]
    assert code == 2 and len(errors) == 1, findings
    (f,) = errors
    assert (f["rule"], f["path"], f["file"]) == ("ztp", "ztp.quarantine", str(spec))
    assert said in f["message"] and f["line"] == _line(spec, f"first: {first}")


def test_an_image_for_a_nos_no_tier_runs_is_a_warning(tmp_path):
    data = yaml.safe_load(LAB.read_text())
    data["ztp"]["images"] = {"fboss": "http://192.0.2.6/images/fboss.bin"}
    code, findings = _validate(write_spec(tmp_path, data))
    assert code == 0
    assert [(f["rule"], f["path"], f["severity"]) for f in findings if f["rule"] == "ztp"] == [
        ("ztp", "ztp.images.fboss", "warning")]
