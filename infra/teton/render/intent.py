"""Vendor-neutral per-device intent (plain dicts) that every NOS target renders from.

One place decides what a switch peers with, what it originates, its ECMP width, its QoS and its management plane;
the SONiC, FRR and EOS targets only spell it.  That is what keeps both ends of a session consistent.
"""

from __future__ import annotations

from typing import Any

from teton.design.fabric import Device, Fabric
from teton.secrets import secret_ref

PEER_GROUP = {"host": "HOSTS", "storage": "HOSTS", "rtsw": "RTSW", "ctsw": "CTSW", "atsw": "ATSW",
              "fe-rsw": "RSW", "fsw": "FSW"}
SWITCH_ROLES = frozenset({"rtsw", "ctsw", "atsw", "fe-rsw", "fsw"})


def bgp_intent(fabric: Fabric, d: Device) -> dict[str, Any]:
    """eBGP (RFC 7938) towards every switch neighbour; hosts are not BGP speakers (their /31s are connected)."""
    devices = fabric.devices
    timers = fabric.bgp.get("timers", {})
    secret = fabric.bgp.get("password_secret") if d.plane == "backend" else None
    groups: dict[str, dict[str, Any]] = {}
    neighbors: list[dict[str, Any]] = []
    # ECMP width: with RFC 7938 ASNs, equal-cost paths to a prefix come from neighbours that share an ASN (all the
    # CTSWs of a zone, all the ATSWs), so the widest ECMP is the most links to one neighbour ASN.
    links_per_asn: dict[int | None, int] = {}
    for i in d.interfaces:
        peer = devices[i.peer]
        if peer.role not in SWITCH_ROLES:
            continue
        group = PEER_GROUP[peer.role]
        groups.setdefault(group, {"name": group, "direction": i.direction})
        links_per_asn[peer.asn] = links_per_asn.get(peer.asn, 0) + 1
        for fam, local, remote in (("ipv4", i.ipv4, i.peer_ipv4), ("ipv6", i.ipv6, i.peer_ipv6)):
            if remote:
                neighbors.append({"ip": remote, "family": fam, "remote_as": peer.asn, "peer_group": group,
                                  "local_ip": local.split("/")[0] if local else None,
                                  "description": f"{peer.name}:{i.peer_port}"})
    return {
        "asn": d.asn, "router_id": d.router_id,
        "peer_groups": sorted(groups.values(), key=lambda g: (g["direction"] != "up", g["name"])),
        "neighbors": neighbors,
        "maximum_paths": max(links_per_asn.values(), default=1),
        "keepalive": timers.get("keepalive", 3), "hold": timers.get("hold", 9),
        "connect_retry": timers.get("connect_retry", 10), "bfd": bool(fabric.bgp.get("bfd")),
        "password": secret_ref(secret) if secret else None,
        "loopback4": d.loopback4, "loopback6": d.loopback6,
        "aggregates4": list(d.prefixes4), "aggregates6": list(d.prefixes6),
        # Upper tiers pass on what they learn; a rack switch only sends its own loopback and rack prefixes.
        "transit": d.role not in ("rtsw", "fe-rsw"),
    }


def qos_intent(fabric: Fabric) -> dict[str, Any]:
    """RoCE QoS: one lossless priority for RoCE DSCP, a strict priority for CNPs, everything else best effort."""
    q = fabric.qos
    lossless, cnp = q["lossless_priority"], q["cnp_priority"]
    dscp_to_tc = {dscp: 0 for dscp in range(64)}
    dscp_to_tc[q["roce_dscp"]] = lossless
    dscp_to_tc[q["cnp_dscp"]] = cnp
    return {"dscp_to_tc": dscp_to_tc, "lossless_priority": lossless, "cnp_priority": cnp,
            "roce_dscp": q["roce_dscp"], "cnp_dscp": q["cnp_dscp"], "ecn": q["ecn"],
            "ecn_min_kbytes": q["ecn_min_kbytes"], "ecn_max_kbytes": q["ecn_max_kbytes"],
            "pfc_watchdog": q["pfc_watchdog"], "pfc_watchdog_ms": q["pfc_watchdog_ms"]}


def mgmt_intent(fabric: Fabric, d: Device) -> dict[str, Any]:
    m = fabric.management
    return {"address": d.mgmt, "gateway": m.get("gateway"), "vrf": m.get("vrf", "mgmt"),
            "prefixes": list(m.get("prefixes", [])), "ntp": list(m.get("ntp_servers", [])),
            "syslog": list(m.get("syslog_servers", [])), "aaa_protocol": m.get("aaa_protocol", "tacacs+"),
            "aaa_servers": list(m.get("aaa_servers", [])), "aaa_key": secret_ref(m.get("aaa_key_secret", "aaa_key")),
            "telemetry": m.get("telemetry", "gnmi"), "snmpv3_user": m.get("snmpv3_user", "teton"),
            "snmpv3_auth": secret_ref(m.get("snmpv3_auth_secret", "snmpv3_auth")),
            "snmpv3_priv": secret_ref(m.get("snmpv3_priv_secret", "snmpv3_priv"))}
