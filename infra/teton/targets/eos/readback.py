"""An EOS switch's structured config read back into the NOS-neutral view, routing included.

The routing is read from the structured fields that `teton.targets.eos.structured` writes, never from descriptions:
peer groups (their address family from the address-family that activates them, `passive`, the uplink/downlink side
from `metadata.type`, timers, password, BFD), neighbours (the local port and address from the interface whose subnet
holds the neighbour), ECMP width, aggregates, and whether the route map the address families apply outbound
(`route_map_out`, found by that reference, not by its name) filters (a rack switch) or not (transit).  EOS
has no per-peer connect-retry timer, so that one value reads back as None.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from teton.buildfolder import device_path
from teton.fabric.intent import BgpTimersIntent, Family, Neighbor, PeerGroup, Routing
from teton.findings import Finding
from teton.secrets import referenced_secrets
from teton.targets.base import DeviceView, LldpView, PortView, QosView, QueueView
from teton.targets.eos.bgp import read_eos_bgp

_DSCP_LINE = re.compile(r"^([\d ]+) to traffic-class (\d+)$")
_SIDE = {"uplinks": "up", "downlinks": "down"}


def _interfaces(cfg: dict[str, Any]) -> dict[str, PortView]:
    out = {}
    for n, e in enumerate(cfg.get("ethernet_interfaces", [])):
        cidrs = tuple(c for c in [e.get("ip_address")] + list(e.get("ipv6_addresses", [])) if c)
        out[e["name"]] = PortView(e.get("mtu"), cidrs, f"ethernet_interfaces[{n}].mtu")
    return out


def _qos(cfg: dict[str, Any], rel: str) -> tuple[QosView | None, list[Finding]]:
    lossless: set[int] = set()
    findings: list[Finding] = []
    for n, e in enumerate(cfg.get("ethernet_interfaces", [])):
        pfc = e.get("priority_flow_control") or {}
        prios = sorted(p["priority"] for p in pfc.get("priorities", []) if p.get("no_drop"))
        if prios:
            if lossless and set(prios) != lossless:
                findings.append(Finding(rel, f"ethernet_interfaces[{n}].priority_flow_control", "no-drop priorities "
                                        f"{prios} differ from the switch's other ports {sorted(lossless)}",
                                        rule="qos-mismatch"))
            lossless |= set(prios)
    dscp: dict[int, int] = {}
    for line in cfg.get("qos", {}).get("map", {}).get("dscp", []):
        if m := _DSCP_LINE.match(str(line)):
            for d in m.group(1).split():
                dscp[int(d)] = int(m.group(2))
    if lossless or dscp:
        return QosView(tuple(sorted(lossless)), dscp, "qos.map.dscp", queues=tuple(_queues(cfg))), findings
    return None, findings


def _export_entries(cfg: dict[str, Any], bgp: dict[str, Any]) -> list[dict[str, Any]]:
    """The entries of the route maps the address families apply outbound to their peer groups (`route_map_out`):
    found by that reference, not by name.  A switch whose export entries match nothing permits all (transit)."""
    applied = {g["route_map_out"] for fam in ("ipv4", "ipv6")
               for g in bgp.get(f"address_family_{fam}", {}).get("peer_groups", []) if g.get("route_map_out")}
    return [s for rm in cfg.get("route_maps", []) if rm["name"] in applied for s in rm.get("sequence_numbers", [])]


EOS_QUEUES = 8


def _queues(cfg: dict[str, Any]) -> list[QueueView]:
    """Every tx-queue of every port through its service profile: strict unless `no priority` (EOS's default),
    `bandwidth percent` as the weight of a round-robin queue, ECN thresholds in bytes."""
    scale = {"bytes": 1, "kbytes": 1000, "mbytes": 1000_000}
    profiles = {p["name"]: (n, p) for n, p in enumerate(cfg.get("qos_profiles", []))}
    out = []
    for e in cfg.get("ethernet_interfaces", []):
        if e.get("service_profile") not in profiles:
            continue
        n, profile = profiles[e["service_profile"]]
        tx: dict[int, tuple[int | None, dict[str, Any]]] = {
            q["id"]: (k, q) for k, q in enumerate(profile.get("tx_queues", []))}
        for queue in range(EOS_QUEUES):
            k, q = tx.get(queue, (None, {}))
            strict = q.get("priority", "priority strict") != "no priority"
            t = ((q.get("random_detect") or {}).get("ecn") or {}).get("threshold")
            ecn = None if not t else (int(t["min"]) * scale[t["units"]], int(t["max"]) * scale[t["units"]],
                                      int(t.get("max_probability", 100)))
            out.append(QueueView(e["name"], queue, strict, None if strict else q.get("bandwidth_percent"), ecn,
                                 f"qos_profiles[{n}].tx_queues[{k}]" if k is not None else f"qos_profiles[{n}]"))
    return out


def _routing(cfg: dict[str, Any], interfaces: dict[str, PortView]) -> Routing | None:
    bgp = cfg.get("router_bgp")
    if not isinstance(bgp, dict):
        return None
    family: dict[str, Family] = {}
    fams: tuple[Family, ...] = ("ipv4", "ipv6")
    for fam in fams:
        for g in bgp.get(f"address_family_{fam}", {}).get("peer_groups", []):
            if g.get("activate"):
                family[g["name"]] = fam
    groups, timers, password, bfd, max_routes, originate = [], "3 9", None, False, 0, False
    for g in bgp.get("peer_groups", []):
        side = _SIDE.get((g.get("metadata") or {}).get("type", ""), "down" if g.get("passive") else "up")
        groups.append(PeerGroup(g["name"], family.get(g["name"], "ipv4"), side, bool(g.get("passive"))))  # type: ignore[arg-type]
        timers = g.get("timers", timers)
        secrets = referenced_secrets(str(g.get("password", "")))
        password = next(iter(secrets)) if secrets else password
        bfd = bfd or bool(g.get("bfd"))
        max_routes = int(g.get("maximum_routes", max_routes))
        originate = originate or bool((g.get("default_originate") or {}).get("enabled"))
    owner: dict[str, tuple[str, str]] = {}   # neighbour address -> (local port, local address)
    for port, view in interfaces.items():
        for cidr in view.addresses:
            iface = ipaddress.ip_interface(cidr)
            for addr in (iface.network.network_address, iface.network.broadcast_address):
                if addr != iface.ip:
                    owner[str(addr)] = (port, str(iface.ip))
    neighbors = []
    for n in bgp.get("neighbors", []):
        port, local = owner.get(n["ip_address"], ("", ""))
        neighbors.append(Neighbor(n["ip_address"], family.get(n["peer_group"], "ipv6" if ":" in n["ip_address"]
                                                              else "ipv4"),
                                  int(n["remote_as"]), n["peer_group"], port, local, n.get("description", "")))
    keepalive, hold = (int(x) for x in str(timers).split())
    lo: dict[str, Any] = next((x for x in cfg.get("loopback_interfaces", []) if x.get("name") == "Loopback0"), {})
    aggregates = [a["prefix"] for a in bgp.get("aggregate_addresses", [])]
    export = _export_entries(cfg, bgp)
    transit = not any(s.get("match") for s in export)
    prepend = max((len(x.split()) - 2 for s in export for x in s.get("set", []) if x.startswith("as-path prepend ")),
                  default=0)
    restart_s = next((int(x.split()[-1]) for x in str(bgp.get("eos_cli", "")).splitlines()
                      if " idle-restart-timer " in x), 0)
    startup_hold = next((int(x.split()[-1]) for x in bgp.get("bgp_defaults", [])
                         if x.startswith("bgp convergence time ")), 0)
    return Routing(
        asn=int(bgp["as"]), router_id=bgp["router_id"],
        groups=tuple(sorted(groups, key=lambda g: (g.direction != "up", g.name))), neighbors=tuple(neighbors),
        maximum_paths=int(bgp.get("maximum_paths", {}).get("paths", 1)),
        timers=BgpTimersIntent(keepalive, hold, None), bfd=bfd, password_secret=password,
        loopback4=lo.get("ip_address"), loopback6=(lo.get("ipv6_addresses") or [None])[0],
        aggregates4=tuple(a for a in aggregates if ":" not in a), aggregates6=tuple(a for a in aggregates if ":" in a),
        transit=transit, maximum_prefixes=max_routes,
        maximum_prefix_restart_min=restart_s // 60, startup_hold_s=startup_hold, drain_prepend=prepend,
        default_originate=originate)


def read_eos(name: str, cfg: dict[str, Any]) -> tuple[DeviceView, list[Finding]]:
    rel = device_path(name, "structured-config.json")
    interfaces = _interfaces(cfg)
    routing = _routing(cfg, interfaces)
    view = DeviceView(name, "switch", rel, interfaces=interfaces, qos_file=rel, routing=routing,
                      bgp=read_eos_bgp(name, cfg))
    if routing is not None:
        view.loopbacks = tuple(x for x in (routing.loopback4, routing.loopback6) if x)
    view.qos, findings = _qos(cfg, rel)
    # EOS announces its hostname and each interface's name as the port id (LLDP's default interface-name subtype)
    view.lldp = LldpView(str(cfg.get("hostname") or name),
                         {str(i["name"]): str(i["name"]) for i in cfg.get("ethernet_interfaces", []) if "name" in i},
                         f"{rel} hostname, ethernet_interfaces[*].name")
    return view, findings
