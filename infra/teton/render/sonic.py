"""SONiC target: `devices/<name>/config_db.json` and `devices/<name>/frr.conf` for every switch with `nos: sonic`.

The config_db is built as plain dicts (Config DB's own shape: tables of `key -> {field: string}`), validated against
SONiC's YANG models through libyang (`teton.validate.sonic_yang`), and only then written as JSON.  FRR runs in
SONiC's split routing-config mode (`docker_routing_config_mode: split`), so bgpd reads the rendered frr.conf; the
BGP_NEIGHBOR table carries the same sessions for SONiC's own tools.

Buffer and headroom figures are derived, not published (domain-facts section 2: "not found"): headroom covers two
cable round trips at line rate plus two MTUs, sized per speed and cable length, on Broadcom's 256-byte cells.
"""

from __future__ import annotations

import hashlib
import json
import math
from functools import partial
from typing import Any

from teton.design.fabric import Device, Fabric, Interface
from teton.design.ports import port_names
from teton.findings import Finding
from teton.render.context import RenderContext
from teton.render.frr import render_frr
from teton.render.intent import bgp_intent, mgmt_intent, qos_intent
from teton.render.parallel import render_devices
from teton.spec.model import SwitchModel

NAME = "sonic"
QOS_MAP = "ROCE"
CABLE_M = {"dac": 5, "aoc": 30, "mmf": 100, "smf": 300}
CELL = 256
SCHEDULERS = {"scheduler.best_effort": {"type": "DWRR", "weight": "50"},
              "scheduler.lossless": {"type": "DWRR", "weight": "50"},
              "scheduler.cnp": {"type": "STRICT", "priority": "6"}}


def sonic_devices(fabric: Fabric) -> list[Device]:
    return [fabric.devices[n] for n in sorted(fabric.devices) if fabric.devices[n].nos == "sonic"]


def _mac(name: str) -> str:
    """A stable, locally administered MAC for the device (the real one is read from the switch's EEPROM)."""
    b = bytearray(hashlib.sha256(name.encode()).digest()[:6])
    b[0] = (b[0] & 0xFC) | 0x02
    return ":".join(f"{x:02x}" for x in b)


def _ports(model: SwitchModel, device: Device, mtu_default: int) -> dict[str, dict[str, str]]:
    used = {i.name: i for i in device.interfaces}
    per_slot = max(1, model.ports // model.slots)
    groups = [g for g in model.port_groups for _ in range(g.count)]
    out: dict[str, dict[str, str]] = {}
    for index, ((name, speed, lane), group) in enumerate(zip(port_names(model), groups, strict=True)):
        alias = (f"eth{model.first_slot + index // per_slot}/{index % per_slot + 1}/1" if model.slots > 1
                 else f"Ethernet{index + 1}/1")
        i = used.get(name)
        entry = {"alias": alias, "index": str(index + 1),
                 "lanes": ",".join(str(lane + k) for k in range(group.lanes)),
                 "speed": str((i.speed_gbps if i else speed) * 1000), "fec": "rs",
                 "mtu": str(i.mtu if i else mtu_default), "admin_status": "up" if i else "down"}
        if i:
            entry["description"] = f"{i.peer}:{i.peer_port}"
        out[name] = entry
    return out


def _breakouts(model: SwitchModel) -> dict[str, dict[str, str]]:
    """Each port's breakout mode: unbroken at its native speed (the catalogue lists the modes it also supports)."""
    groups = [g for g in model.port_groups for _ in range(g.count)]
    return {name: {"brkout_mode": f"1x{speed}G"}
            for (name, speed, _), g in zip(port_names(model), groups, strict=True)
            if f"1x{speed}G" in g.breakouts or not g.breakouts}


def _headroom(speed_gbps: int, cable_m: int, mtu: int) -> int:
    bytes_per_ns = speed_gbps / 8
    rtt_ns = 2 * cable_m * 5 + 2 * 1000          # cable both ways (5 ns/m) plus ~1 us of PFC response each side
    xoff = bytes_per_ns * rtt_ns + 2 * mtu
    return int(math.ceil(xoff / CELL) * CELL)


def _qos_tables(model: SwitchModel, device: Device, qos: dict[str, Any]) -> dict[str, Any]:
    ports = device.interfaces
    if not ports:
        return {}
    lossless, cnp = qos["lossless_priority"], qos["cnp_priority"]
    other = [q for q in range(8) if q not in (lossless, cnp)]
    buffer = int(model.buffer_mb * 1024 * 1024)
    t: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {QOS_MAP: {str(d): str(tc) for d, tc in sorted(qos["dscp_to_tc"].items())}},
        "TC_TO_QUEUE_MAP": {QOS_MAP: {str(tc): str(tc) for tc in range(8)}},
        "TC_TO_PRIORITY_GROUP_MAP": {QOS_MAP: {str(tc): str(tc if tc == lossless else 0) for tc in range(8)}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {QOS_MAP: {str(p): str(p) for p in range(8)}},
        "SCHEDULER": dict(SCHEDULERS),
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
    if qos["ecn"]:
        kb = 1024
        lo, hi = str(qos["ecn_min_kbytes"] * kb), str(qos["ecn_max_kbytes"] * kb)
        t["WRED_PROFILE"] = {"ROCE_LOSSLESS": {
            "wred_green_enable": "true", "wred_yellow_enable": "true", "wred_red_enable": "true", "ecn": "ecn_all",
            "green_min_threshold": lo, "green_max_threshold": hi, "green_drop_probability": "5",
            "yellow_min_threshold": lo, "yellow_max_threshold": hi, "yellow_drop_probability": "5",
            "red_min_threshold": lo, "red_max_threshold": hi, "red_drop_probability": "5"}}
    if qos["pfc_watchdog"]:
        ms = str(qos["pfc_watchdog_ms"])
        t["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": str(min(100, qos["pfc_watchdog_ms"] // 2))}}
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
              "pfc_to_queue_map": QOS_MAP, "pfc_enable": str(lossless)}
        if qos["pfc_watchdog"]:
            pq["pfcwd_sw_enable"] = str(lossless)
            t["PFC_WD"][i.name] = {"action": "drop", "detection_time": ms, "restoration_time": ms}
        t["PORT_QOS_MAP"][i.name] = pq
        lossless_q = {"scheduler": "scheduler.lossless"}
        if qos["ecn"]:
            lossless_q["wred_profile"] = "ROCE_LOSSLESS"
        t["QUEUE"][f"{i.name}|{lossless}"] = lossless_q
        t["QUEUE"][f"{i.name}|{cnp}"] = {"scheduler": "scheduler.cnp"}
        for q in other:
            t["QUEUE"][f"{i.name}|{q}"] = {"scheduler": "scheduler.best_effort"}
        t["BUFFER_PG"][f"{i.name}|0"] = {"profile": "ingress_lossy_profile"}
        t["BUFFER_PG"][f"{i.name}|{lossless}"] = {"profile": profile}
        t["BUFFER_QUEUE"][f"{i.name}|{lossless}"] = {"profile": "egress_lossless_profile"}
        for q in other + [cnp]:
            t["BUFFER_QUEUE"][f"{i.name}|{q}"] = {"profile": "egress_lossy_profile"}
    return t


def _mgmt_tables(device: Device, m: dict[str, Any]) -> dict[str, Any]:
    t: dict[str, Any] = {
        "MGMT_PORT": {"eth0": {"alias": "eth0", "admin_status": "up", "description": "out-of-band management"}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
        "SSH_SERVER": {"POLICIES": {"authentication_retries": "3", "login_timeout": "60", "ports": "22",
                                    "permit_root_login": "no", "password_authentication": "false"}},
    }
    if m["address"]:
        entry = {"gwaddr": m["gateway"]} if m["gateway"] else {}
        t["MGMT_INTERFACE"] = {f"eth0|{m['address']}": entry}
    if m["ntp"]:
        t["NTP"] = {"global": {"vrf": "mgmt", "src_intf": "eth0"}}
        t["NTP_SERVER"] = {ip: {"association_type": "server", "iburst": "on", "version": "4"} for ip in m["ntp"]}
    if m["syslog"]:
        t["SYSLOG_SERVER"] = {ip: {"vrf": "mgmt", "port": "514", "protocol": "udp", "severity": "notice"}
                              for ip in m["syslog"]}
    if m["aaa_servers"]:
        if m["aaa_protocol"] == "tacacs+":
            t["AAA"] = {"authentication": {"login": "tacacs+"}}
            t["TACPLUS"] = {"global": {"auth_type": "pap", "timeout": "5", "passkey": m["aaa_key"]}}
            t["TACPLUS_SERVER"] = {ip: {"priority": str(n), "tcp_port": "49", "passkey": m["aaa_key"], "vrf": "mgmt"}
                                   for n, ip in enumerate(m["aaa_servers"], start=1)}
        else:
            t["AAA"] = {"authentication": {"login": "radius"}}
            t["RADIUS"] = {"global": {"auth_type": "pap", "timeout": "5", "passkey": m["aaa_key"]}}
            t["RADIUS_SERVER"] = {ip: {"priority": str(n), "auth_port": "1812", "passkey": m["aaa_key"],
                                       "vrf": "mgmt"} for n, ip in enumerate(m["aaa_servers"], start=1)}
    if m["telemetry"] == "gnmi":
        t["GNMI"] = {"gnmi": {"client_auth": "true", "port": "50051", "log_level": "2", "user_auth": "cert",
                              "vrf": "mgmt"},
                     "certs": {"ca_crt": "/etc/sonic/telemetry/ca.cer", "server_crt": "/etc/sonic/telemetry/server.cer",
                               "server_key": "/etc/sonic/telemetry/server.key"}}
    else:
        t["SNMP_USER"] = {m["snmpv3_user"]: {"SNMP_USER_TYPE": "Priv", "SNMP_USER_PERMISSION": "RO",
                                             "SNMP_USER_AUTH_TYPE": "SHA", "SNMP_USER_AUTH_PASSWORD": m["snmpv3_auth"],
                                             "SNMP_USER_ENCRYPTION_TYPE": "AES",
                                             "SNMP_USER_ENCRYPTION_PASSWORD": m["snmpv3_priv"]}}
    services = ["SSH"] + (["SNMP"] if m["telemetry"] == "snmpv3" else [])
    rules: dict[str, dict[str, str]] = {}
    for n, prefix in enumerate(m["prefixes"], start=1):
        v6 = ":" in prefix
        rule = {"PRIORITY": str(9999 - n), "PACKET_ACTION": "ACCEPT",
                ("SRC_IPV6" if v6 else "SRC_IP"): prefix}
        if v6:
            rule["IP_TYPE"] = "IPV6ANY"
        rules[f"MGMT_ONLY|RULE_{n * 10}"] = rule
    rules["MGMT_ONLY|DEFAULT_RULE"] = {"PRIORITY": "1", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV4ANY"}
    rules["MGMT_ONLY|DEFAULT_RULE_V6"] = {"PRIORITY": "2", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV6ANY"}
    t["ACL_TABLE"] = {"MGMT_ONLY": {"type": "CTRLPLANE", "stage": "ingress", "services": services,
                                    "policy_desc": "management prefixes only"}}
    t["ACL_RULE"] = rules
    return t


def config_db(fabric: Fabric, device: Device, qos: dict[str, Any] | None = None,
              bgp: dict[str, Any] | None = None) -> dict[str, Any]:
    """The device's Config DB as plain dicts (all values strings, as Config DB stores them)."""
    model: SwitchModel = fabric.models[device.model]
    bgp = bgp or bgp_intent(fabric, device)
    mtu = max((i.mtu for i in device.interfaces), default=9100)
    db: dict[str, Any] = {
        "DEVICE_METADATA": {"localhost": {
            "hostname": device.name, "platform": model.platform.get("sonic", ""),
            "hwsku": model.hwsku.get("sonic", ""), "bgp_asn": str(device.asn), "type": "ToRRouter",
            "buffer_model": "traditional", "mac": _mac(device.name), "docker_routing_config_mode": "split",
            "default_pfcwd_status": "enable" if qos and qos["pfc_watchdog"] else "disable", "timezone": "UTC"}},
        "PORT": _ports(model, device, mtu),
        "BREAKOUT_CFG": _breakouts(model),
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
    for n in bgp["neighbors"]:
        db["BGP_NEIGHBOR"][n["ip"]] = {"asn": str(n["remote_as"]), "name": n["description"].split(":")[0],
                                       "local_addr": n["local_ip"], "holdtime": str(bgp["hold"]),
                                       "keepalive": str(bgp["keepalive"]), "admin_status": "up"}
    if qos is not None:
        db.update(_qos_tables(model, device, qos))
    db.update(_mgmt_tables(device, mgmt_intent(fabric, device)))
    return db


_compact = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode
_row = json.JSONEncoder(sort_keys=True, separators=(", ", ": ")).encode


def dump_config_db(db: dict[str, Any]) -> str:
    """JSON with one Config DB row per line (so a review diff shows exactly the rows that changed)."""
    out = ["{"]
    tables = sorted(db)
    for t, table in enumerate(tables):
        rows = db[table]
        out.append(f" {_row(table)}: {{")
        keys = sorted(rows)
        out.extend(f"  {_row(k)}: {_row(rows[k])}{',' if n < len(keys) - 1 else ''}" for n, k in enumerate(keys))
        out.append(" }" + ("," if t < len(tables) - 1 else ""))
    out.append("}")
    return "\n".join(out) + "\n"


def _interface(table: dict[str, Any], i: Interface) -> None:
    table[i.name] = {}
    for addr in (i.ipv4, i.ipv6):
        if addr:
            table[f"{i.name}|{addr}"] = {}


# Tables that differ from one switch to the next; everything else (QoS, buffers, management policy) is identical
# across switches of one model and plane, so its validation result is reused for byte-identical content.
PER_DEVICE = frozenset({"DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE", "BGP_NEIGHBOR", "MGMT_PORT",
                        "MGMT_INTERFACE"})
SHARED_CONTEXT = ("PORT", "MGMT_PORT", "DEVICE_METADATA")  # what the shared tables reference


class SplitValidator:
    """YANG-validates whole config_dbs, each distinct shared part once: every table of every device is checked.

    A config_db is split into its per-device tables (validated every time) and its shared tables plus the tables they
    reference (validated once per distinct content, keyed by its canonical JSON).  PORT rows are the one table of both
    kinds: a cabled port's row (it names its peer) is per-device, an unused port's row is the same on every switch of
    the model and is validated with the shared part, which holds every PORT row without its description.
    """

    def __init__(self, yang_dir: Any = None):
        from teton.validate.sonic_yang import SonicYangValidator

        self.yang = SonicYangValidator(yang_dir)
        self._shared: dict[str, list[Any]] = {}

    def validate(self, device: str, db: dict[str, Any]) -> list[Any]:
        per = {k: v for k, v in db.items() if k in PER_DEVICE}
        if "PORT" in per:
            cabled = {k.split("|", 1)[0] for k in db.get("INTERFACE", {})}
            per["PORT"] = {k: v for k, v in per["PORT"].items() if k in cabled or "description" in v}
        shared = {k: v for k, v in db.items() if k not in PER_DEVICE}
        issues = list(self.yang.validate(device, per))
        if shared or "PORT" in db:
            for k in SHARED_CONTEXT:
                if k in db:
                    shared[k] = _normalised(k, db[k])
            key = hashlib.sha256(_compact(shared).encode()).hexdigest()
            if key not in self._shared:
                self._shared[key] = list(self.yang.validate(device, shared))
            issues += [i for i in self._shared[key] if i.table not in SHARED_CONTEXT]
        return issues


def _normalised(table: str, rows: dict[str, Any]) -> dict[str, Any]:
    """Per-device fields that shared tables never reference, fixed, so that the shared part is the same."""
    if table == "DEVICE_METADATA":
        return {k: {**v, "hostname": "switch", "mac": "02:00:00:00:00:00", "bgp_asn": "4200000000"}
                for k, v in rows.items()}
    if table == "PORT":
        return {k: {f: x for f, x in v.items() if f != "description"} for k, v in rows.items()}
    return rows


def _render_chunk(fabric: Fabric, ctx: RenderContext, names: list[str]) -> tuple[dict[str, str], list[Finding]]:
    qos = qos_intent(fabric) if fabric.qos else None
    validator = SplitValidator(ctx.sonic_yang_dir) if ctx.validate else None
    files: dict[str, str] = {}
    problems: list[Finding] = []
    for name in names:
        d = fabric.devices[name]
        bgp = bgp_intent(fabric, d)
        db = config_db(fabric, d, qos if d.plane == "backend" else None, bgp)
        path = f"devices/{d.name}/config_db.json"
        if validator is not None:
            problems += [Finding(path, f"{i.table}|{i.key}" + (f"/{i.field}" if i.field else ""), i.message,
                                 rule="sonic-yang") for i in validator.validate(d.name, db)]
        files[path] = dump_config_db(db)
        files[f"devices/{d.name}/frr.conf"] = render_frr(d.name, bgp)
    return files, problems


def render(fabric: Fabric, ctx: RenderContext) -> dict[str, str]:
    return render_devices(partial(_render_chunk, fabric, ctx), [d.name for d in sonic_devices(fabric)])
