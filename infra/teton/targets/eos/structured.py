"""The AVD structured config (eos_cli_config_gen schema) of one Arista EOS switch, spelled from the Fabric's device and
its intents.  `teton.targets.eos.avd` validates it and renders it to EOS CLI with pyavd.

The routing spelling matches the FRR one (`teton.targets.frr`) line for line in meaning: per-family peer groups
(passive towards the lower tier), summary-only aggregates, and the route-policy layout both read from
`teton.frr.policy` (LOCAL_<tag> for connected routes, EXPORT_<tag> permitting all on a transit switch and only
ORIGINATE_<tag> otherwise; EOS carries ORIGINATE_<tag> only where EXPORT_<tag> matches it; IMPORT_<x> inbound per
peer group or neighbour as `teton.frr.policy.import_targets` says).  EOS has no per-peer connect-retry timer: it keeps
its own.
"""

from __future__ import annotations

from typing import Any

from teton.fabric.intent import Ecn, Family, ManagementIntent, Qos, Routing, SwitchPolicy
from teton.fabric.model import Device, Fabric, Interface
from teton.fabric.neighbours import Neighbour, expected
from teton.frr.policy import TAG, PrefixList, RouteMap, import_policy, route_policy
from teton.secrets import secret_ref
from teton.targets.tokens import token

STRUCTURED = "structured-config.json"   # the file of the switch's folder it is written to
QOS_PROFILE = "QOS-ROCE"
DAMPING_PROFILE = "LINK-DAMPING"
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


QUEUE_COMMENT = {"lossless": "RoCE lossless (PFC priority {tc})", "cnp": "CNP strict priority",
                 "control": "collective control (CTS) strict priority", "best-effort": "best effort",
                 "idle": "no traffic class"}


def qos_profile_name(ecn: Ecn | None) -> str:
    """One profile per set of thresholds: QOS-ROCE when PFC only, QOS-ROCE-<speed>G per port speed with ECN."""
    return QOS_PROFILE if ecn is None else f"{QOS_PROFILE}-{ecn.speed_gbps}G"


def _tx_queues(qos: Qos, ecn: Ecn | None) -> list[dict[str, Any]]:
    """Every queue spelled: EOS queues are strict priority by default and `bandwidth percent` counts only on
    round-robin ones, so a DWRR queue says `no priority`; thresholds in bytes, the intent's numbers as they are."""
    queues: list[dict[str, Any]] = []
    for q in qos.queues:
        e: dict[str, Any] = {"id": q.tc, "comment": QUEUE_COMMENT[q.role].format(tc=q.tc)}
        if q.strict:
            e["priority"] = "priority strict"
        else:
            e["priority"] = "no priority"
            e["bandwidth_percent"] = q.weight
        if q.role == "lossless" and ecn is not None:
            e["random_detect"] = {"ecn": {"threshold": {"units": "bytes", "min": ecn.min_bytes, "max": ecn.max_bytes,
                                                        "max_probability": ecn.mark_percent}}}
        queues.append(e)
    return queues


def _qos(qos: Qos, profiles: list[Ecn | None]) -> dict[str, Any]:
    """DSCP map, one QoS profile per set of ECN thresholds the switch's ports use (the intent's scheduling on every
    queue), PFC watchdog."""
    out: dict[str, Any] = {"qos": {"map": {"dscp": _dscp_map(qos)}}, "qos_profiles": []}
    wd = qos.watchdog
    for ecn in profiles:
        profile: dict[str, Any] = {"name": qos_profile_name(ecn), "tx_queues": _tx_queues(qos, ecn)}
        if wd is not None:
            profile["priority_flow_control"] = {"watchdog": {"enabled": True}}
        out["qos_profiles"].append(profile)
    if wd is not None:
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


def _aaa(m: ManagementIntent, vrf: str) -> dict[str, Any]:
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


TLS_PROFILE = "MGMT-TLS"   # the switch's certificate and the site CA's: gNMI's server side, syslog's client side
TLS_FILES = {"certificate": "teton-switch.crt", "key": "teton-switch.key", "ca": "teton-ca.crt"}   # in certificate:
SYSLOG_TLS_PORT = 6514     # syslog over TLS (RFC 5425)


def _syslog_host(host: str, tls: bool) -> dict[str, Any]:
    if tls:
        return {"name": host, "protocol": "tls", "ports": [SYSLOG_TLS_PORT], "ssl_profile": TLS_PROFILE}
    return {"name": host, "protocol": "udp", "ports": [514]}


def _tls(m: ManagementIntent) -> dict[str, Any]:
    """The management plane's TLS: one SSL profile with the switch's certificate and key and the site CA as the only
    trust anchor (so gNMI takes only clients whose certificate the CA signed, and syslog over TLS only a server it
    signed), TLS 1.2 and 1.3.  The files are the site's, installed in `certificate:` before the first push."""
    if m.telemetry != "gnmi" and not (m.syslog_tls and m.syslog_servers):
        return {}
    return {"management_security": {"ssl_profiles": [{
        "name": TLS_PROFILE, "tls_versions": "1.2 1.3",
        "certificate": {"file": TLS_FILES["certificate"], "key": TLS_FILES["key"]},
        "trust_certificate": {"certificates": [TLS_FILES["ca"]]}}]}}


def _ntp(m: ManagementIntent, vrf: str) -> dict[str, Any]:
    """NTP in the management VRF; with a key, time only from servers that sign with it (key 1, SHA-1, given in clear
    at push time and kept by EOS as it stores keys)."""
    ntp: dict[str, Any] = {"local_interface": {"name": "Management0", "vrf": vrf}, "vrf": vrf,
                           "servers": [{"name": s, "iburst": True} for s in m.ntp_servers]}
    if m.ntp_key_secret:
        ntp["authentication_keys"] = [{"id": 1, "hash_algorithm": "sha1", "key_type": "0",
                                       "key": secret_ref(m.ntp_key_secret)}]
        ntp["trusted_keys"] = "1"
        ntp["authenticate_servers_only"] = True
        for s in ntp["servers"]:
            s["key"] = 1
    return ntp


def _management(d: Device, m: ManagementIntent) -> dict[str, Any]:
    vrf = token(m.vrf, d.name, "management.vrf", "startup-config")
    for field in ("snmpv3_user", "breakglass_user"):
        token(getattr(m, field), d.name, f"management.{field}", "startup-config")
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
        # eAPI, the transport deploy pushes and checks over (teton.deploy.eapi): HTTPS only, in the management VRF,
        # behind the management ACL, so the switch stays reachable after the first commit
        "management_api_http": {"enable_https": True, "enable_http": False,
                                "enable_vrfs": [{"name": vrf, "access_group": "ACL-MGMT-IN"}]},
        "ntp": _ntp(m, vrf),
        "logging": {"trap": "informational", "vrfs": [{"name": vrf, "source_interface": "Management0",
                                                        "hosts": [_syslog_host(h, m.syslog_tls)
                                                                  for h in m.syslog_servers]}]},
        **_tls(m),
    }
    if m.gateway:
        cfg["static_routes"] = [{"vrf": vrf, "prefix": "0.0.0.0/0", "next_hop": m.gateway, "name": "MGMT-DEFAULT"}]
    cfg["local_users"] = [{"name": m.breakglass_user, "privilege": 15, "role": "network-admin",
                           "sha512_password": secret_ref(m.breakglass_secret)}]
    if m.aaa_servers:
        cfg.update(_aaa(m, vrf))
    if m.telemetry == "gnmi":
        # TLS with client certificates: the profile trusts the site CA only (`_tls`)
        cfg["management_api_gnmi"] = {"provider": "eos-native", "transport": {"grpc": [
            {"name": vrf, "vrf": vrf, "ip_access_group": "ACL-MGMT-IN", "ssl_profile": TLS_PROFILE}]}}
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


def _prefix_list(pl: PrefixList) -> dict[str, Any]:
    return {"name": pl.name, "sequence_numbers": [
        {"sequence": e.seq, "action": f"permit {e.prefix}" + (f" ge {e.ge}" if e.ge is not None else "")
         + (f" le {e.le}" if e.le is not None else "")}
        for e in pl.entries]}


def _imports(r: Routing, af: dict[str, Any], fam: Family, match: str) -> tuple[list[dict[str, Any]],
                                                                            list[dict[str, Any]]]:
    """The inbound policy of one family: its prefix lists and route maps, applied (`route_map_in`) in `af` to the
    peer groups or neighbours `import_policy` names."""
    groups = {g["name"]: g for g in af["peer_groups"]}
    neighbors: list[dict[str, Any]] = []
    inbound = import_policy(r, fam)
    for i in inbound:
        for who in i.targets:
            if who in groups:
                groups[who]["route_map_in"] = i.route_map.name
            else:
                neighbors.append({"ip_address": who, "route_map_in": i.route_map.name})
    if neighbors:
        af["neighbors"] = neighbors
    return [_prefix_list(i.prefix_list) for i in inbound], [_route_map(i.route_map, match) for i in inbound]


def _route_map(rm: RouteMap, match: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"sequence": rm.seq, "type": "permit"}
    if rm.match is not None:
        entry["match"] = [f"{match} address prefix-list {rm.match}"]
    if rm.prepend:
        entry["set"] = [f"as-path prepend {' '.join(map(str, rm.prepend))}"]
    return {"name": rm.name, "sequence_numbers": [entry]}


def _routing(r: Routing) -> dict[str, Any]:
    prefix_lists: dict[str, list[dict[str, Any]]] = {"ipv4": [], "ipv6": []}
    route_maps: list[dict[str, Any]] = []
    peer_groups: list[dict[str, Any]] = []
    afs: dict[str, dict[str, Any]] = {}
    for policy in route_policy(r):
        fam, tag, match = policy.family, TAG[policy.family], "ip" if policy.family == "ipv4" else "ipv6"
        prefix_lists[fam].append(_prefix_list(policy.local))
        route_maps.append(_route_map(policy.connected, match))
        if policy.export.match is not None:
            prefix_lists[fam].append(_prefix_list(policy.originate))
        route_maps.append(_route_map(policy.export, match))
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
            if r.ttl_security_hops:
                pg["ttl_maximum_hops"] = r.ttl_security_hops   # `neighbor G ttl maximum-hops N`: EOS's GTSM
            if r.default_originate and g.direction == "down":
                pg["default_originate"] = {"enabled": True}
            peer_groups.append(pg)
            names.append(g.name)
        afs[fam] = {"peer_groups": [{"name": n, "activate": True, "route_map_out": policy.export.name}
                                    for n in names],
                    "redistribute": {"connected": {"enabled": True, "route_map": policy.connected.name}}}
        in_lists, in_maps = _imports(r, afs[fam], fam, match)
        prefix_lists[fam] += in_lists
        route_maps += in_maps
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
    if r.maximum_prefix_restart_min and peer_groups:
        # FRR's `maximum-prefix N restart M`: EOS brings a session its maximum-routes tore down back after the idle
        # restart timer (seconds); pyavd has no key for it
        router_bgp["eos_cli"] = "\n".join(f"neighbor {g['name']} idle-restart-timer {60 * r.maximum_prefix_restart_min}"
                                          for g in peer_groups)
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


def _description(i: Interface, n: Neighbour | None) -> str:
    """The far end as its LLDP announces it (system name and port id) and the cable between them."""
    if n is None:
        return f"P2P {i.peer} {i.peer_port}"
    return f"P2P {n.system} {n.port_id} cable {n.cable}"


def structured_config(fabric: Fabric, d: Device) -> dict[str, Any]:
    assert d.routing is not None, f"{d.name}: an EOS switch has a routing intent"
    cfg: dict[str, Any] = {"hostname": d.name, "service_routing_protocols_model": "multi-agent",
                           "spanning_tree": {"mode": "none"}, "ip_routing": True}
    if any(i.ipv6 for i in d.interfaces):
        cfg["ipv6_unicast_routing"] = True
    if d.management is not None:
        cfg.update(_management(d, d.management))
    qos = d.qos
    buffering = fabric.models[d.model].buffering
    port_ecn = {i.name: qos.ecn_for(i.speed_gbps, buffering) for i in d.interfaces} if qos is not None else {}
    if qos is not None:
        cfg.update(_qos(qos, sorted(set(port_ecn.values()), key=lambda e: e.speed_gbps if e else 0)))
    if d.policy is not None:
        cfg.update(_policy(d.policy))
    lo: dict[str, Any] = {"name": "Loopback0", "description": "router-id and BGP source"}
    if d.loopback4:
        lo["ip_address"] = d.loopback4
    if d.loopback6:
        lo["ipv6_addresses"] = [d.loopback6]
    cfg["loopback_interfaces"] = [lo]
    interfaces = []
    lldp = {n.port: n for n in expected(fabric, d)}
    for i in sorted(d.interfaces, key=lambda i: i.ordinal):
        e: dict[str, Any] = {"name": i.name, "description": _description(i, lldp.get(i.name)), "shutdown": False,
                             "mtu": i.mtu, "speed": f"{i.speed_gbps}g", "switchport": {"enabled": False},
                             "metadata": {"peer": i.peer, "peer_interface": i.peer_port,
                                          "peer_type": fabric.device(i.peer).role}}
        if i.ipv4:
            e["ip_address"] = i.ipv4
        if i.ipv6:
            e["ipv6_enable"] = True
            e["ipv6_addresses"] = [i.ipv6]
        if qos is not None:
            e["qos"] = {"trust": "dscp"}
            e["service_profile"] = qos_profile_name(port_ecn[i.name])
            e["priority_flow_control"] = {"enabled": True, "priorities": [
                {"priority": p, "no_drop": True} for p in qos.pfc_priorities]}
        interfaces.append(e)
    cfg["ethernet_interfaces"] = interfaces
    cfg.update(_routing(d.routing))
    return cfg
