"""The FBOSS agent config (`AgentConfig`, thrift SimpleJSON: enums as integers, map keys as strings) of one switch,
spelled from the Fabric's device and its intents.

- `platform`, `defaultCommandLineArgs`, `thriftApiToRateLimitInQps` and the hardware part of `sw.switchSettings`
  (switch type, ASIC type, port id range) are FBOSS's base config for the box (`data.base_config`), its deprecated
  fields left out, and without the command-line flags of FBOSS's hardware tests (`HW_TEST_FLAGS`): the base config
  is FBOSS's hw-test config of the box;
- `sw.ports`: every port of the box as the catalogue names it, by the platform mapping's logical id, with the speed
  profile of the link's speed and medium (copper for DAC, else optical); cabled ports ENABLED and routed, the rest
  DISABLED at their native speed;
- a routed port is a VLAN of its own (`1000 + port ordinal`) with one interface holding the link's /31 and /127 at the
  link MTU; the loopback is a virtual interface on VLAN 10; the default VLAN 4094 holds nothing;
- the control plane: FBOSS's CPU queues and which packets reach which (BGP, LACP, ARP/NDP first);
- the ECMP hash of the policy: the 5-tuple, and RoCE's destination QP through a UDF on the BTH (FBOSS hashes it, where
  SONiC cannot);
- QoS (`teton.targets.fboss.qos`) on backend switches;
- `switchSettings.ecmpWidth`: the routing intent's multipath width (BGP++'s BgpConfig has none of its own).

The management plane (NTP, syslog, AAA, telemetry) is the switch's Linux host's, not the agent's: nothing here.
"""

from __future__ import annotations

import json
from typing import Any

from teton.catalogue.ports import Port
from teton.fabric.intent import SwitchPolicy
from teton.fabric.model import Device, Fabric, Interface
from teton.findings import Finding
from teton.targets.fboss import enums as E
from teton.targets.fboss.platform import PlatformMap
from teton.targets.fboss.qos import qos_config

HW_TEST_FLAGS: dict[str, str] = {
    "skip_transceiver_programming": "the agent leaves the transceivers unprogrammed (a test box's optics are not "
                                    "the test's): a production switch's optical uplinks would not come up",
    "verify_fib_nexthop_id_consistency": "FBOSS sets it for agent-hw-tests only: a next-hop id inconsistency "
                                         "aborts the agent (CHECK) instead of being a debug-build check",
    "check_wb_handles": "fail if any warm-boot handle is left unclaimed: a test assertion that would stop the agent "
                        "after a warm boot",
    "counter_refresh_interval": "0 reads every counter from the ASIC (exact counts for tests) instead of the SAI "
                                "counter cache's 1 s",
}
"""`defaultCommandLineArgs` of FBOSS's hw-test configs that a production switch must not run with, and why
(docs/switch-configs.md lists them): the agent config leaves them out."""

DEFAULT_VLAN = 4094
LOOPBACK_VLAN = 10
PORT_VLAN_BASE = 1000
MAX_FRAME = 9412                       # FBOSS's DEFAULT_PORT_MTU: the L2 frame; the interfaces carry the IP MTU
SERVER_ROLES = ("host", "storage", "service")
UDF_GROUP = "roce_dst_qp"
UDF_MATCHER = "roce_udp"
_BASE_SW = ("arpAgerInterval", "arpRefreshSeconds", "arpTimeoutSeconds", "clientIdToAdminDistance", "maxNeighborProbes",
            "staleEntryInterval", "aclTableGroups")


def port_vlan(i: Interface) -> int:
    return PORT_VLAN_BASE + i.ordinal


_COMPACT = json.JSONEncoder(sort_keys=True, separators=(", ", ": ")).encode
EXPANDED = 3     # objects and arrays nested deeper than this are written on one line


def _dump(value: Any, depth: int, out: list[str]) -> None:
    if depth >= EXPANDED or not isinstance(value, dict | list) or not value:
        out.append(_COMPACT(value))
        return
    pad = " " * (depth + 1)
    items = sorted(value.items()) if isinstance(value, dict) else list(enumerate(value))
    out.append("{\n" if isinstance(value, dict) else "[\n")
    for n, (k, v) in enumerate(items):
        out.append(pad + (_COMPACT(k) + ": " if isinstance(value, dict) else ""))
        _dump(v, depth + 1, out)
        out.append(",\n" if n < len(items) - 1 else "\n")
    out.append(" " * depth + ("}" if isinstance(value, dict) else "]"))


def dump_json(cfg: dict[str, Any]) -> str:
    """A config as JSON, keys sorted: one member per line down to depth 3 (a port, a queue, a peer each on one
    line, so a diff shows what changed of which), deeper values on their line; as fast as the C encoder."""
    out: list[str] = []
    _dump(cfg, 0, out)
    return "".join(out) + "\n"


def _switch_settings(base: dict[str, Any], deprecated: frozenset[str]) -> dict[str, Any]:
    out = {k: v for k, v in base.get("sw", {}).get("switchSettings", {}).items()
           if f"switch_config.SwitchSettings.{k}" not in deprecated and not k.endswith("_DEPRECATED")}
    return out


def _port(fabric: Fabric, p: Port, i: Interface | None, pm: PlatformMap, path: str, k: int,
          problems: list[Finding]) -> dict[str, Any] | None:
    pp = pm.ports.get(p.name)
    if pp is None:
        problems.append(Finding(path, f"sw.ports[{k}]", f"port {p.name} is not in FBOSS's {pm.platform} platform "
                                "mapping", rule="fboss-ports"))
        return None
    speed = i.speed_gbps if i is not None else p.speed_gbps
    profile = pm.profile_for(pp, speed, i.medium if i is not None else "smf")
    if profile is None:
        problems.append(Finding(path, f"sw.ports[{k}].profileID", f"{pm.platform} port {p.name} supports no "
                                f"profile at {speed}G", rule="fboss-ports"))
        return None
    e: dict[str, Any] = {"logicalID": pp.id, "name": p.name, "speed": profile.speed_mbps, "profileID": profile.id,
                         "portType": E.INTERFACE_PORT, "minFrameSize": 64, "maxFrameSize": MAX_FRAME}
    if i is None:
        e.update(state=E.DISABLED, routable=False, parserType=E.L3, ingressVlan=DEFAULT_VLAN,
                 description="unused")
        return e
    e.update(state=E.ENABLED, routable=True, parserType=E.L4, ingressVlan=port_vlan(i),
             description=f"P2P {i.peer} {i.peer_port}")
    if fabric.device(i.peer).role not in SERVER_ROLES:
        e["expectedLLDPValues"] = {str(E.LLDP_PORT): i.peer_port, str(E.LLDP_SYSTEM_NAME): i.peer}
    return e


def _vlans_and_interfaces(d: Device) -> tuple[list[Any], list[Any], list[Any]]:
    vlans: list[dict[str, Any]] = [{"name": "default", "id": DEFAULT_VLAN, "routable": False, "ipAddresses": []},
                                   {"name": "loopback", "id": LOOPBACK_VLAN, "routable": True, "ipAddresses": [],
                                    "intfID": LOOPBACK_VLAN}]
    vlan_ports: list[dict[str, Any]] = []
    lo = [a for a in (d.loopback4, d.loopback6) if a]
    interfaces: list[dict[str, Any]] = [{"intfID": LOOPBACK_VLAN, "routerID": 0, "vlanID": LOOPBACK_VLAN,
                                         "name": "lo", "ipAddresses": lo, "isVirtual": True, "type": E.INTF_VLAN}]
    for i in sorted(d.interfaces, key=lambda i: i.ordinal):
        vlan = port_vlan(i)
        addrs = [a for a in (i.ipv4, i.ipv6) if a]
        vlans.append({"name": f"vlan{vlan}", "id": vlan, "routable": True, "ipAddresses": [], "intfID": vlan})
        vlan_ports.append({"vlanID": vlan, "logicalPort": -1, "spanningTreeState": E.FORWARDING, "emitTags": False,
                           "emitPriorityTags": False, "_port": i.name})
        intf: dict[str, Any] = {"intfID": vlan, "routerID": 0, "vlanID": vlan, "name": i.name, "mtu": i.mtu,
                                "ipAddresses": addrs, "isVirtual": False, "type": E.INTF_VLAN}
        if i.ipv6:
            intf["ndp"] = {"routerAdvertisementSeconds": 0}
        interfaces.append(intf)
    vlans.sort(key=lambda v: v["id"])
    return vlans, vlan_ports, interfaces


def control_plane() -> dict[str, Any]:
    """FBOSS's CPU queues (low, default, mid, high) and the packets each takes: routing and link protocols high."""
    queues = [{"id": q, "name": name, "streamType": E.UNICAST, "scheduling": E.WRR, "weight": w}
              for q, name, w in ((0, "cpuQueue-low", 1), (1, "cpuQueue-default", 2), (2, "cpuQueue-mid", 4),
                                 (9, "cpuQueue-high", 8))]
    reasons = [(E.RX_BGP, 9), (E.RX_BGPV6, 9), (E.RX_LACP, 9), (E.RX_ARP, 9), (E.RX_ARP_RESPONSE, 9),
               (E.RX_NDP, 9), (E.RX_LLDP, 2), (E.RX_DHCP, 2), (E.RX_DHCPV6, 2), (E.RX_TTL_1, 0),
               (E.RX_L3_MTU_ERROR, 0), (E.RX_CPU_IS_NHOP, 1), (E.RX_L3_DEST_MISS, 1), (E.RX_UNMATCHED, 1)]
    return {"cpuQueues": queues,
            "cpuTrafficPolicy": {"rxReasonToQueueOrderedList": [{"rxReason": r, "queueId": q} for r, q in reasons]}}


def hashing(policy: SwitchPolicy) -> dict[str, Any]:
    """ECMP over the 5-tuple and the BTH's destination QP (a UDF group on RoCEv2's UDP port)."""
    h = policy.hashing
    first, last = h.roce_dqp_bytes
    udp_header = 8
    return {
        "udfConfig": {
            "udfGroups": {UDF_GROUP: {"name": UDF_GROUP, "header": E.UDF_L4_HEADER,
                                      "startOffsetInBytes": udp_header + first, "fieldSizeInBytes": last - first + 1,
                                      "udfPacketMatcherIds": [UDF_MATCHER], "type": E.UDF_HASH}},
            "udfPacketMatcher": {UDF_MATCHER: {"name": UDF_MATCHER, "l2PktType": E.UDF_L2_ETH,
                                               "l3pktType": E.UDF_L3_ANY, "l4PktType": E.UDF_L4_UDP,
                                               "UdfL4DstPort": h.roce_udp_port}}},
        "loadBalancers": [{"id": E.LB_ECMP, "algorithm": E.CRC16_CCITT,
                           "fieldSelection": {"ipv4Fields": [E.SRC_ADDR, E.DST_ADDR],
                                              "ipv6Fields": [E.SRC_ADDR, E.DST_ADDR, E.FLOW_LABEL],
                                              "transportFields": [E.SRC_PORT, E.DST_PORT], "mplsFields": [],
                                              "udfGroups": [UDF_GROUP]}}],
    }


def agent_config(fabric: Fabric, d: Device, pm: PlatformMap, base: dict[str, Any], deprecated: frozenset[str],
                 path: str) -> tuple[dict[str, Any], list[Finding]]:
    """The AgentConfig of `d`, and findings for what its platform cannot spell (a port not on the box ...)."""
    problems: list[Finding] = []
    ports: list[dict[str, Any]] = []
    by_name: dict[str, int] = {}
    for k, (p, i) in enumerate(d.port_map()):
        e = _port(fabric, p, i, pm, path, k, problems)
        if e is not None:
            ports.append(e)
            by_name[p.name] = e["logicalID"]
    ports.sort(key=lambda e: e["logicalID"])
    vlans, vlan_ports, interfaces = _vlans_and_interfaces(d)
    for vp in vlan_ports:
        vp["logicalPort"] = by_name.get(vp.pop("_port"), -1)
    vlan_ports.sort(key=lambda v: v["logicalPort"])
    base_sw = base.get("sw", {})
    settings = _switch_settings(base, deprecated)
    if d.routing is not None:
        settings["ecmpWidth"] = d.routing.maximum_paths
    sw: dict[str, Any] = {
        "version": 0, "hostname": d.name, "ports": ports, "vlans": vlans, "vlanPorts": vlan_ports,
        "defaultVlan": DEFAULT_VLAN, "interfaces": interfaces, "switchSettings": settings,
        **{k: base_sw[k] for k in _BASE_SW if k in base_sw}, **control_plane(),
    }
    if d.policy is not None:
        sw.update(hashing(d.policy))
    if d.qos is not None:
        qos, found = qos_config(fabric, d, {p["name"]: p for p in ports}, path)
        problems += found
        if d.qos.watchdog is not None and d.qos.watchdog.poll_ms in (1, 10, 100):
            settings["pfcWatchdogTimerGranularityMsec"] = d.qos.watchdog.poll_ms
        sw.update(qos)
    args = {k: v for k, v in base.get("defaultCommandLineArgs", {}).items() if k not in HW_TEST_FLAGS}
    cfg = {"defaultCommandLineArgs": args, "sw": sw,
           "platform": base.get("platform", {}),
           "thriftApiToRateLimitInQps": dict(base.get("thriftApiToRateLimitInQps", {}))}
    return cfg, problems
