"""Golden tests for a rack switch (SONiC + FRR) and a spine (EOS) of the lab, each asserting the facts that matter.

Regenerate the golden files after an intended change with TETON_UPDATE_GOLDEN=1; the fact assertions stay.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from teton.secrets import PREFIX

GOLDEN = Path(__file__).parent / "golden" / "lab"
CASES = ["z01-r001-rtsw/config_db.json", "z01-r001-rtsw/frr.conf", "z01-ctsw01/structured-config.json",
         "z01-ctsw01/startup-config"]


@pytest.mark.parametrize("rel", CASES)
def test_golden(lab_build, rel):
    got = (lab_build / "devices" / rel).read_text()
    golden = GOLDEN / rel
    if os.environ.get("TETON_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
    assert got == golden.read_text(), f"{rel} differs from its golden file (TETON_UPDATE_GOLDEN=1 to accept)"


def test_rack_switch_facts(lab_build):
    db = json.loads((lab_build / "devices/z01-r001-rtsw/config_db.json").read_text())
    meta = db["DEVICE_METADATA"]["localhost"]
    assert (meta["hostname"], meta["bgp_asn"], meta["docker_routing_config_mode"]) == \
        ("z01-r001-rtsw", "4201001001", "split")
    assert db["PORT"]["Ethernet0"]["mtu"] == "9100" and db["PORT"]["Ethernet0"]["speed"] == "400000"
    assert db["PORT"]["Ethernet0"]["description"] == "z01-r001-h1:be0"
    assert "Ethernet0|10.64.0.0/31" in db["INTERFACE"] and "Loopback0|10.0.0.6/32" in db["LOOPBACK_INTERFACE"]
    assert db["BGP_NEIGHBOR"]["10.1.0.0"] == {"asn": "4200000101", "name": "z01-ctsw01", "local_addr": "10.1.0.1",
                                              "holdtime": "3", "keepalive": "1", "admin_status": "up"}
    qos = db["PORT_QOS_MAP"]["Ethernet0"]
    assert qos["pfc_enable"] == "3" and qos["pfcwd_sw_enable"] == "3"
    assert db["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3" and db["DSCP_TO_TC_MAP"]["ROCE"]["48"] == "6"
    assert db["BUFFER_PG"]["Ethernet0|3"]["profile"].startswith("pg_lossless_400000_5m")
    assert db["WRED_PROFILE"]["ROCE_LOSSLESS"]["ecn"] == "ecn_all"       # the lab enables ECN
    assert db["PFC_WD"]["Ethernet0"]["detection_time"] == "200"
    assert db["PORT"]["Ethernet124"]["admin_status"] == "down"          # unused ports stay down
    assert db["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "1x400G"} and len(db["BREAKOUT_CFG"]) == 128
    assert db["TACPLUS"]["global"]["passkey"] == PREFIX + "aaa_key"      # a reference, never a key
    frr = (lab_build / "devices/z01-r001-rtsw/frr.conf").read_text()
    assert "router bgp 4201001001" in frr and " neighbor 10.1.0.0 remote-as 4200000101" in frr
    assert "  aggregate-address 10.64.0.0/27 summary-only" in frr and "maximum-paths 4" in frr
    assert " bgp bestpath as-path multipath-relax" in frr and " timers bgp 1 3" in frr


def test_spine_facts(lab_build):
    cfg = json.loads((lab_build / "devices/z01-ctsw01/structured-config.json").read_text())
    assert cfg["router_bgp"]["as"] == "4200000101" and cfg["router_bgp"]["router_id"] == "10.0.0.2"
    n0 = cfg["router_bgp"]["neighbors"][0]
    assert (n0["ip_address"], n0["remote_as"], n0["peer_group"]) == ("10.1.0.1", "4201001001", "RTSW_V4")
    e0 = cfg["ethernet_interfaces"][0]
    assert (e0["name"], e0["mtu"], e0["ip_address"]) == ("Ethernet3/1/1", 9100, "10.1.0.0/31")
    assert e0["priority_flow_control"]["priorities"] == [{"priority": 3, "no_drop": True}]
    text = (lab_build / "devices/z01-ctsw01/startup-config").read_text()
    assert "hostname z01-ctsw01" in text and "router bgp 4200000101" in text
    assert "   priority-flow-control priority 3 no-drop" in text and "qos map dscp 26 to traffic-class 3" in text
    assert "   neighbor 10.1.0.1 remote-as 4201001001" in text
    assert "   vrf mgmt" in text and "ip access-list standard ACL-MGMT-IN" in text       # management.vrf, as SONiC
    assert "   neighbor RTSW_V4 passive" in text and "   neighbor ATSW_V4 passive" not in text  # the upper end waits
    assert "priority-flow-control pause watchdog default timeout 0.2" in text


def test_no_secret_value_in_any_artifact(lab_build):
    """Artifacts carry references only; the values a deploy would resolve never appear."""
    from teton.secrets import referenced_secrets

    names: set[str] = set()
    for p in lab_build.rglob("*"):
        if p.is_file():
            text = p.read_text()
            names |= referenced_secrets(text)
            assert "SNMP_COMMUNITY" not in text and "snmp-server community" not in text
    assert {"aaa_key", "bgp_backend"} <= names


def test_every_switch_has_its_configs(lab_build, lab_fabric):
    for d in lab_fabric.devices.values():
        folder = lab_build / "devices" / d.name
        if d.nos == "sonic":
            assert (folder / "config_db.json").is_file() and (folder / "frr.conf").is_file()
        elif d.nos == "eos":
            assert (folder / "structured-config.json").is_file() and (folder / "startup-config").is_file()
        else:
            assert not folder.exists()
