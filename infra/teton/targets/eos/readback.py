"""An EOS switch's structured config read back into the NOS-neutral view: its ports (MTU, addresses), QoS, what it
announces over LLDP, and its BGP through the target's one BGP reader (`teton.targets.eos.bgp`).
"""

from __future__ import annotations

import re
from typing import Any

from teton.buildfolder import device_path
from teton.findings import Finding
from teton.targets.base import DeviceView, LldpView, PortView, QosView, QueueView
from teton.targets.eos.bgp import read_eos_bgp

_DSCP_LINE = re.compile(r"^([\d ]+) to traffic-class (\d+)$")


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


def read_eos(name: str, cfg: dict[str, Any]) -> tuple[DeviceView, list[Finding]]:
    rel = device_path(name, "structured-config.json")
    bgp = read_eos_bgp(name, cfg)
    view = DeviceView(name, "switch", rel, interfaces=_interfaces(cfg), qos_file=rel, bgp=bgp,
                      loopbacks=bgp.loopbacks if bgp is not None else ())
    view.qos, findings = _qos(cfg, rel)
    # EOS announces its hostname and each interface's name as the port id (LLDP's default interface-name subtype)
    view.lldp = LldpView(str(cfg.get("hostname") or name),
                         {str(i["name"]): str(i["name"]) for i in cfg.get("ethernet_interfaces", []) if "name" in i},
                         f"{rel} hostname, ethernet_interfaces[*].name")
    return view, findings
