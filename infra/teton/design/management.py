"""Management plane: one out-of-band address per switch from `management.network`, in device order."""

from __future__ import annotations

import ipaddress

from teton.design.fabric import Fabric
from teton.spec.model import Cluster

SWITCH_ROLES = ("atsw", "ctsw", "rtsw", "fsw", "fe-rsw")
FIRST_HOST = 10  # .1-.9 left for gateways and servers of the management network


def mgmt_capacity(network: str) -> int:
    net = ipaddress.ip_network(network)
    return max(0, net.num_addresses - FIRST_HOST - 1)


def assign_management(cluster: Cluster, fabric: Fabric) -> None:
    m = cluster.management
    if m.network is None:
        return
    net = ipaddress.ip_network(m.network)
    base = int(net.network_address) + FIRST_HOST
    cls = type(net.network_address)
    i = 0
    for d in fabric.devices.values():
        if d.role in SWITCH_ROLES:
            d.mgmt = f"{cls(base + i)}/{net.prefixlen}"
            i += 1
