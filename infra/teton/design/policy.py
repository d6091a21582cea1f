"""What every backend switch does alike: ECMP hashing for RDMA, link-flap dampening, the counters behind the alerts.

Hashing (docs/sources.md section 2): plain 5-tuple ECMP gives RoCE too little entropy; Meta hashes the destination queue
pair (E-ECMP) and runs 16 QPs per GPU pair for LLM jobs.  The hash is the 5-tuple, whose UDP source port a RoCEv2 NIC
sets per QP, plus, where the switch can read into the UDP payload (EOS sand profiles), the BTH's destination QP:
bytes 5-7 of the payload of UDP port 4791.

Dampening: a link that flaps is held down instead of churning BGP across the fabric (RFC 2439's penalty scheme on the
link state): each flap adds 1,000, the penalty halves every 30 s, the link is held down above 3,000 and back when it
falls under 1,500, at most 120 s.

Monitoring: PFC watchdog counters, queue and priority-group watermarks and drops, buffer-pool watermarks, ECN marks,
and the buffer alert the operators use (the spec's
`monitoring.buffer_percent`, 80 % as Meta's).
"""

from __future__ import annotations

from teton.fabric.intent import Hashing, LinkDamping, Monitoring, SwitchPolicy
from teton.spec.model import RoceBackend

ROCE_UDP_PORT = 4791
BTH_DEST_QP = (5, 7)
COUNTER_GROUPS = ("PORT", "QUEUE", "PG_WATERMARK", "QUEUE_WATERMARK", "PFCWD", "PG_DROP", "BUFFER_POOL_WATERMARK",
                  "WRED_ECN_QUEUE", "WRED_ECN_PORT")


def policy(be: RoceBackend, buffer_alert_percent: int = 80) -> SwitchPolicy:
    return SwitchPolicy(
        hashing=Hashing(fields=("SRC_IP", "DST_IP", "IP_PROTOCOL", "L4_SRC_PORT", "L4_DST_PORT"),
                        roce_udp_port=ROCE_UDP_PORT, roce_dqp_bytes=BTH_DEST_QP,
                        qps_per_connection=be.qps_per_connection, per_qp_source_port=True,
                        entropy=f"{be.qps_per_connection} QPs per GPU pair, each with its own UDP source port; the "
                        "destination QP of the BTH where the switch hashes the UDP payload"),
        damping=LinkDamping(half_life_s=30, penalty_per_flap=1000, suppress_threshold=3000, reuse_threshold=1500,
                            max_suppress_s=120),
        monitoring=Monitoring(counter_groups=COUNTER_GROUPS, buffer_alert_percent=buffer_alert_percent,
                              queue_monitor_log_s=5))
