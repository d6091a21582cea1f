"""Host side of the backend: what every Grand Teton NIC is set to (address, MTU, RoCE QoS), in `hosts/backend.json`.

The Ansible host playbooks consume it; the rendered-file checks compare it with the switches (same lossless priority
and DSCP, same MTU and /31 at both ends of every NIC link).
"""

from __future__ import annotations

import json
from typing import Any

from teton.design.fabric import Fabric
from teton.render.context import RenderContext
from teton.render.intent import qos_intent

NAME = "hosts"


def host_qos(fabric: Fabric) -> dict[str, Any]:
    q = qos_intent(fabric)
    ect = 2 if q["ecn"] else 0
    return {"trust": "dscp", "pfc_priorities": [q["lossless_priority"]], "roce_dscp": q["roce_dscp"],
            "roce_tos": q["roce_dscp"] << 2 | ect, "cnp_dscp": q["cnp_dscp"], "cnp_priority": q["cnp_priority"],
            "dscp_to_priority": {str(k): v for k, v in sorted(q["dscp_to_tc"].items())},
            "nccl": {"NCCL_IB_TC": q["roce_dscp"] << 2 | ect, "NCCL_IB_QPS_PER_CONNECTION": 16,
                     "NCCL_IB_SPLIT_DATA_ON_QPS": 0}}


def render(fabric: Fabric, ctx: RenderContext) -> dict[str, str]:
    if not fabric.qos:
        return {}
    nics = []
    for name in sorted(fabric.devices):
        d = fabric.devices[name]
        if d.role != "host":
            continue
        for i in d.interfaces:
            if i.kind == "host-rtsw":
                nics.append({"host": d.name, "nic": i.name, "ipv4": i.ipv4, "ipv6": i.ipv6, "mtu": i.mtu,
                             "gateway4": i.peer_ipv4, "gateway6": i.peer_ipv6, "switch": i.peer,
                             "switch_port": i.peer_port})
    row = json.JSONEncoder(sort_keys=True).encode
    body = ",\n".join(row(n) for n in nics)
    head = json.dumps({"qos": host_qos(fabric)}, sort_keys=True)[:-1]
    return {"hosts/backend.json": f'{head}, "nics": [\n{body}\n]}}\n'}
