"""Host side of the backend: what every Grand Teton NIC is set to (address, MTU, gateway, RoCE QoS), in
`hosts/backend.json`.

The QoS is the very intent the switches spell (the device's `qos`), so NIC and switch agree by construction; the
rendered-file checks still compare them, since a file can be edited.  The Ansible host playbooks will consume it; the
twin reads it back for the GPU hosts' NICs.
"""

from __future__ import annotations

import json
from typing import Any

from teton.fabric.intent import Qos, SwitchPolicy
from teton.fabric.model import Fabric
from teton.findings import Finding
from teton.targets.base import (
    BuildFileError,
    BuildFiles,
    DeviceView,
    Files,
    PortView,
    QosView,
    RenderContext,
    Target,
)
from teton.targets.transports import register_transport

PATH = "hosts/backend.json"


def host_qos(q: Qos, policy: SwitchPolicy | None) -> dict[str, Any]:
    qps = policy.hashing.qps_per_connection if policy is not None else 1
    return {"trust": "dscp", "pfc_priorities": list(q.pfc_priorities), "roce_dscp": q.roce_dscp,
            "roce_tos": q.roce_tos, "cnp_dscp": q.cnp_dscp, "cnp_priority": q.cnp_priority,
            "control_dscp": q.control_dscp, "control_priority": q.control_priority,
            "dscp_to_priority": {str(d): tc for d, tc in enumerate(q.dscp_to_tc)},
            "nccl": {"NCCL_IB_TC": q.roce_tos, "NCCL_IB_FIFO_TC": q.control_tos, "NCCL_IB_QPS_PER_CONNECTION": qps,
                     "NCCL_IB_SPLIT_DATA_ON_QPS": 0}}


class HostsTarget(Target):
    name = "hosts"
    cost_per_device = 0.00002
    summary = "hosts/backend.json: every GPU NIC's address, MTU, gateway and RoCE QoS"

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        if fabric.qos is None:
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
        head = json.dumps({"qos": host_qos(fabric.qos, fabric.policy)}, sort_keys=True)[:-1]
        return {PATH: f'{head}, "nics": [\n{body}\n]}}\n'}

    def read_back(self, source: BuildFiles, fabric: Fabric, ctx: RenderContext,
                  vendor: bool = True) -> tuple[list[DeviceView], list[Finding]]:
        if fabric.qos is None:
            return [], []
        try:
            data = source.json(PATH)
            q = data["qos"]
            qos = QosView(tuple(sorted(q["pfc_priorities"])),
                          {int(k): int(v) for k, v in q["dscp_to_priority"].items()}, "qos")
            views: dict[str, DeviceView] = {}
            for n, nic in enumerate(data["nics"]):
                v = views.setdefault(nic["host"], DeviceView(nic["host"], "host", PATH, qos=qos, qos_file=PATH))
                v.interfaces[nic["nic"]] = PortView(
                    nic["mtu"], tuple(c for c in (nic["ipv4"], nic["ipv6"]) if c), f"nics[{n}].mtu",
                    tuple(g for g in (nic["gateway4"], nic["gateway6"]) if g))
        except BuildFileError as exc:
            return [], [Finding(exc.path, "", exc.problem, rule="io")]
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            return [], [Finding(PATH, "", f"not what teton writes: {type(exc).__name__}: {exc}", rule="io")]
        return list(views.values()), []


TARGET = HostsTarget()
register_transport("live", "host", "teton.targets.hosts.transport:live_transport")   # `teton verify live`'s pings
