"""Kea's configuration for day 0 (ISC Kea 2.2, Debian's `kea-dhcp4-server` / `kea-dhcp6-server`): one subnet, the
management network of the design, and a reservation per switch whose MAC address is known, keyed by hardware
address: its designed management address, its hostname, and the options its NOS's provisioning reads (option 67,
`boot-file-name`, with the URL of its entry file; option 114 with the installer ONIE fetches, for a NOS ONIE
installs, where the spec names an image).  Router (option 3), DNS (6, 15) and NTP (42) come from the design.

No dynamic pool unless the spec asks for a quarantine pool (`ztp.quarantine`): a MAC outside the inventory gets no
address, so a switch nobody expected cannot join the management network.  The provisioning options are sent whether
or not the client asks for them (`always-send`): a NOS's DHCP client does not always list them.

DHCPv6 (a management network of IPv6): reservations by hardware address (Kea learns it from the client's DUID or
the relay), option 59 (`bootfile-url`) in place of 67, DNS (23, 24) and SNTP (31); the default route comes from the
routers' advertisements, not DHCPv6.  A client on the server's link is matched to the subnet by `ztp.interface`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from teton.fabric.intent import ManagementIntent, ZtpIntent

LEASE_S = 86400
ONIE_DEFAULT_URL = 114      # ONIE's default-url (RFC 3679's list); Kea names it v4-captive-portal (RFC 8910)


@dataclass(frozen=True, slots=True)
class Reservation:
    hostname: str
    mac: str
    address: str              # no prefix length
    boot_url: str
    onie_installer: str | None


def _v4_options(m: ManagementIntent) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    v4 = [a for a in m.dns_servers if ":" not in a]
    if v4:
        out.append({"name": "domain-name-servers", "data": ", ".join(v4)})
    if m.domain:
        out.append({"name": "domain-name", "data": m.domain})
    ntp = [a for a in m.ntp_servers if ":" not in a]
    if ntp:
        out.append({"name": "ntp-servers", "data": ", ".join(ntp)})
    return out


def kea_dhcp4(m: ManagementIntent, z: ZtpIntent, interface: str, reservations: list[Reservation]) -> dict[str, Any]:
    assert m.network is not None
    subnet: dict[str, Any] = {"id": 1, "subnet": m.network, "pools": [], "reservations": [
        {"hw-address": r.mac, "ip-address": r.address, "hostname": r.hostname,
         "option-data": [{"name": "boot-file-name", "data": r.boot_url, "always-send": True}]
         + ([{"code": ONIE_DEFAULT_URL, "data": r.onie_installer, "always-send": True}] if r.onie_installer else [])}
        for r in reservations]}
    if m.gateway is not None:
        subnet["option-data"] = [{"name": "routers", "data": m.gateway}]
    if z.quarantine is not None:
        subnet["pools"] = [{"pool": f"{z.quarantine[0]} - {z.quarantine[1]}"}]
    if interface != "*":
        subnet["interface"] = interface
    return {"Dhcp4": {
        "interfaces-config": {"interfaces": [interface]},
        "lease-database": {"type": "memfile", "lfc-interval": 3600},
        "host-reservation-identifiers": ["hw-address"],
        "reservations-global": False, "reservations-in-subnet": True, "reservations-out-of-pool": True,
        "valid-lifetime": LEASE_S,
        "option-data": _v4_options(m),
        "subnet4": [subnet],
        "loggers": [{"name": "kea-dhcp4", "severity": "INFO", "output_options": [{"output": "stdout"}]}]}}


def kea_dhcp6(m: ManagementIntent, z: ZtpIntent, interface: str, reservations: list[Reservation]) -> dict[str, Any]:
    assert m.network is not None
    subnet: dict[str, Any] = {"id": 1, "subnet": m.network, "pools": [], "reservations": [
        {"hw-address": r.mac, "ip-addresses": [r.address], "hostname": r.hostname,
         "option-data": [{"name": "bootfile-url", "data": r.boot_url, "always-send": True}]}
        for r in reservations]}
    if z.quarantine is not None:
        subnet["pools"] = [{"pool": f"{z.quarantine[0]} - {z.quarantine[1]}"}]
    if interface != "*":
        subnet["interface"] = interface
    options: list[dict[str, Any]] = []
    v6 = [a for a in m.dns_servers if ":" in a]
    if v6:
        options.append({"name": "dns-servers", "data": ", ".join(v6)})
    if m.domain:
        options.append({"name": "domain-search", "data": m.domain})
    ntp = [a for a in m.ntp_servers if ":" in a]
    if ntp:
        options.append({"name": "sntp-servers", "data": ", ".join(ntp)})
    return {"Dhcp6": {
        "interfaces-config": {"interfaces": [interface]},
        "lease-database": {"type": "memfile", "lfc-interval": 3600},
        "host-reservation-identifiers": ["hw-address"],
        "mac-sources": ["any"],
        "reservations-global": False, "reservations-in-subnet": True, "reservations-out-of-pool": True,
        "valid-lifetime": LEASE_S, "preferred-lifetime": LEASE_S // 2,
        "option-data": options,
        "subnet6": [subnet],
        "loggers": [{"name": "kea-dhcp6", "severity": "INFO", "output_options": [{"output": "stdout"}]}]}}


def dump(config: dict[str, Any]) -> str:
    return json.dumps(config, indent=1, sort_keys=True) + "\n"
