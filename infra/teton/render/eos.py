"""Arista EOS target (7800R3 CTSW/ATSW and any switch with `nos: eos`).

Per device: an AVD structured config (`devices/<name>/structured-config.json`, eos_cli_config_gen's schema, built
from the same vendor-neutral intent as the SONiC/FRR target), validated with pyavd, then rendered by pyavd to
`devices/<name>/startup-config`.  An Arista switch cannot run on this machine: pyavd's schema and renderer are the
closest real thing, and the digital twin runs the FRR equivalent of the structured config (`teton.twin.eos_frr`).
"""

from __future__ import annotations

import json
from functools import partial
from typing import Any

from teton.design.fabric import Device, Fabric
from teton.findings import Finding
from teton.render.context import RenderContext
from teton.render.intent import bgp_intent, mgmt_intent, qos_intent
from teton.render.parallel import render_devices

NAME = "eos"
QOS_PROFILE = "QOS-ROCE"
FAMILY_TAG = {"ipv4": "V4", "ipv6": "V6"}


def eos_devices(fabric: Fabric) -> list[Device]:
    return [fabric.devices[n] for n in sorted(fabric.devices) if fabric.devices[n].nos == "eos"]


def _dscp_map(qos: dict[str, Any]) -> list[str]:
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in sorted(qos["dscp_to_tc"].items()):
        by_tc.setdefault(tc, []).append(dscp)
    lines = []
    for tc, dscps in sorted(by_tc.items()):
        for k in range(0, len(dscps), 8):           # EOS takes a handful of code points per line
            lines.append(f"{' '.join(str(d) for d in dscps[k:k + 8])} to traffic-class {tc}")
    return lines


def _qos(qos: dict[str, Any]) -> dict[str, Any]:
    lossless, cnp = qos["lossless_priority"], qos["cnp_priority"]
    tx3: dict[str, Any] = {"id": lossless, "comment": f"RoCE lossless (PFC priority {lossless})"}
    if qos["ecn"]:
        tx3["random_detect"] = {"ecn": {"threshold": {"units": "kbytes", "min": qos["ecn_min_kbytes"],
                                                      "max": qos["ecn_max_kbytes"]}}}
    profile: dict[str, Any] = {"name": QOS_PROFILE, "tx_queues": [
        tx3, {"id": cnp, "comment": "CNP strict priority", "priority": "priority strict"}]}
    out: dict[str, Any] = {"qos": {"map": {"dscp": _dscp_map(qos)}}, "qos_profiles": [profile]}
    if qos["pfc_watchdog"]:
        profile["priority_flow_control"] = {"watchdog": {"enabled": True}}
        ms = qos["pfc_watchdog_ms"]
        out["priority_flow_control"] = {"watchdog": {"action": "drop", "timeout": f"{ms / 1000:g}",
                                                     "polling_interval": f"{min(100, ms // 2) / 1000:g}",
                                                     "recovery_time": f"{ms / 1000:g}"}}
    return out


def _management(d: Device, m: dict[str, Any]) -> dict[str, Any]:
    vrf = "MGMT"
    cfg: dict[str, Any] = {
        "vrfs": [{"name": vrf, "ip_routing": False}],
        "management_interfaces": [{"name": "Management0", "description": "out-of-band management", "shutdown": False,
                                   "vrf": vrf, "ip_address": m["address"], "gateway": m["gateway"],
                                   "type": "oob"}] if m["address"] else [],
        "standard_access_lists": [{"name": "ACL-MGMT-IN", "entries": [
            *({"sequence": 10 * n, "action": "permit", "source": p}
              for n, p in enumerate((p for p in m["prefixes"] if ":" not in p), start=1)),
            {"sequence": 1000, "action": "deny", "source": "any", "log": True}]}],
        "management_ssh": {"enable": True, "idle_timeout": 15, "vrfs": [
            {"name": vrf, "enable": True, "ip_access_group_in": "ACL-MGMT-IN"},
            {"name": "default", "enable": False}]},
        "ntp": {"local_interface": {"name": "Management0", "vrf": vrf}, "vrf": vrf,
                "servers": [{"name": s, "iburst": True} for s in m["ntp"]]},
        "logging": {"trap": "informational", "vrfs": [{"name": vrf, "source_interface": "Management0",
                                                        "hosts": [{"name": h, "protocol": "udp", "ports": [514]}
                                                                  for h in m["syslog"]]}]},
    }
    if m["gateway"]:
        cfg["static_routes"] = [{"vrf": vrf, "prefix": "0.0.0.0/0", "next_hop": m["gateway"], "name": "MGMT-DEFAULT"}]
    if m["aaa_servers"]:
        group = "AAA-MGMT"
        if m["aaa_protocol"] == "tacacs+":
            cfg["tacacs_servers"] = {"timeout": 5, "hosts": [{"host": h, "vrf": vrf, "key": m["aaa_key"],
                                                              "key_type": "7"} for h in m["aaa_servers"]]}
            cfg["ip_tacacs"] = {"vrfs": [{"name": vrf, "source_interface": "Management0"}]}
            kind = "tacacs+"
        else:
            cfg["radius_server"] = {"hosts": [{"host": h, "vrf": vrf, "key": m["aaa_key"], "key_type": "7"}
                                              for h in m["aaa_servers"]]}
            cfg["ip_radius_source_interfaces"] = [{"name": "Management0", "vrf": vrf}]
            kind = "radius"
        cfg["aaa_server_groups"] = [{"name": group, "type": kind,
                                     "servers": [{"server": h, "vrf": vrf} for h in m["aaa_servers"]]}]
        cfg["aaa_authentication"] = {"login": {"default": f"group {group} local", "console": "local"}}
        cfg["aaa_authorization"] = {"exec": {"default": f"group {group} local"},
                                    "commands": {"all_default": f"group {group} local"}}
    if m["telemetry"] == "gnmi":
        cfg["management_api_gnmi"] = {"provider": "eos-native", "transport": {"grpc": [
            {"name": vrf, "vrf": vrf, "ip_access_group": "ACL-MGMT-IN"}]}}
    else:
        cfg["snmp_server"] = {
            "local_interfaces": [{"name": "Management0", "vrf": vrf}],
            "ipv4_acls": [{"name": "ACL-MGMT-IN", "vrf": vrf}],
            "views": [{"name": "VIEW-ALL", "mib_family_name": "iso", "included": True}],
            "groups": [{"name": "GRP-NMS-RO", "version": "v3", "authentication": "priv", "read": "VIEW-ALL"}],
            "users": [{"name": m["snmpv3_user"], "group": "GRP-NMS-RO", "version": "v3", "auth": "sha256",
                       "auth_passphrase": m["snmpv3_auth"], "priv": "aes", "priv_passphrase": m["snmpv3_priv"]}],
            "vrfs": [{"name": vrf, "enable": True}, {"name": "default", "enable": False}]}
    return cfg


def _routing(d: Device, bgp: dict[str, Any]) -> dict[str, Any]:
    prefix_lists: list[dict[str, Any]] = []
    ipv6_prefix_lists: list[dict[str, Any]] = []
    route_maps: list[dict[str, Any]] = []
    families = [f for f in ("ipv4", "ipv6") if any(n["family"] == f for n in bgp["neighbors"])]
    peer_groups: list[dict[str, Any]] = []
    af: dict[str, Any] = {}
    for fam in families:
        tag = FAMILY_TAG[fam]
        lo, aggs = bgp[f"loopback{fam[-1]}"], bgp[f"aggregates{fam[-1]}"]
        le = 32 if fam == "ipv4" else 128
        local = [{"sequence": 10, "action": f"permit {lo}"}] if lo else []
        local += [{"sequence": 20 + 10 * k, "action": f"permit {a} le {le}"} for k, a in enumerate(aggs)]
        (prefix_lists if fam == "ipv4" else ipv6_prefix_lists).append(
            {"name": f"LOCAL_{tag}", "sequence_numbers": local})
        match = "ip" if fam == "ipv4" else "ipv6"
        route_maps.append({"name": f"CONNECTED_{tag}", "sequence_numbers": [
            {"sequence": 10, "type": "permit", "match": [f"{match} address prefix-list LOCAL_{tag}"]}]})
        route_maps.append({"name": f"EXPORT_{tag}", "sequence_numbers": [{"sequence": 10, "type": "permit"}]})
        names = []
        for g in bgp["peer_groups"]:
            if any(n["peer_group"] == g["name"] and n["family"] == fam for n in bgp["neighbors"]):
                side = "uplinks" if g["direction"] == "up" else "downlinks"
                pg: dict[str, Any] = {"name": f"{g['name']}_{tag}", "send_community": "all",
                                      "timers": f"{bgp['keepalive']} {bgp['hold']}",
                                      "description": f"{g['name']} ({side}, {fam})"}
                if bgp["password"]:
                    pg["password"] = bgp["password"]
                if bgp["bfd"]:
                    pg["bfd"] = True
                peer_groups.append(pg)
                names.append(pg["name"])
        af[fam] = {"peer_groups": [{"name": n, "activate": True, "route_map_out": f"EXPORT_{tag}"} for n in names],
                   "redistribute": {"connected": {"enabled": True, "route_map": f"CONNECTED_{tag}"}}}
    router_bgp: dict[str, Any] = {
        "as": str(bgp["asn"]), "router_id": bgp["router_id"],
        "bgp": {"default": {"ipv4_unicast": False}},
        "maximum_paths": {"paths": bgp["maximum_paths"], "ecmp": bgp["maximum_paths"]},
        "bgp_defaults": ["bgp bestpath as-path multipath-relax"],
        "peer_groups": peer_groups,
        "neighbors": [{"ip_address": n["ip"], "peer_group": f"{n['peer_group']}_{FAMILY_TAG[n['family']]}",
                       "remote_as": str(n["remote_as"]), "description": n["description"]}
                      for n in bgp["neighbors"]],
    }
    if "ipv4" in af:
        router_bgp["address_family_ipv4"] = {"peer_groups": af["ipv4"]["peer_groups"],
                                             "redistribute": af["ipv4"]["redistribute"]}
    if "ipv6" in af:
        router_bgp["address_family_ipv6"] = {"peer_groups": af["ipv6"]["peer_groups"],
                                             "redistribute": af["ipv6"]["redistribute"]}
    out: dict[str, Any] = {"router_bgp": router_bgp, "route_maps": route_maps}
    if prefix_lists:
        out["prefix_lists"] = prefix_lists
    if ipv6_prefix_lists:
        out["ipv6_prefix_lists"] = ipv6_prefix_lists
    return out


def structured_config(fabric: Fabric, d: Device, qos: dict[str, Any] | None) -> dict[str, Any]:
    bgp = bgp_intent(fabric, d)
    cfg: dict[str, Any] = {"hostname": d.name, "service_routing_protocols_model": "multi-agent",
                           "spanning_tree": {"mode": "none"}, "ip_routing": True}
    if any(i.ipv6 for i in d.interfaces):
        cfg["ipv6_unicast_routing"] = True
    cfg.update(_management(d, mgmt_intent(fabric, d)))
    if qos is not None:
        cfg.update(_qos(qos))
    lo: dict[str, Any] = {"name": "Loopback0", "description": "router-id and BGP source"}
    if d.loopback4:
        lo["ip_address"] = d.loopback4
    if d.loopback6:
        lo["ipv6_addresses"] = [d.loopback6]
    cfg["loopback_interfaces"] = [lo]
    interfaces = []
    for i in sorted(d.interfaces, key=lambda i: i.index):
        e: dict[str, Any] = {"name": i.name, "description": f"P2P {i.peer} {i.peer_port}", "shutdown": False,
                             "mtu": i.mtu, "speed": f"{i.speed_gbps}g", "switchport": {"enabled": False},
                             "metadata": {"peer": i.peer, "peer_interface": i.peer_port,
                                          "peer_type": fabric.devices[i.peer].role}}
        if i.ipv4:
            e["ip_address"] = i.ipv4
        if i.ipv6:
            e["ipv6_enable"] = True
            e["ipv6_addresses"] = [i.ipv6]
        if qos is not None:
            e["qos"] = {"trust": "dscp"}
            e["service_profile"] = QOS_PROFILE
            e["priority_flow_control"] = {"enabled": True,
                                          "priorities": [{"priority": qos["lossless_priority"], "no_drop": True}]}
        interfaces.append(e)
    cfg["ethernet_interfaces"] = interfaces
    cfg.update(_routing(d, bgp))
    return cfg


def dump_json(cfg: dict[str, Any]) -> str:
    """The structured config as JSON (a YAML subset: AVD tooling reads it; 50x faster to load than YAML)."""
    return json.dumps(cfg, indent=1, sort_keys=True) + "\n"


def _render_chunk(fabric: Fabric, ctx: RenderContext, names: list[str]) -> tuple[dict[str, str], list[Finding]]:
    from teton.render.eos_avd import AvdValidationError, render_eos_config

    qos = qos_intent(fabric) if fabric.qos else None
    files: dict[str, str] = {}
    problems: list[Finding] = []
    for name in names:
        d = fabric.devices[name]
        cfg = structured_config(fabric, d, qos if d.plane == "backend" else None)
        path = f"devices/{name}/structured-config.json"
        files[path] = dump_json(cfg)
        try:
            files[f"devices/{name}/startup-config"] = render_eos_config(cfg)   # validates with pyavd first
        except AvdValidationError as exc:
            problems += [Finding(path, i.path, i.message, rule="avd-schema") for i in exc.issues]
    return files, problems


def render(fabric: Fabric, ctx: RenderContext) -> dict[str, str]:
    return render_devices(partial(_render_chunk, fabric, ctx), [d.name for d in eos_devices(fabric)])
