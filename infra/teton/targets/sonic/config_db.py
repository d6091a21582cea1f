"""SONiC Config DB of one switch (`config_db.json`), spelled from the Fabric's device and its intents.

Built as plain dicts in Config DB's own shape (tables of `key -> {field: string}`), validated against SONiC's YANG
models (`teton.targets.sonic.validate`) before it is written.  BGP_NEIGHBOR carries the sessions of the routing intent
for SONiC's own tools; bgpd reads the rendered frr.conf (SONiC's split routing-config mode).

Buffer and headroom figures are derived, not published (domain-facts section 2: "not found"): headroom covers two
cable round trips at line rate plus two MTUs, sized per speed and cable length, on Broadcom's 256-byte cells.
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from teton.fabric.intent import Management, Qos, Routing
from teton.fabric.model import Device, Interface
from teton.secrets import secret_ref
from teton.spec.model import SwitchModel

QOS_MAP = "ROCE"
CABLE_M = {"dac": 5, "aoc": 30, "mmf": 100, "smf": 300}
CELL = 256
MGMT_VRF = "mgmt"   # SONiC's management VRF has this name and no other (MGMT_VRF_CONFIG, sonic-mgmt_vrf.yang)
SCHEDULER = {"lossless": "scheduler.lossless", "cnp": "scheduler.cnp", "best-effort": "scheduler.best_effort"}


def _mac(name: str) -> str:
    """A stable, locally administered MAC for the device (the real one is read from the switch's EEPROM)."""
    b = bytearray(hashlib.sha256(name.encode()).digest()[:6])
    b[0] = (b[0] & 0xFC) | 0x02
    return ":".join(f"{x:02x}" for x in b)


def _ports(model: SwitchModel, device: Device, mtu_default: int) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for port, i in device.port_map():
        alias = f"eth{port.slot}/{port.position}/1" if model.slots > 1 else f"Ethernet{port.position}/1"
        entry = {"alias": alias, "index": str(port.ordinal + 1), "lanes": ",".join(str(x) for x in port.lanes),
                 "speed": str((i.speed_gbps if i else port.speed_gbps) * 1000), "fec": "rs",
                 "mtu": str(i.mtu if i else mtu_default), "admin_status": "up" if i else "down"}
        if i:
            entry["description"] = f"{i.peer}:{i.peer_port}"
        out[port.name] = entry
    return out


def _breakouts(device: Device) -> dict[str, dict[str, str]]:
    """Each port's breakout mode: unbroken at its native speed (the catalogue lists the modes it also supports)."""
    return {p.name: {"brkout_mode": f"1x{p.speed_gbps}G"} for p in device.ports
            if f"1x{p.speed_gbps}G" in p.breakouts or not p.breakouts}


def _headroom(speed_gbps: int, cable_m: int, mtu: int) -> int:
    bytes_per_ns = speed_gbps / 8
    rtt_ns = 2 * cable_m * 5 + 2 * 1000          # cable both ways (5 ns/m) plus ~1 us of PFC response each side
    xoff = bytes_per_ns * rtt_ns + 2 * mtu
    return int(math.ceil(xoff / CELL) * CELL)


def _schedulers(qos: Qos) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for q in qos.queues:
        name = SCHEDULER[q.role]
        out[name] = {"type": "STRICT", "priority": str(q.tc)} if q.strict else {"type": "DWRR",
                                                                                   "weight": str(q.weight)}
    return out


def _qos_tables(model: SwitchModel, device: Device, qos: Qos) -> dict[str, Any]:
    ports = device.interfaces
    if not ports:
        return {}
    lossless = qos.lossless_priority
    buffer = int(model.buffer_mb * 1024 * 1024)
    t: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {QOS_MAP: {str(d): str(tc) for d, tc in enumerate(qos.dscp_to_tc)}},
        "TC_TO_QUEUE_MAP": {QOS_MAP: {str(q.tc): str(q.tc) for q in qos.queues}},
        "TC_TO_PRIORITY_GROUP_MAP": {QOS_MAP: {str(q.tc): str(q.tc if q.role == "lossless" else 0)
                                               for q in qos.queues}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {QOS_MAP: {str(q.tc): str(q.tc) for q in qos.queues}},
        "SCHEDULER": _schedulers(qos),
        "BUFFER_POOL": {
            "ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": str(buffer * 7 // 10),
                                      "xoff": str(buffer * 2 // 10)},
            "egress_lossless_pool": {"type": "egress", "mode": "static", "size": str(buffer * 9 // 10)},
            "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": str(buffer * 6 // 10)}},
        "BUFFER_PROFILE": {
            "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
            "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                        "static_th": str(buffer * 9 // 10)},
            "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1778", "dynamic_th": "3"}},
        "PORT_QOS_MAP": {}, "QUEUE": {}, "BUFFER_PG": {}, "BUFFER_QUEUE": {}, "CABLE_LENGTH": {QOS_MAP: {}},
    }
    if qos.ecn is not None:
        kb = 1024
        lo, hi, p = str(qos.ecn.min_kbytes * kb), str(qos.ecn.max_kbytes * kb), str(qos.ecn.mark_percent)
        t["WRED_PROFILE"] = {"ROCE_LOSSLESS": {
            "wred_green_enable": "true", "wred_yellow_enable": "true", "wred_red_enable": "true", "ecn": "ecn_all",
            "green_min_threshold": lo, "green_max_threshold": hi, "green_drop_probability": p,
            "yellow_min_threshold": lo, "yellow_max_threshold": hi, "yellow_drop_probability": p,
            "red_min_threshold": lo, "red_max_threshold": hi, "red_drop_probability": p}}
    wd = qos.watchdog
    if wd is not None:
        t["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": str(wd.poll_ms)}}
    pfc = ",".join(str(p) for p in qos.pfc_priorities)
    for i in ports:
        cable = CABLE_M.get(i.medium, 300)
        profile = f"pg_lossless_{i.speed_gbps * 1000}_{cable}m_profile"
        if profile not in t["BUFFER_PROFILE"]:
            xoff = _headroom(i.speed_gbps, cable, i.mtu)
            t["BUFFER_PROFILE"][profile] = {"pool": "ingress_lossless_pool", "size": str(2 * CELL * 36),
                                            "xon": str(2 * CELL * 36), "xoff": str(xoff),
                                            "xon_offset": str(CELL * 18), "dynamic_th": "0"}
        t["CABLE_LENGTH"][QOS_MAP][i.name] = f"{cable}m"
        pq = {"dscp_to_tc_map": QOS_MAP, "tc_to_queue_map": QOS_MAP, "tc_to_pg_map": QOS_MAP,
              "pfc_to_queue_map": QOS_MAP, "pfc_enable": pfc}
        if wd is not None:
            pq["pfcwd_sw_enable"] = pfc
            t["PFC_WD"][i.name] = {"action": wd.action, "detection_time": str(wd.detection_ms),
                                   "restoration_time": str(wd.restoration_ms)}
        t["PORT_QOS_MAP"][i.name] = pq
        for q in qos.queues:
            row = {"scheduler": SCHEDULER[q.role]}
            if q.role == "lossless" and qos.ecn is not None:
                row["wred_profile"] = "ROCE_LOSSLESS"
            t["QUEUE"][f"{i.name}|{q.tc}"] = row
            t["BUFFER_QUEUE"][f"{i.name}|{q.tc}"] = {
                "profile": "egress_lossless_profile" if q.role == "lossless" else "egress_lossy_profile"}
        t["BUFFER_PG"][f"{i.name}|0"] = {"profile": "ingress_lossy_profile"}
        t["BUFFER_PG"][f"{i.name}|{lossless}"] = {"profile": profile}
    return t


def _mgmt_tables(device: Device, m: Management) -> dict[str, Any]:
    aaa_key = secret_ref(m.aaa_key_secret)
    t: dict[str, Any] = {
        "MGMT_PORT": {"eth0": {"alias": "eth0", "admin_status": "up", "description": "out-of-band management"}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
        "SSH_SERVER": {"POLICIES": {"authentication_retries": "3", "login_timeout": "60", "ports": "22",
                                    "permit_root_login": "no", "password_authentication": "false"}},
    }
    if device.mgmt:
        t["MGMT_INTERFACE"] = {f"eth0|{device.mgmt}": {"gwaddr": m.gateway} if m.gateway else {}}
    if m.ntp_servers:
        t["NTP"] = {"global": {"vrf": MGMT_VRF, "src_intf": "eth0"}}
        t["NTP_SERVER"] = {ip: {"association_type": "server", "iburst": "on", "version": "4"}
                           for ip in m.ntp_servers}
    if m.syslog_servers:
        t["SYSLOG_SERVER"] = {ip: {"vrf": MGMT_VRF, "port": "514", "protocol": "udp", "severity": "notice"}
                              for ip in m.syslog_servers}
    if m.aaa_servers:
        if m.aaa_protocol == "tacacs+":
            t["AAA"] = {"authentication": {"login": "tacacs+"}}
            t["TACPLUS"] = {"global": {"auth_type": "pap", "timeout": "5", "passkey": aaa_key}}
            t["TACPLUS_SERVER"] = {ip: {"priority": str(n), "tcp_port": "49", "passkey": aaa_key, "vrf": MGMT_VRF}
                                   for n, ip in enumerate(m.aaa_servers, start=1)}
        else:
            t["AAA"] = {"authentication": {"login": "radius"}}
            t["RADIUS"] = {"global": {"auth_type": "pap", "timeout": "5", "passkey": aaa_key}}
            t["RADIUS_SERVER"] = {ip: {"priority": str(n), "auth_port": "1812", "passkey": aaa_key, "vrf": MGMT_VRF}
                                  for n, ip in enumerate(m.aaa_servers, start=1)}
    if m.telemetry == "gnmi":
        t["GNMI"] = {"gnmi": {"client_auth": "true", "port": "50051", "log_level": "2", "user_auth": "cert",
                              "vrf": MGMT_VRF},
                     "certs": {"ca_crt": "/etc/sonic/telemetry/ca.cer", "server_crt": "/etc/sonic/telemetry/server.cer",
                               "server_key": "/etc/sonic/telemetry/server.key"}}
    else:
        t["SNMP_USER"] = {m.snmpv3_user: {
            "SNMP_USER_TYPE": "Priv", "SNMP_USER_PERMISSION": "RO", "SNMP_USER_AUTH_TYPE": "SHA",
            "SNMP_USER_AUTH_PASSWORD": secret_ref(m.snmpv3_auth_secret), "SNMP_USER_ENCRYPTION_TYPE": "AES",
            "SNMP_USER_ENCRYPTION_PASSWORD": secret_ref(m.snmpv3_priv_secret)}}
    services = ["SSH"] + (["SNMP"] if m.telemetry == "snmpv3" else [])
    rules: dict[str, dict[str, str]] = {}
    for n, prefix in enumerate(m.prefixes, start=1):
        v6 = ":" in prefix
        rule = {"PRIORITY": str(9999 - n), "PACKET_ACTION": "ACCEPT", ("SRC_IPV6" if v6 else "SRC_IP"): prefix}
        if v6:
            rule["IP_TYPE"] = "IPV6ANY"
        rules[f"MGMT_ONLY|RULE_{n * 10}"] = rule
    rules["MGMT_ONLY|DEFAULT_RULE"] = {"PRIORITY": "1", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV4ANY"}
    rules["MGMT_ONLY|DEFAULT_RULE_V6"] = {"PRIORITY": "2", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV6ANY"}
    t["ACL_TABLE"] = {"MGMT_ONLY": {"type": "CTRLPLANE", "stage": "ingress", "services": services,
                                    "policy_desc": "management prefixes only"}}
    t["ACL_RULE"] = rules
    return t


def config_db(device: Device, model: SwitchModel) -> dict[str, Any]:
    """The device's Config DB as plain dicts (all values strings, as Config DB stores them)."""
    r: Routing | None = device.routing
    assert r is not None, f"{device.name}: a SONiC switch has a routing intent"
    mtu = max((i.mtu for i in device.interfaces), default=9100)
    db: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": device.name, "platform": model.platform.get("sonic", ""),
            "hwsku": model.hwsku.get("sonic", ""), "bgp_asn": str(r.asn), "type": "ToRRouter",
            "buffer_model": "traditional", "mac": _mac(device.name), "docker_routing_config_mode": "split",
            "default_pfcwd_status": "enable" if device.qos and device.qos.watchdog else "disable",
            "timezone": "UTC"}},
        "PORT": _ports(model, device, mtu),
        "BREAKOUT_CFG": _breakouts(device),
        "INTERFACE": {},
        "LOOPBACK_INTERFACE": {"Loopback0": {}},
        "BGP_NEIGHBOR": {},
        "FLEX_COUNTER_TABLE": {k: {"FLEX_COUNTER_STATUS": "enable"}
                               for k in ("PORT", "QUEUE", "PG_WATERMARK", "QUEUE_WATERMARK", "PFCWD")},
    }
    for lo in (device.loopback4, device.loopback6):
        if lo:
            db["LOOPBACK_INTERFACE"][f"Loopback0|{lo}"] = {}
    for i in device.interfaces:
        _interface(db["INTERFACE"], i)
    for n in r.neighbors:
        db["BGP_NEIGHBOR"][n.address] = {"asn": str(n.remote_as), "name": n.peer.split(":")[0],
                                         "local_addr": n.local_address, "holdtime": str(r.timers.hold),
                                         "keepalive": str(r.timers.keepalive), "admin_status": "up"}
    if device.qos is not None:
        db.update(_qos_tables(model, device, device.qos))
    if device.management is not None:
        db.update(_mgmt_tables(device, device.management))
    return db


_row = json.JSONEncoder(sort_keys=True, separators=(", ", ": ")).encode
# (table, key) -> (row, its JSON): most rows (QoS, buffers, watchdog of a port) are equal on every switch of a model,
# and comparing two small dicts costs a fraction of encoding one.  Only rows of strings are cached (Config DB's own
# values), so equal rows always encode alike (1 == True would not).  Per process; bounded.
_ROW_TEXT: dict[tuple[str, str], tuple[dict[str, Any], str]] = {}
_ROW_CACHE_MAX = 200_000


def _row_text(table: str, key: str, row: dict[str, Any]) -> str:
    hit = _ROW_TEXT.get((table, key))
    if hit is not None and hit[0] == row:
        return hit[1]
    text = f"{_row(key)}: {_row(row)}"
    if len(_ROW_TEXT) < _ROW_CACHE_MAX and all(type(v) is str for v in row.values()):
        _ROW_TEXT[(table, key)] = (row, text)
    return text


def dump_config_db(db: dict[str, Any]) -> str:
    """JSON with one Config DB row per line (so a review diff shows exactly the rows that changed)."""
    out = ["{"]
    tables = sorted(db)
    for t, table in enumerate(tables):
        rows = db[table]
        out.append(f" {_row(table)}: {{")
        keys = sorted(rows)
        last = len(keys) - 1
        out.extend(f"  {_row_text(table, k, rows[k])}{',' if n < last else ''}" for n, k in enumerate(keys))
        out.append(" }" + ("," if t < len(tables) - 1 else ""))
    out.append("}")
    return "\n".join(out) + "\n"


def _interface(table: dict[str, Any], i: Interface) -> None:
    table[i.name] = {}
    for addr in (i.ipv4, i.ipv6):
        if addr:
            table[f"{i.name}|{addr}"] = {}
