"""The AVD structured config (eos_cli_config_gen schema) of one Arista EOS switch, spelled from the Fabric's device and
its intents.  `teton.targets.eos.avd` validates it and renders it to EOS CLI with pyavd.

The routing spelling matches the FRR one (`teton.targets.frr`) line for line in meaning: per-family peer groups
(passive towards the lower tier), LOCAL_<tag> for connected routes, summary-only aggregates, EXPORT_<tag> permitting all
on a transit switch and only ORIGINATE_<tag> otherwise.  EOS has no per-peer connect-retry timer: it keeps its own.
"""

from __future__ import annotations

from typing import Any

from teton.fabric.intent import Management, Qos, Routing, SwitchPolicy
from teton.fabric.model import Device, Fabric
from teton.secrets import secret_ref

QOS_PROFILE = "QOS-ROCE"
DAMPING_PROFILE = "LINK-DAMPING"
FAMILY_TAG = {"ipv4": "V4", "ipv6": "V6"}
MAX_LEN = {"ipv4": 32, "ipv6": 128}
SIDE = {"up": "uplinks", "down": "downlinks"}


def _dscp_map(qos: Qos) -> list[str]:
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in enumerate(qos.dscp_to_tc):
        by_tc.setdefault(tc, []).append(dscp)
    lines = []
    for tc, dscps in sorted(by_tc.items()):
        for k in range(0, len(dscps), 8):           # EOS takes a handful of code points per line
            lines.append(f"{' '.join(str(d) for d in dscps[k:k + 8])} to traffic-class {tc}")
    return lines


def _qos(qos: Qos) -> dict[str, Any]:
    """DSCP map, the tx queues with the intent's scheduling (weighted shares of the queues that carry traffic, CNP
    strict), ECN on the lossless queue, PFC watchdog."""
    carrying = set(qos.dscp_to_tc)
    shared = [q for q in qos.queues if not q.strict and q.tc in carrying]
    total = sum(q.weight for q in shared) or 1
    queues: list[dict[str, Any]] = []
    for q in qos.queues:
        if q.strict:
            queues.append({"id": q.tc, "comment": "CNP strict priority", "priority": "priority strict"})
        elif q in shared:
            e: dict[str, Any] = {"id": q.tc, "bandwidth_percent": q.weight * 100 // total,
                                 "comment": f"RoCE lossless (PFC priority {q.tc})" if q.role == "lossless"
                                 else "best effort"}
            if q.role == "lossless" and qos.ecn is not None:
                e["random_detect"] = {"ecn": {"threshold": {"units": "kbytes", "min": qos.ecn.min_kbytes,
                                                            "max": qos.ecn.max_kbytes,
                                                            "max_probability": qos.ecn.mark_percent}}}
            queues.append(e)
    profile: dict[str, Any] = {"name": QOS_PROFILE, "tx_queues": queues}
    out: dict[str, Any] = {"qos": {"map": {"dscp": _dscp_map(qos)}}, "qos_profiles": [profile]}
    wd = qos.watchdog
    if wd is not None:
        profile["priority_flow_control"] = {"watchdog": {"enabled": True}}
        out["priority_flow_control"] = {"watchdog": {"action": wd.action, "timeout": f"{wd.detection_ms / 1000:g}",
                                                     "polling_interval": f"{wd.poll_ms / 1000:g}",
                                                     "recovery_time": f"{wd.restoration_ms / 1000:g}"}}
    return out


def _policy(policy: SwitchPolicy) -> dict[str, Any]:
    """E-ECMP: RoCEv2's destination QP (BTH bytes of the UDP payload) in the hash; link-flap dampening; queue
    monitoring."""
    h, damp = policy.hashing, policy.damping
    first, last = h.roce_dqp_bytes
    max_penalty = damp.reuse_threshold * 2 ** (damp.max_suppress_s // damp.half_life_s)
    return {
        "load_balance": {"policies": {"sand_profiles": [{"name": "default", "fields": {"udp": {
            "dst_port": h.roce_udp_port, "payload_bytes": f"{first}-{last}"}}}]}},
        "monitor_link_flap_policy": {
            "damping_profiles": [{"name": DAMPING_PROFILE, "penalty_decay": {"half_life": damp.half_life_s,
                                                                            "units": "seconds"},
                                  "mac_fault_local_penalty": damp.penalty_per_flap,
                                  "mac_fault_remote_penalty": damp.penalty_per_flap,
                                  "penalty_threshold": {"suppression": damp.suppress_threshold,
                                                        "reuse": damp.reuse_threshold, "maximum": max_penalty}}],
            "default_profiles": [DAMPING_PROFILE]},
        "queue_monitor_length": {"enabled": True, "log": policy.monitoring.queue_monitor_log_s},
    }


def _aaa(m: Management, vrf: str) -> dict[str, Any]:
    group = "AAA-MGMT"
    key = secret_ref(m.aaa_key_secret)
    cfg: dict[str, Any] = {}
    if m.aaa_protocol == "tacacs+":
        cfg["tacacs_servers"] = {"timeout": 5, "hosts": [{"host": h, "vrf": vrf, "key": key, "key_type": "7"}
                                                         for h in m.aaa_servers]}
        cfg["ip_tacacs"] = {"vrfs": [{"name": vrf, "source_interface": "Management0"}]}
    else:
        cfg["radius_server"] = {"vrfs": [{"name": vrf, "servers": [{"host": h, "key": key, "key_type": "7"}
                                                                    for h in m.aaa_servers]}]}
        cfg["ip_radius"] = {"vrfs": [{"name": vrf, "source_interface": "Management0"}]}
    cfg["aaa_server_groups"] = [{"name": group, "type": m.aaa_protocol,
                                 "servers": [{"server": h, "vrf": vrf} for h in m.aaa_servers]}]
    cfg["aaa_authentication"] = {"login": {"default": f"group {group} local", "console": "local"}}
    cfg["aaa_authorization"] = {"exec": {"default": f"group {group} local"},
                                "commands": {"all_default": f"group {group} local"}}
    methods = [{"method": "group", "group": group}, {"method": "logging"}]
    cfg["aaa_accounting"] = {"exec": {"default": {"type": "start-stop", "methods": methods}},
                             "commands": {"default": [{"commands": "all", "type": "start-stop", "methods": methods}]}}
    return cfg


def _management(d: Device, m: Management) -> dict[str, Any]:
    vrf = m.vrf
    cfg: dict[str, Any] = {
        "vrfs": [{"name": vrf, "ip_routing": False}],
        "management_interfaces": [{"name": "Management0", "description": "out-of-band management", "shutdown": False,
                                   "vrf": vrf, "ip_address": d.mgmt, "gateway": m.gateway,
                                   "type": "oob"}] if d.mgmt else [],
        "standard_access_lists": [{"name": "ACL-MGMT-IN", "entries": [
            *({"sequence": 10 * n, "action": "permit", "source": p}
              for n, p in enumerate((p for p in m.prefixes if ":" not in p), start=1)),
            {"sequence": 1000, "action": "deny", "source": "any", "log": True}]}],
        "management_ssh": {"enable": True, "idle_timeout": 15, "vrfs": [
            {"name": vrf, "enable": True, "ip_access_group_in": "ACL-MGMT-IN"},
            {"name": "default", "enable": False}]},
        "ntp": {"local_interface": {"name": "Management0", "vrf": vrf}, "vrf": vrf,
                "servers": [{"name": s, "iburst": True} for s in m.ntp_servers]},
        "logging": {"trap": "informational", "vrfs": [{"name": vrf, "source_interface": "Management0",
                                                        "hosts": [{"name": h, "protocol": "udp", "ports": [514]}
                                                                  for h in m.syslog_servers]}]},
    }
    if m.gateway:
        cfg["static_routes"] = [{"vrf": vrf, "prefix": "0.0.0.0/0", "next_hop": m.gateway, "name": "MGMT-DEFAULT"}]
    cfg["local_users"] = [{"name": m.breakglass_user, "privilege": 15, "role": "network-admin",
                           "sha512_password": secret_ref(m.breakglass_secret)}]
    if m.aaa_servers:
        cfg.update(_aaa(m, vrf))
    if m.telemetry == "gnmi":
        cfg["management_api_gnmi"] = {"provider": "eos-native", "transport": {"grpc": [
            {"name": vrf, "vrf": vrf, "ip_access_group": "ACL-MGMT-IN"}]}}
    else:
        cfg["snmp_server"] = {
            "local_interfaces": [{"name": "Management0", "vrf": vrf}],
            "ipv4_acls": [{"name": "ACL-MGMT-IN", "vrf": vrf}],
            "views": [{"name": "VIEW-ALL", "mib_family_name": "iso", "included": True}],
            "groups": [{"name": "GRP-NMS-RO", "version": "v3", "authentication": "priv", "read": "VIEW-ALL"}],
            "users": [{"name": m.snmpv3_user, "group": "GRP-NMS-RO", "version": "v3", "auth": "sha256",
                       "auth_passphrase": secret_ref(m.snmpv3_auth_secret), "priv": "aes",
                       "priv_passphrase": secret_ref(m.snmpv3_priv_secret)}],
            "vrfs": [{"name": vrf, "enable": True}, {"name": "default", "enable": False}]}
    return cfg


def _routing(r: Routing) -> dict[str, Any]:
    prefix_lists: dict[str, list[dict[str, Any]]] = {"ipv4": [], "ipv6": []}
    route_maps: list[dict[str, Any]] = []
    peer_groups: list[dict[str, Any]] = []
    afs: dict[str, dict[str, Any]] = {}
    for fam in r.families():
        tag, match = FAMILY_TAG[fam], "ip" if fam == "ipv4" else "ipv6"
        lo = r.loopback4 if fam == "ipv4" else r.loopback6
        aggs = r.aggregates4 if fam == "ipv4" else r.aggregates6
        local = [{"sequence": 10, "action": f"permit {lo}"}] if lo else []
        local += [{"sequence": 20 + 10 * k, "action": f"permit {a} le {MAX_LEN[fam]}"} for k, a in enumerate(aggs)]
        prefix_lists[fam].append({"name": f"LOCAL_{tag}", "sequence_numbers": local})
        route_maps.append({"name": f"CONNECTED_{tag}", "sequence_numbers": [
            {"sequence": 10, "type": "permit", "match": [f"{match} address prefix-list LOCAL_{tag}"]}]})
        export: dict[str, Any] = {"sequence": 10, "type": "permit"}
        if not r.transit:
            originate = [{"sequence": 10, "action": f"permit {lo}"}] if lo else []
            originate += [{"sequence": 20 + 10 * k, "action": f"permit {a}"} for k, a in enumerate(aggs)]
            prefix_lists[fam].append({"name": f"ORIGINATE_{tag}", "sequence_numbers": originate})
            export["match"] = [f"{match} address prefix-list ORIGINATE_{tag}"]
        if r.drain_prepend:
            export["set"] = [f"as-path prepend {' '.join([str(r.asn)] * r.drain_prepend)}"]
        route_maps.append({"name": f"EXPORT_{tag}", "sequence_numbers": [export]})
        names = []
        for g in r.groups:
            if g.family != fam:
                continue
            pg: dict[str, Any] = {"name": g.name, "send_community": "all",
                                  "timers": f"{r.timers.keepalive} {r.timers.hold}",
                                  "maximum_routes": r.maximum_prefixes,
                                  "description": f"{g.name.removesuffix('_' + tag)} ({SIDE[g.direction]}, {fam})",
                                  "metadata": {"type": SIDE[g.direction]}}
            if g.passive:
                pg["passive"] = True
            if r.password_secret:
                pg["password"] = secret_ref(r.password_secret)
            if r.bfd:
                pg["bfd"] = True
            if r.default_originate and g.direction == "down":
                pg["default_originate"] = {"enabled": True}
            peer_groups.append(pg)
            names.append(g.name)
        afs[fam] = {"peer_groups": [{"name": n, "activate": True, "route_map_out": f"EXPORT_{tag}"} for n in names],
                    "redistribute": {"connected": {"enabled": True, "route_map": f"CONNECTED_{tag}"}}}
    router_bgp: dict[str, Any] = {
        "as": str(r.asn), "router_id": r.router_id,
        "bgp": {"default": {"ipv4_unicast": False}},
        "maximum_paths": {"paths": r.maximum_paths, "ecmp": r.maximum_paths},
        "bgp_defaults": ["bgp bestpath as-path multipath-relax", f"bgp convergence time {r.startup_hold_s}"],
        "updates": {"wait_for_convergence": True, "wait_install": True},
        "peer_groups": peer_groups,
        "neighbors": [{"ip_address": n.address, "peer_group": n.group, "remote_as": str(n.remote_as),
                       "description": n.peer} for n in r.neighbors],
    }
    aggregates = [{"prefix": a, "summary_only": True} for a in r.aggregates4 + r.aggregates6]
    if aggregates:
        router_bgp["aggregate_addresses"] = aggregates
    for family, af in afs.items():
        router_bgp[f"address_family_{family}"] = af
    out: dict[str, Any] = {"router_bgp": router_bgp, "route_maps": route_maps}
    if prefix_lists["ipv4"]:
        out["prefix_lists"] = prefix_lists["ipv4"]
    if prefix_lists["ipv6"]:
        out["ipv6_prefix_lists"] = prefix_lists["ipv6"]
    return out


def structured_config(fabric: Fabric, d: Device) -> dict[str, Any]:
    assert d.routing is not None, f"{d.name}: an EOS switch has a routing intent"
    cfg: dict[str, Any] = {"hostname": d.name, "service_routing_protocols_model": "multi-agent",
                           "spanning_tree": {"mode": "none"}, "ip_routing": True}
    if any(i.ipv6 for i in d.interfaces):
        cfg["ipv6_unicast_routing"] = True
    if d.management is not None:
        cfg.update(_management(d, d.management))
    qos = d.qos
    if qos is not None:
        cfg.update(_qos(qos))
    if d.policy is not None:
        cfg.update(_policy(d.policy))
    lo: dict[str, Any] = {"name": "Loopback0", "description": "router-id and BGP source"}
    if d.loopback4:
        lo["ip_address"] = d.loopback4
    if d.loopback6:
        lo["ipv6_addresses"] = [d.loopback6]
    cfg["loopback_interfaces"] = [lo]
    interfaces = []
    for i in sorted(d.interfaces, key=lambda i: i.ordinal):
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
            e["priority_flow_control"] = {"enabled": True, "priorities": [
                {"priority": p, "no_drop": True} for p in qos.pfc_priorities]}
        interfaces.append(e)
    cfg["ethernet_interfaces"] = interfaces
    cfg.update(_routing(d.routing))
    return cfg
