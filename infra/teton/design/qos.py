"""QoS decisions: the RoCE lossless class of the backend, one for every switch and NIC.

One lossless traffic class for RoCE's DSCP with PFC on its priority, a strict-priority class for congestion
notifications (CNP), everything else best effort in class 0 (docs/sources.md section 2: DSCP-based PFC with a single
lossless queue).  Lossless and best effort share the link by weighted round robin, 50/50.  The PFC watchdog polls at
half its detection time, within 100-1000 ms (what SONiC accepts).
"""

from __future__ import annotations

from teton.fabric.intent import Ecn, PfcWatchdog, Qos, Queue
from teton.spec.model import RoceQos

QUEUES = 8
DWRR_WEIGHT = 50
ECN_MARK_PERCENT = 5
ECT0 = 2                   # the ECN-capable-transport code point a RoCE sender sets when the fabric marks ECN


def qos(q: RoceQos) -> Qos:
    dscp_to_tc = [0] * 64
    dscp_to_tc[q.roce_dscp] = q.lossless_priority
    dscp_to_tc[q.cnp_dscp] = q.cnp_priority
    queues = tuple(
        Queue(i, "lossless", False, DWRR_WEIGHT) if i == q.lossless_priority
        else Queue(i, "cnp", True, 0) if i == q.cnp_priority
        else Queue(i, "best-effort", False, DWRR_WEIGHT) for i in range(QUEUES))
    return Qos(
        roce_dscp=q.roce_dscp, cnp_dscp=q.cnp_dscp, lossless_priority=q.lossless_priority,
        cnp_priority=q.cnp_priority, dscp_to_tc=tuple(dscp_to_tc), pfc_priorities=(q.lossless_priority,),
        queues=queues,
        ecn=Ecn(q.ecn_min_kbytes, q.ecn_max_kbytes, ECN_MARK_PERCENT) if q.ecn else None,
        roce_tos=q.roce_dscp << 2 | (ECT0 if q.ecn else 0),
        watchdog=PfcWatchdog(q.pfc_watchdog_ms, q.pfc_watchdog_ms, max(100, min(1000, q.pfc_watchdog_ms // 2)),
                             "drop")
        if q.pfc_watchdog else None)
