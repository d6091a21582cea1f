"""QoS decisions: the RoCE lossless class of the backend, one for every switch and NIC.

Classes (docs/sources.md section 2: DSCP-based PFC with a single lossless queue; receiver-driven admission with the
clear-to-send messages at high priority):
- RoCE's DSCP to the lossless class, PFC on its priority;
- the collective's control messages (NCCL's CTS FIFO, `NCCL_IB_FIFO_TC`) to a strict-priority class of their own;
- congestion notifications (CNP) to a strict-priority class;
- everything else best effort in class 0.

Scheduling, one rule every NOS can spell: the queues from 0 up to the lossless one are deficit weighted round robin
(EOS turns every queue below a round-robin queue into round robin itself), the rest strict priority.  Round-robin
weights are percents of the round-robin share and sum to 100: the lossless queue its `lossless_weight` (50), each idle
round-robin queue 1 (SONiC's smallest weight), best effort the rest.

ECN thresholds (used only when ECN is on, i.e. DCQCN): per port speed and buffer class, from the 100G anchor of
NVIDIA's RoCE defaults (150 KB / 1.5 MB) scaled with the port speed, so marking starts at the same queueing delay
(12 us and 120 us), and, on a deep-buffer spine, twice the minimum and four times the maximum (a VoQ switch absorbs
bursts; Meta measured tighter thresholds costing about 5 % AllReduce).  Derived, not published: docs/qos.md.
The PFC watchdog polls at half its detection time, within 100-1000 ms (what SONiC accepts).
"""

from __future__ import annotations

from collections.abc import Iterable

from teton.fabric.intent import BufferClass, Ecn, PfcWatchdog, Qos, Queue
from teton.spec.model import RoceQos

QUEUES = 8
ECN_MARK_PERCENT = 5
ECT0 = 2                   # the ECN-capable-transport code point a RoCE sender sets when the fabric marks ECN
ECN_ANCHOR_GBPS = 100
ECN_ANCHOR_BYTES = (150_000, 1_500_000)      # NVIDIA's RoCE defaults at 100G (Cumulus RoCE docs): min, max
DEEP_FACTOR = (2, 4)                          # deep-buffer spine: min x2, max x4
IDLE_WEIGHT = 1                               # SONiC's smallest DWRR weight (sonic-scheduler.yang: 1..100)


def default_ecn(speed_gbps: int, buffer: BufferClass) -> Ecn:
    lo, hi = (x * speed_gbps // ECN_ANCHOR_GBPS for x in ECN_ANCHOR_BYTES)
    if buffer == "deep":
        lo, hi = lo * DEEP_FACTOR[0], hi * DEEP_FACTOR[1]
    return Ecn(speed_gbps, buffer, lo, hi, ECN_MARK_PERCENT)


def ecn_table(q: RoceQos, speeds: Iterable[int]) -> tuple[Ecn, ...]:
    """Thresholds for every speed the backend uses, both buffer classes; the spec's entries replace the defaults."""
    own = {(t.speed_gbps, t.buffer): Ecn(t.speed_gbps, t.buffer, t.min_bytes, t.max_bytes, t.mark_percent)
           for t in q.ecn_thresholds}
    classes: tuple[BufferClass, ...] = ("shallow", "deep")
    keys = sorted({(s, b) for s in speeds for b in classes} | set(own))
    return tuple(own.get(k) or default_ecn(*k) for k in keys)


def queues(q: RoceQos) -> tuple[Queue, ...]:
    role = {q.lossless_priority: "lossless", q.cnp_priority: "cnp", q.control_priority: "control", 0: "best-effort"}
    dwrr = range(q.lossless_priority + 1)
    idle = [i for i in dwrr if i not in role]
    out = []
    for i in range(QUEUES):
        r = role.get(i, "idle")
        if i not in dwrr:
            out.append(Queue(i, r, True, 0))                     # type: ignore[arg-type]
        else:
            weight = (q.lossless_weight if r == "lossless" else IDLE_WEIGHT if r == "idle"
                      else 100 - q.lossless_weight - IDLE_WEIGHT * len(idle))
            out.append(Queue(i, r, False, weight))               # type: ignore[arg-type]
    return tuple(out)


def qos(q: RoceQos, speeds: Iterable[int] = ()) -> Qos:
    dscp_to_tc = [0] * 64
    dscp_to_tc[q.roce_dscp] = q.lossless_priority
    dscp_to_tc[q.control_dscp] = q.control_priority
    dscp_to_tc[q.cnp_dscp] = q.cnp_priority
    return Qos(
        roce_dscp=q.roce_dscp, cnp_dscp=q.cnp_dscp, lossless_priority=q.lossless_priority,
        cnp_priority=q.cnp_priority, dscp_to_tc=tuple(dscp_to_tc), pfc_priorities=(q.lossless_priority,),
        queues=queues(q),
        ecn=ecn_table(q, speeds) if q.ecn else None,
        roce_tos=q.roce_dscp << 2 | (ECT0 if q.ecn else 0),
        watchdog=PfcWatchdog(q.pfc_watchdog_ms, q.pfc_watchdog_ms, max(100, min(1000, q.pfc_watchdog_ms // 2)),
                             "drop")
        if q.pfc_watchdog else None,
        control_dscp=q.control_dscp, control_priority=q.control_priority, control_tos=q.control_dscp << 2)
