"""FBOSS's RoCE QoS, spelled from a backend switch's `qos` and `buffers` intents (the same numbers as the SONiC and EOS
spellings; docs/qos.md):

- one QoS policy (`qosPolicies`, the data plane's default): DSCP -> traffic class (`dscpMaps`), traffic class ->
  queue, PFC priority -> queue, traffic class and PFC priority -> priority group (the lossless class its own PG, the
  rest PG 0);
- one port queue config per set of ECN thresholds (`portQueueConfigs`: queues-roce, or queues-roce-<speed>g with
  ECN): every queue strict or deficit round robin with the intent's weight, WRED/ECN on the lossless queue as an
  `aqms` entry (linear detection, ECN marking) where the intent has it; lossless and lossy queues on their own pools;
- buffer pools (`bufferPoolConfigs`) and one PG config per (speed, cable length) the ports use (`portPgConfigs`): the
  lossless PG with the design's reserved size, headroom and resume offset, PG 0 lossy;
- per cabled port: PFC (tx and rx) on its PG config, with the PFC watchdog of the intent.
"""

from __future__ import annotations

from typing import Any

from teton.design.buffers import cable_m
from teton.fabric.intent import Buffers, Ecn, PgProfile, Qos
from teton.fabric.model import Device, Fabric
from teton.findings import Finding
from teton.targets.fboss import enums as E

POLICY = "qp-roce"
QUEUES = "queues-roce"
INGRESS_POOL, EGRESS_LOSSLESS, EGRESS_LOSSY = "ingress_lossless_pool", "egress_lossless_pool", "egress_lossy_pool"
LOSSY_RESERVED = 1778        # bytes reserved per lossy queue (as SONiC's egress_lossy_profile)


def queue_config_name(ecn: Ecn | None) -> str:
    return QUEUES if ecn is None else f"{QUEUES}-{ecn.speed_gbps}g"


def pg_config_name(p: PgProfile) -> str:
    return f"pg-{p.speed_gbps}g-{p.cable_m}m"


def _policy(qos: Qos) -> dict[str, Any]:
    by_tc: dict[int, list[int]] = {}
    for dscp, tc in enumerate(qos.dscp_to_tc):
        by_tc.setdefault(tc, []).append(dscp)
    lossless = set(qos.pfc_priorities)
    return {"name": POLICY, "rules": [], "qosMap": {
        "dscpMaps": [{"internalTrafficClass": tc, "fromDscpToTrafficClass": d} for tc, d in sorted(by_tc.items())],
        "expMaps": [],
        "trafficClassToQueueId": {str(q.tc): q.tc for q in qos.queues},
        "pfcPriorityToQueueId": {str(q.tc): q.tc for q in qos.queues},
        "trafficClassToPgId": {str(q.tc): q.tc if q.tc in lossless else 0 for q in qos.queues},
        "pfcPriorityToPgId": {str(q.tc): q.tc if q.tc in lossless else 0 for q in qos.queues}}}


def _queues(qos: Qos, ecn: Ecn | None, buffers: Buffers | None) -> list[dict[str, Any]]:
    out = []
    for q in qos.queues:
        e: dict[str, Any] = {"id": q.tc, "name": q.role, "streamType": E.UNICAST,
                             "scheduling": E.STRICT if q.strict else E.DRR}
        if not q.strict:
            e["weight"] = q.weight
        if buffers is not None:
            if q.role == "lossless":
                e.update(bufferPoolName=EGRESS_LOSSLESS, sharedBytes=buffers.egress_lossless_pool)
            else:
                e.update(bufferPoolName=EGRESS_LOSSY, reservedBytes=LOSSY_RESERVED, scalingFactor=E.SCALE_EIGHT)
        if q.role == "lossless" and ecn is not None:
            e["aqms"] = [{"detection": {"linear": {"minimumLength": ecn.min_bytes, "maximumLength": ecn.max_bytes,
                                                   "probability": ecn.mark_percent}},
                          "behavior": E.AQM_ECN}]
        out.append(e)
    return out


def _pgs(qos: Qos, p: PgProfile) -> list[dict[str, Any]]:
    return [{"id": 0, "name": "lossy", "minLimitBytes": 0, "bufferPoolName": INGRESS_POOL,
             "scalingFactor": E.SCALE_EIGHT},
            *({"id": prio, "name": "lossless", "minLimitBytes": p.size, "headroomLimitBytes": p.xoff,
               "resumeOffsetBytes": p.xon_offset, "bufferPoolName": INGRESS_POOL, "scalingFactor": E.SCALE_ONE}
              for prio in qos.pfc_priorities)]


def qos_config(fabric: Fabric, d: Device, ports: dict[str, dict[str, Any]],
               path: str) -> tuple[dict[str, Any], list[Finding]]:
    """The QoS part of `sw`, and each cabled port's `pfc` and `portQueueConfigName` set in `ports` (by name)."""
    qos, buffers = d.qos, d.buffers
    assert qos is not None
    problems: list[Finding] = []
    buffering = fabric.models[d.model].buffering
    queue_configs: dict[str, list[dict[str, Any]]] = {}
    pg_configs: dict[str, list[dict[str, Any]]] = {}
    by_key = {(p.speed_gbps, p.cable_m): p for p in buffers.profiles} if buffers is not None else {}
    wd = qos.watchdog
    for i in sorted(d.interfaces, key=lambda i: i.ordinal):
        port = ports.get(i.name)
        if port is None:
            continue
        ecn = qos.ecn_for(i.speed_gbps, buffering)
        name = queue_config_name(ecn)
        queue_configs.setdefault(name, _queues(qos, ecn, buffers))
        port["portQueueConfigName"] = name
        if buffers is None:
            continue
        profile = by_key.get((i.speed_gbps, cable_m(i.medium)))
        if profile is None:
            problems.append(Finding(path, f"sw.ports[{i.name}].pfc", f"no lossless buffer profile for "
                                    f"{i.speed_gbps}G over {cable_m(i.medium)} m", rule="fboss-qos"))
            continue
        pg_configs.setdefault(pg_config_name(profile), _pgs(qos, profile))
        pfc: dict[str, Any] = {"tx": True, "rx": True, "portPgConfigName": pg_config_name(profile)}
        if wd is not None:
            pfc["watchdog"] = {"detectionTimeMsecs": wd.detection_ms, "recoveryTimeMsecs": wd.restoration_ms,
                               "recoveryAction": E.WD_DROP if wd.action == "drop" else E.WD_NO_DROP}
        port["pfc"] = pfc
    out: dict[str, Any] = {"qosPolicies": [_policy(qos)],
                           "dataPlaneTrafficPolicy": {"matchToAction": [], "defaultQosPolicy": POLICY},
                           "portQueueConfigs": dict(sorted(queue_configs.items()))}
    if buffers is not None:
        out["bufferPoolConfigs"] = {INGRESS_POOL: {"sharedBytes": buffers.ingress_lossless_pool,
                                                   "headroomBytes": buffers.ingress_xoff_pool},
                                    EGRESS_LOSSLESS: {"sharedBytes": buffers.egress_lossless_pool},
                                    EGRESS_LOSSY: {"sharedBytes": buffers.egress_lossy_pool}}
        out["portPgConfigs"] = dict(sorted(pg_configs.items()))
    return out, problems
