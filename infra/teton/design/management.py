"""Management plane: one out-of-band address per switch from `management.network`, in device order, and the plane's
settings every switch gets (VRF, AAA, NTP, syslog, telemetry, the prefixes admitted to the control plane)."""

from __future__ import annotations

import ipaddress

from teton.design.draft import DraftFabric
from teton.fabric.intent import ManagementIntent
from teton.fabric.roles import switch_roles
from teton.spec.model import Cluster

FIRST_HOST = 10  # .1-.9 left for gateways and servers of the management network
GNMI_PORT = 50051


def mgmt_capacity(network: str) -> int:
    net = ipaddress.ip_network(network)
    return max(0, net.num_addresses - FIRST_HOST - 1)


def assign_management(cluster: Cluster, fabric: DraftFabric) -> None:
    m = cluster.management
    if m.network is None:
        return
    net = ipaddress.ip_network(m.network)
    base = int(net.network_address) + FIRST_HOST
    cls = type(net.network_address)
    i = 0
    switches = switch_roles()
    for d in fabric.devices.values():
        if d.role in switches:
            d.mgmt = f"{cls(base + i)}/{net.prefixlen}"
            i += 1


def management(cluster: Cluster) -> ManagementIntent:
    m = cluster.management
    return ManagementIntent(
        vrf=m.vrf, gateway=m.gateway, prefixes=tuple(m.prefixes), ntp_servers=tuple(m.ntp_servers),
        syslog_servers=tuple(m.syslog_servers), aaa_protocol=m.aaa_protocol, aaa_servers=tuple(m.aaa_servers),
        aaa_key_secret=m.aaa_key_secret, telemetry=m.telemetry, snmpv3_user=m.snmpv3_user,
        snmpv3_auth_secret=m.snmpv3_auth_secret, snmpv3_priv_secret=m.snmpv3_priv_secret, gnmi_port=GNMI_PORT,
        breakglass_user=m.breakglass_user, breakglass_secret=m.breakglass_secret)
