"""Management plane: one out-of-band address per switch from `management.network`, by the switch's place in the
room (`teton.design.room`), and the plane's settings every switch gets (VRF, AAA, NTP, syslog, telemetry, the
prefixes admitted to the control plane).

Places go from .10 upward, skipping every address the spec names in the network: the gateway, the NTP, syslog and
AAA servers and `management.reserved`.  The backend's places come first (the RoCE designer's slots; an InfiniBand
fabric's switches in design order), then the front end's, so a switch added within the room takes the address kept
for it and no other switch moves.  `mgmt_capacity` counts what is left, so the spec rule pool-exhausted refuses a
network too small for every place of the room plus the reserved addresses."""

from __future__ import annotations

import ipaddress

from teton.design.draft import Draft, DraftFabric
from teton.fabric.intent import ManagementIntent, ZtpIntent
from teton.fabric.roles import switch_roles
from teton.spec.management import Management as MgmtSpec
from teton.spec.management import Ztp as ZtpSpec
from teton.spec.model import Cluster

FIRST_HOST = 10  # .1-.9 left for gateways and servers of the management network
GNMI_PORT = 50051
MAX_QUARANTINE = 4096   # addresses a quarantine pool may hold (rule ztp)


def reserved_addresses(m: MgmtSpec, ztp: ZtpSpec | None = None) -> frozenset[int]:
    """Addresses of the management network no switch may take: the gateway, every server the spec names (also the
    provisioning and image servers) and the quarantine pool (rule ztp refuses one outside the network or too large)."""
    if m.network is None:
        return frozenset()
    net = ipaddress.ip_network(m.network)
    named = [m.gateway, *m.ntp_servers, *m.syslog_servers, *m.aaa_servers, *m.dns_servers, *m.reserved,
             *(url_address(url) for url in ([ztp.server, *ztp.images.values()] if ztp is not None else []))]
    out = {int(a) for a in (ipaddress.ip_address(x) for x in named if x is not None)
           if a.version == net.version and a in net}
    if ztp is not None and ztp.quarantine is not None:
        first, last = (ipaddress.ip_address(x) for x in (ztp.quarantine.first, ztp.quarantine.last))
        if first.version == last.version == net.version and first in net and last in net \
                and 0 <= int(last) - int(first) < MAX_QUARANTINE:
            out.update(range(int(first), int(last) + 1))
    return frozenset(out)


def url_address(url: str) -> str | None:
    """The IP address a URL names (the provisioning server's, an image server's), or None (a DNS name)."""
    host = url.split("://", 1)[1].split("/", 1)[0]
    host = host[1:].split("]", 1)[0] if host.startswith("[") else host.rsplit(":", 1)[0] if ":" in host else host
    try:
        return str(ipaddress.ip_address(host))
    except ValueError:
        return None


def mgmt_capacity(network: str, reserved: frozenset[int] = frozenset()) -> int:
    """Switch addresses `network` holds from .FIRST_HOST up to the last before broadcast, less the reserved ones."""
    net = ipaddress.ip_network(network)
    first, last = int(net.network_address) + FIRST_HOST, int(net.broadcast_address) - 1
    return max(0, last - first + 1 - sum(1 for a in reserved if first <= a <= last))


def assign_management(cluster: Cluster, fabric: DraftFabric) -> None:
    m = cluster.management
    switches = [d for d in fabric.devices.values() if d.role in switch_roles()]
    assign_addresses(m, cluster.ztp, switches, fabric)


def assign_addresses(m: MgmtSpec, ztp: ZtpSpec | None, switches: list[Draft], fabric: DraftFabric) -> None:
    """Each of `switches` its management address in `m.network`, by its plane's slot."""
    if m.network is None:
        return
    net = ipaddress.ip_network(m.network)
    skip = reserved_addresses(m, ztp)
    cls = type(net.network_address)
    if "backend" not in fabric.slot_room:        # an InfiniBand fabric: its switches in design order
        ib = [d for d in switches if d.plane == "backend"]
        for n, d in enumerate(ib):
            d.slot = n
        fabric.slot_room["backend"] = len(ib)
    offset = {"backend": 0, "frontend": fabric.slot_room["backend"]}
    places = {id(d): offset[d.plane] + d.slot for d in switches}
    free = _free_addresses(int(net.network_address) + FIRST_HOST, skip, max(places.values(), default=-1) + 1)
    for d in switches:
        d.mgmt = f"{cls(free[places[id(d)]])}/{net.prefixlen}"


def _free_addresses(first: int, skip: frozenset[int], n: int) -> list[int]:
    """The first `n` addresses from `first` up that are not in `skip`."""
    out: list[int] = []
    address = first
    while len(out) < n:
        if address not in skip:
            out.append(address)
        address += 1
    return out


def management(cluster: Cluster) -> ManagementIntent:
    return management_of(cluster.management, cluster.ztp)


def management_of(m: MgmtSpec, ztp: ZtpSpec | None) -> ManagementIntent:
    """The management intent of a management section (a cluster's, or a site tier's: no day 0 of its own)."""
    return ManagementIntent(
        vrf=m.vrf, gateway=m.gateway, prefixes=tuple(m.prefixes), ntp_servers=tuple(m.ntp_servers),
        syslog_servers=tuple(m.syslog_servers), aaa_protocol=m.aaa_protocol, aaa_servers=tuple(m.aaa_servers),
        aaa_key_secret=m.aaa_key_secret, telemetry=m.telemetry, snmpv3_user=m.snmpv3_user,
        snmpv3_auth_secret=m.snmpv3_auth_secret, snmpv3_priv_secret=m.snmpv3_priv_secret, gnmi_port=GNMI_PORT,
        breakglass_user=m.breakglass_user, breakglass_secret=m.breakglass_secret, ntp_key_secret=m.ntp_key_secret,
        syslog_tls=m.syslog_tls, network=m.network, dns_servers=tuple(m.dns_servers), domain=m.domain,
        ztp=None if ztp is None else ZtpIntent(
            ztp.server, tuple(sorted(ztp.images.items())),
            None if ztp.quarantine is None else (ztp.quarantine.first, ztp.quarantine.last), ztp.interface))
