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
    assert (meta["hostname"], meta["bgp_asn"]) == ("z01-r001-rtsw", "4201001001")
    # SONiC runs the rendered frr.conf as it is: split-unified, and no BGP_NEIGHBOR rows for bgpcfgd to act on
    assert meta["docker_routing_config_mode"] == "split-unified" and "BGP_NEIGHBOR" not in db
    assert (meta["type"], meta["resource_type"]) == ("BackEndToRRouter", "ComputeAI")
    assert "mac" not in meta and meta["default_pfcwd_status"] == "disable"   # its own MAC; PFC_WD rows say it all
    # Tomahawk4: a 400G port is 8 of its 50G lanes; Minipack2's sit on its 16Q PIMs' odd cages (FBOSS's platform
    # mapping), each named by its first SerDes lane: cage 2/1 is SerDes core 1, Ethernet8
    first = db["PORT"]["Ethernet8"]
    assert first["lanes"] == "8,9,10,11,12,13,14,15" and first["alias"] == "eth2/1/1"
    assert db["PORT"]["Ethernet32"]["alias"] == "eth2/3/1" and "Ethernet4" not in db["PORT"]
    assert len(db["PORT"]) == 64 and all(len(p["lanes"].split(",")) == 8 for p in db["PORT"].values())
    assert db["PORT"]["Ethernet8"]["mtu"] == "9100" and db["PORT"]["Ethernet8"]["speed"] == "400000"
    assert db["PORT"]["Ethernet8"]["description"] == "z01-r001-h1:be0"
    assert "Ethernet8|10.64.0.0/31" in db["INTERFACE"] and "Loopback0|10.0.0.6/32" in db["LOOPBACK_INTERFACE"]
    qos = db["PORT_QOS_MAP"]["Ethernet8"]
    assert qos["pfc_enable"] == "3" and qos["pfcwd_sw_enable"] == "3"
    assert db["DSCP_TO_TC_MAP"]["ROCE"]["26"] == "3" and db["DSCP_TO_TC_MAP"]["ROCE"]["48"] == "6"
    assert db["BUFFER_PG"]["Ethernet0|3"]["profile"] == "pg_lossless_400000_5m_profile"
    assert db["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]["xoff"] == "179968"       # 802.1Qbb formula
    assert "WRED_PROFILE" not in db                                      # the lab runs PFC only, as the reference
    assert db["SCHEDULER"]["scheduler.lossless"] == {"type": "DWRR", "weight": "50"}
    assert db["SCHEDULER"]["scheduler.control"] == {"type": "STRICT", "priority": "5"}
    assert db["DSCP_TO_TC_MAP"]["ROCE"]["46"] == "5"                    # the collective's control class
    assert db["PFC_WD"]["Ethernet0"]["detection_time"] == "200"
    assert db["PORT"]["Ethernet504"]["admin_status"] == "down"          # unused ports stay down
    assert db["BREAKOUT_CFG"]["Ethernet0"] == {"brkout_mode": "1x400G"} and len(db["BREAKOUT_CFG"]) == 64
    assert db["TACPLUS"]["global"]["passkey"] == PREFIX + "aaa_key"      # a reference, never a key
    assert db["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"][-2:] == ["L4_SRC_PORT", "L4_DST_PORT"]
    assert {"BUFFER_POOL_WATERMARK", "PG_DROP", "WRED_ECN_QUEUE"} <= set(db["FLEX_COUNTER_TABLE"])
    assert (db["AAA"]["authorization"]["login"], db["AAA"]["accounting"]["login"]) == ("tacacs+,local",) * 2
    assert db["ACL_TABLE"]["GNMI_ONLY"]["services"] == ["EXTERNAL_CLIENT"]
    assert db["ACL_RULE"]["GNMI_ONLY|RULE_10"]["L4_DST_PORT"] == "50051"
    frr = (lab_build / "devices/z01-r001-rtsw/frr.conf").read_text()
    assert "router bgp 4201001001" in frr and " neighbor 10.1.0.0 remote-as 4200000101" in frr
    assert "  aggregate-address 10.64.0.0/27 summary-only" in frr and "maximum-paths 4" in frr
    assert " bgp bestpath as-path multipath-relax" in frr and " timers bgp 1 3" in frr
    assert " update-delay 120" in frr and "  neighbor CTSW_V4 maximum-prefix 1000 restart 5\n" in frr


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
    # the same scheduling as SONiC: round robin (`no priority`) lossless 50 %, best effort 48 % (idle queues 1 and 2
    # 1 % each), control and CNPs strict; no ECN (PFC only)
    assert "   tx-queue 0\n      !! best effort\n      no priority\n      bandwidth percent 48" in text
    assert ("   tx-queue 3\n      !! RoCE lossless (PFC priority 3)\n      no priority\n      bandwidth percent 50"
            in text)
    assert "   tx-queue 6\n      !! CNP strict priority\n      priority strict" in text
    assert "random-detect" not in text and "   service-profile QOS-ROCE\n" in text
    assert "   update wait-for-convergence\n   update wait-install" in text and "bgp convergence time 120" in text
    assert "   neighbor RTSW_V4 maximum-routes 1000" in text and "   neighbor RTSW_V4 idle-restart-timer 300" in text
    assert "fields udp dst-port 4791\n         payload bytes 5-7" in text                 # E-ECMP on the BTH dest QP
    assert "profile LINK-DAMPING damping" in text and "queue-monitor length" in text
    assert "username breakglass privilege 15 role network-admin secret sha512 TETON_SECRET_breakglass_sha512" in text
    assert "aaa accounting commands all default start-stop group AAA-MGMT logging" in text


def test_eos_startup_config_keeps_the_eapi_transport_reachable(lab_build):
    """The first EOS deploy locked itself out: the live transport talks eAPI (HTTPS), and no rendered startup-config
    enabled `management api http-commands`.  It is on, HTTPS only, in the management VRF behind the management ACL."""
    text = (lab_build / "devices/z01-ctsw01/startup-config").read_text()
    block = text.split("management api http-commands\n", 1)[1].split("\n!\n", 1)[0].splitlines()
    assert block == ["   protocol https", "   no protocol http", "   no shutdown", "   !", "   vrf mgmt",
                     "      no shutdown", "      ip access-group ACL-MGMT-IN"]


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
