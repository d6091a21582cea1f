"""SONiC's RoCE QoS and buffer tables, spelled from the device's `qos`, `buffers` and `policy` intents.

One lossless class (DSCP -> TC -> queue, PFC on its priority, its own priority group with the headroom the design
computed per speed and cable length), a strict-priority CNP queue, everything else best effort; WRED/ECN on the
lossless queue when the intent has it; the PFC watchdog per port; the ECMP hash of the policy.
"""

from __future__ import annotations

from typing import Any

from teton.design.buffers import cable_m
from teton.fabric.intent import BufferClass, Buffers, PgProfile, Qos, Queue, SwitchPolicy
from teton.fabric.model import Device

QOS_MAP = "ROCE"
SCHEDULER = {"lossless": "scheduler.lossless", "cnp": "scheduler.cnp", "control": "scheduler.control",
             "best-effort": "scheduler.best_effort", "idle": "scheduler.idle"}
WRED_PREFIX = "ROCE_LOSSLESS_"


def scheduler_name(q: Queue) -> str:
    """The SCHEDULER row of a queue: one per role, an idle strict queue one per priority (strict rows carry it)."""
    return f"{SCHEDULER[q.role]}_{q.tc}" if q.role == "idle" and q.strict else SCHEDULER[q.role]


def wred_name(speed_gbps: int) -> str:
    """WRED_PROFILE of the lossless queue on ports of one speed, named by PORT's speed (Mb/s)."""
    return f"{WRED_PREFIX}{speed_gbps * 1000}"


def _schedulers(qos: Qos) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for q in qos.queues:
        out[scheduler_name(q)] = ({"type": "STRICT", "priority": str(q.tc)} if q.strict
                                  else {"type": "DWRR", "weight": str(q.weight)})
    return out


def profile_name(p: PgProfile) -> str:
    return f"pg_lossless_{p.speed_gbps * 1000}_{p.cable_m}m_profile"


def buffer_profiles(b: Buffers) -> dict[str, dict[str, str]]:
    out = {
        "ingress_lossy_profile": {"pool": "ingress_lossless_pool", "size": "0", "dynamic_th": "3"},
        "egress_lossless_profile": {"pool": "egress_lossless_pool", "size": "0",
                                    "static_th": str(b.egress_lossless_pool)},
        "egress_lossy_profile": {"pool": "egress_lossy_pool", "size": "1778", "dynamic_th": "3"}}
    for p in b.lookup:
        out[profile_name(p)] = {"pool": "ingress_lossless_pool", "size": str(p.size), "xon": str(p.xon),
                                "xoff": str(p.xoff), "xon_offset": str(p.xon_offset), "dynamic_th": "0"}
    return out


def buffer_pools(b: Buffers) -> dict[str, dict[str, str]]:
    return {"ingress_lossless_pool": {"type": "ingress", "mode": "dynamic", "size": str(b.ingress_lossless_pool),
                                      "xoff": str(b.ingress_xoff_pool)},
            "egress_lossless_pool": {"type": "egress", "mode": "static", "size": str(b.egress_lossless_pool)},
            "egress_lossy_pool": {"type": "egress", "mode": "dynamic", "size": str(b.egress_lossy_pool)}}


def qos_maps(qos: Qos, buffer: BufferClass) -> dict[str, Any]:
    """The tables that do not depend on the ports: maps, schedulers, the WRED/ECN profile per port speed (thresholds in
    bytes, the intent's numbers as they are)."""
    t: dict[str, Any] = {
        "DSCP_TO_TC_MAP": {QOS_MAP: {str(d): str(tc) for d, tc in enumerate(qos.dscp_to_tc)}},
        "TC_TO_QUEUE_MAP": {QOS_MAP: {str(q.tc): str(q.tc) for q in qos.queues}},
        "TC_TO_PRIORITY_GROUP_MAP": {QOS_MAP: {str(q.tc): str(q.tc if q.role == "lossless" else 0)
                                               for q in qos.queues}},
        "MAP_PFC_PRIORITY_TO_QUEUE": {QOS_MAP: {str(q.tc): str(q.tc) for q in qos.queues}},
        "SCHEDULER": _schedulers(qos),
    }
    if qos.ecn is not None:
        t["WRED_PROFILE"] = {}
        for e in qos.ecn:
            if e.buffer != buffer:
                continue
            lo, hi, p = str(e.min_bytes), str(e.max_bytes), str(e.mark_percent)
            t["WRED_PROFILE"][wred_name(e.speed_gbps)] = {
                "wred_green_enable": "true", "wred_yellow_enable": "true", "wred_red_enable": "true",
                "ecn": "ecn_all",
                "green_min_threshold": lo, "green_max_threshold": hi, "green_drop_probability": p,
                "yellow_min_threshold": lo, "yellow_max_threshold": hi, "yellow_drop_probability": p,
                "red_min_threshold": lo, "red_max_threshold": hi, "red_drop_probability": p}
    return t


def qos_tables(device: Device, qos: Qos, buffers: Buffers, buffer: BufferClass) -> dict[str, Any]:
    """Every QoS and buffer table of the device (its cabled ports only)."""
    ports = device.interfaces
    if not ports:
        return {}
    lossless = qos.lossless_priority
    by_key = {(p.speed_gbps, p.cable_m): p for p in buffers.profiles}
    t: dict[str, Any] = {
        **qos_maps(qos, buffer),
        "BUFFER_POOL": buffer_pools(buffers),
        "BUFFER_PROFILE": buffer_profiles(buffers),
        "PORT_QOS_MAP": {}, "QUEUE": {}, "BUFFER_PG": {}, "BUFFER_QUEUE": {}, "CABLE_LENGTH": {QOS_MAP: {}},
    }
    wd = qos.watchdog
    if wd is not None:
        t["PFC_WD"] = {"GLOBAL": {"POLL_INTERVAL": str(wd.poll_ms)}}
    pfc = ",".join(str(p) for p in qos.pfc_priorities)
    # per queue, what its QUEUE and BUFFER_QUEUE rows hold on every port (the WRED profile by the port's speed)
    queues = [(f"|{q.tc}", scheduler_name(q), q.role == "lossless" and qos.ecn is not None,
               "egress_lossless_profile" if q.role == "lossless" else "egress_lossy_profile") for q in qos.queues]
    cables, port_qos, queue, buffer_queue, buffer_pg = (t["CABLE_LENGTH"][QOS_MAP], t["PORT_QOS_MAP"], t["QUEUE"],
                                                        t["BUFFER_QUEUE"], t["BUFFER_PG"])
    for i in ports:
        name = i.name
        cable = cable_m(i.medium)
        cables[name] = f"{cable}m"
        pq = {"dscp_to_tc_map": QOS_MAP, "tc_to_queue_map": QOS_MAP, "tc_to_pg_map": QOS_MAP,
              "pfc_to_queue_map": QOS_MAP, "pfc_enable": pfc}
        if wd is not None:
            pq["pfcwd_sw_enable"] = pfc
            t["PFC_WD"][name] = {"action": wd.action, "detection_time": str(wd.detection_ms),
                                 "restoration_time": str(wd.restoration_ms)}
        port_qos[name] = pq
        wred = wred_name(i.speed_gbps)
        for suffix, scheduler, with_wred, profile in queues:
            queue[name + suffix] = {"scheduler": scheduler, "wred_profile": wred} if with_wred else {
                "scheduler": scheduler}
            buffer_queue[name + suffix] = {"profile": profile}
        buffer_pg[f"{name}|0"] = {"profile": "ingress_lossy_profile"}
        buffer_pg[f"{name}|{lossless}"] = {"profile": profile_name(by_key[(i.speed_gbps, cable)])}
    return t


# (id(qos), id(buffers), buffer, each cabled port's (name, speed, medium)) -> (qos, buffers, tables)
_SHARED: dict[tuple[Any, ...], tuple[Qos, Buffers, dict[str, Any]]] = {}
_SHARED_MAX = 256   # distinct sets kept (a 24k has 4; each ~50 KB of tables: at most ~13 MB per worker)


def shared_qos_tables(device: Device, qos: Qos, buffers: Buffers, buffer: BufferClass) -> dict[str, Any]:
    """`qos_tables`, the same dicts for every switch with the same intents and cabled ports (the render's few distinct
    ones: a rack's ToRs alike): the caller must not change them.  Building them is 0.16 ms of a 24k switch, and
    comparing equal tables by identity row by row is cheap where they are compared (the config_db writer's cache).
    qos_tables reads of the device only its interfaces' name, speed and medium, of the intents only `qos`, `buffers`
    (frozen: one object is one content; the key holds their ids, the value keeps them alive) and `buffer`; the key
    holds those, of exact types (an int speed and a float one would be equal keys and spell apart)."""
    ports = tuple((i.name, i.speed_gbps, i.medium) for i in device.interfaces)
    if type(buffer) is not str or not all(type(n) is str and type(s) is int and type(m) is str for n, s, m in ports):
        return qos_tables(device, qos, buffers, buffer)
    key = (id(qos), id(buffers), buffer, ports)
    hit = _SHARED.get(key)
    if hit is not None and hit[0] is qos and hit[1] is buffers:
        return hit[2]
    tables = qos_tables(device, qos, buffers, buffer)
    if len(_SHARED) < _SHARED_MAX:
        _SHARED[key] = (qos, buffers, tables)
    return tables


def policy_tables(policy: SwitchPolicy) -> dict[str, Any]:
    """ECMP hash and the counters behind the alerts.  SONiC's hash has no field for the RoCE BTH (no UDF in
    sonic-hash): the entropy is the UDP source port a RoCEv2 NIC sets per queue pair, which the design requires of the
    hosts (`Hashing.per_qp_source_port`, NCCL_IB_QPS_PER_CONNECTION).  config_db.json has no room for a comment (and
    its YANG no free field): the HwSKU's qos.json.j2 says so in its header (`teton.targets.sonic.sku`), and
    docs/qos.md."""
    h = policy.hashing
    return {"SWITCH_HASH": {"GLOBAL": {"ecmp_hash": list(h.fields), "ecmp_hash_algorithm": "CRC"}},
            "FLEX_COUNTER_TABLE": {k: {"FLEX_COUNTER_STATUS": "enable"} for k in policy.monitoring.counter_groups}}
