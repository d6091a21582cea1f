"""Host by host, each NIC's lossless priority, DSCP, CNP and MTU equal what its RTSW's rendered config says, read from
the rendered files only (the inventory's variables against each RTSW's config_db.json); port names come from the
Fabric."""

from __future__ import annotations

import json

from tests.hosts.harness import variables


def _vars(build, host: str) -> dict:
    out: dict = {}
    for rel in ("ansible/group_vars/all.yml", "ansible/group_vars/gpu.yml", f"ansible/host_vars/{host}.json"):
        out.update(variables(build / rel))
    return out


def test_every_nic_agrees_with_its_rtsw_port(lab_build, lab_fabric):
    configs: dict[str, dict] = {}
    checked = 0
    for host in lab_fabric.by_role("host"):
        v = _vars(lab_build, host.name)
        q = v["teton_qos"]
        for rail in v["teton_rails"]:
            iface = host.interface(rail["name"])
            assert iface is not None and (rail["switch"], rail["switch_port"]) == (iface.peer, iface.peer_port)
            sw = lab_fabric.devices[iface.peer]
            assert sw.nos == "sonic"
            db = configs.setdefault(sw.name, json.loads((lab_build / f"devices/{sw.name}/config_db.json").read_text()))
            port = db["PORT"][iface.peer_port]
            pq = db["PORT_QOS_MAP"][iface.peer_port]
            dscp_map = db["DSCP_TO_TC_MAP"][pq["dscp_to_tc_map"]]
            assert int(port["mtu"]) == rail["mtu"], (host.name, rail["name"])
            assert [int(p) for p in pq["pfc_enable"].split(",")] == q["pfc_priorities"] == [q["lossless_priority"]]
            assert int(dscp_map[str(q["roce_dscp"])]) == q["lossless_priority"]
            assert int(dscp_map[str(q["cnp_dscp"])]) == q["cnp_priority"]
            assert q["cnp_priority"] not in q["pfc_priorities"]
            assert [int(dscp_map[str(d)]) for d in range(64)] == q["dscp_to_priority"]
            assert q["roce_tos"] >> 2 == q["roce_dscp"] and v["teton_nccl"]["ib_tc"] == q["roce_tos"]
            ecn_on_switch = any("wred_profile" in row for key, row in db.get("QUEUE", {}).items()
                                if key == f"{iface.peer_port}|{q['lossless_priority']}")
            assert ecn_on_switch == q["ecn"] == bool(q["roce_tos"] & 3)
            checked += 1
    assert checked == 8 * 8
