"""A SONiC switch's files read back into the NOS-neutral view: config_db.json for ports, addresses and QoS, frr.conf
for the routing bgpd really runs.  Also checks that the two files agree: the same ASN, FRR fed from frr.conf alone
(`split-unified`) and no BGP_NEIGHBOR rows (bgpcfgd would add peer groups and policies of its own beside frr.conf's)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from teton.buildfolder import device_path
from teton.fabric.bgpview import BgpView, PortAddress
from teton.findings import Finding
from teton.frr.conf import read_frr_bgp
from teton.targets.base import DeviceView, LldpView, PortView, QosView, QueueView


def read_sonic(name: str, db: dict[str, Any], frr: str) -> tuple[DeviceView, list[Finding]]:
    rel = device_path(name, "config_db.json")
    frr_rel = device_path(name, "frr.conf")
    bgp = read_sonic_bgp(name, db, frr)
    asn = bgp.asn if bgp is not None else None
    loopbacks = tuple(k.split("|", 1)[1] for k in db.get("LOOPBACK_INTERFACE", {}) if "|" in k)
    view = DeviceView(name, "switch", frr_rel, loopbacks=loopbacks, bgp=bgp, qos_file=rel, frr_conf=frr)
    findings = []
    meta_asn = db.get("DEVICE_METADATA", {}).get("localhost", {}).get("bgp_asn")
    if meta_asn is not None and asn is not None and str(asn) != meta_asn:
        findings.append(Finding(rel, "DEVICE_METADATA|localhost/bgp_asn", f"{meta_asn} but frr.conf runs router bgp "
                                f"{asn}", rule="sonic-frr-mismatch"))
    mode = db.get("DEVICE_METADATA", {}).get("localhost", {}).get("docker_routing_config_mode", "unified")
    if mode != "split-unified":
        findings.append(Finding(rel, "DEVICE_METADATA|localhost/docker_routing_config_mode", f"{mode!r}: SONiC would "
                                "not load frr.conf as it is (only 'split-unified' runs one integrated frr.conf)",
                                rule="sonic-frr-mismatch"))
    for ip in sorted(db.get("BGP_NEIGHBOR", {})):
        findings.append(Finding(rel, f"BGP_NEIGHBOR|{ip}", "bgpcfgd would configure this neighbour itself, with peer "
                                "groups and policies of its own beside frr.conf's", rule="sonic-frr-mismatch"))
    ports = db.get("PORT", {})
    view.lldp = _lldp(name, db, rel)
    addrs: dict[str, list[str]] = defaultdict(list)
    for key in db.get("INTERFACE", {}):
        if "|" in key:
            port, cidr = key.split("|", 1)
            addrs[port].append(cidr)
    for port, cidrs in addrs.items():
        mtu = str(ports.get(port, {}).get("mtu", ""))
        view.interfaces[port] = PortView(int(mtu) if mtu.isdigit() else None, tuple(cidrs), f"PORT|{port}/mtu")
    queues = tuple(_queues(db))
    for key, row in db.get("PORT_QOS_MAP", {}).items():
        pfc = str(row.get("pfc_enable", ""))
        dscp = db.get("DSCP_TO_TC_MAP", {}).get(row.get("dscp_to_tc_map"), {})
        tcq = db.get("TC_TO_QUEUE_MAP", {}).get(row.get("tc_to_queue_map"), {})
        q = QosView(tuple(sorted(int(p) for p in pfc.split(",") if p.isdigit())),
                    {int(k): int(v) for k, v in dscp.items() if str(k).isdigit() and str(v).isdigit()},
                    f"PORT_QOS_MAP|{key}/pfc_enable",
                    {int(k): int(v) for k, v in tcq.items() if str(k).isdigit() and str(v).isdigit()}, queues)
        if view.qos is None:
            view.qos = q
        elif (q.lossless, q.dscp_to_tc, q.tc_to_queue) != (view.qos.lossless, view.qos.dscp_to_tc,
                                                            view.qos.tc_to_queue):
            findings.append(Finding(rel, q.where, f"port QoS differs from {view.qos.where} on the same switch",
                                    rule="qos-mismatch"))
    return view, findings


def _lldp(name: str, db: dict[str, Any], rel: str) -> LldpView:
    """What lldpmgrd announces: DEVICE_METADATA's hostname as system name, each port's alias as its port id
    (`configure ports <port> lldp portidsubtype local <alias>`; a port without an alias: its name)."""
    host = db.get("DEVICE_METADATA", {}).get("localhost", {}).get("hostname")
    ports = {str(p): str(row.get("alias") or p) for p, row in db.get("PORT", {}).items() if isinstance(row, dict)}
    return LldpView(str(host) if host else name, ports, f"{rel} DEVICE_METADATA|localhost/hostname, PORT/*/alias")


def _queues(db: dict[str, Any]) -> list[QueueView]:
    """Every QUEUE row: its SCHEDULER's type and weight, its WRED_PROFILE's green thresholds (bytes)."""
    schedulers, wred = db.get("SCHEDULER", {}), db.get("WRED_PROFILE", {})
    out = []
    for key, row in db.get("QUEUE", {}).items():
        port, _, queue = key.partition("|")
        if not queue.isdigit():
            continue
        s = schedulers.get(row.get("scheduler"), {})
        strict = s.get("type") == "STRICT"
        w = wred.get(row.get("wred_profile")) if row.get("wred_profile") else None
        ecn = None if w is None or w.get("ecn", "ecn_none") == "ecn_none" else (
            int(w["green_min_threshold"]), int(w["green_max_threshold"]), int(w.get("green_drop_probability", 100)))
        out.append(QueueView(port, int(queue), strict, None if strict else int(s.get("weight", 1)), ecn,
                             f"QUEUE|{key}"))
    return out


def sonic_ports(db: dict[str, Any]) -> tuple[list[PortAddress], list[str]]:
    """config_db.json's routed port addresses (INTERFACE; a port whose PORT row says admin_status down is down) and
    loopbacks (LOOPBACK_INTERFACE)."""
    ports = db.get("PORT", {})
    out = []
    for key in db.get("INTERFACE", {}):
        if "|" in key:
            port, cidr = key.split("|", 1)
            out.append(PortAddress(port, cidr, str(ports.get(port, {}).get("admin_status", "up")) != "down"))
    loopbacks = [k.split("|", 1)[1] for k in db.get("LOOPBACK_INTERFACE", {}) if "|" in k]
    return out, loopbacks


def read_sonic_bgp(name: str, db: dict[str, Any], frr: str) -> BgpView | None:
    """What SONiC's bgpd runs (frr.conf, as-is in split-unified mode) over config_db.json's ports and loopbacks."""
    ports, loopbacks = sonic_ports(db)
    return read_frr_bgp(name, device_path(name, "frr.conf"), frr, ports, loopbacks)
