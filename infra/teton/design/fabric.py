"""The Fabric: every device, port, link, address and ASN of a cluster.  The single vocabulary of teton.

Built from a Spec by `teton.design.design`; never edited afterwards.  Links are oriented south -> north: `a` is the
lower tier (a host NIC, an RTSW), `b` the upper (an RTSW, a CTSW).  On a routed link the north end takes the first
address of the /31 (/127) and the south end the second.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class Interface:
    """One used port of a device, as the device sees it."""

    name: str
    index: int                 # position in the model's port list (0-based)
    speed_gbps: int
    mtu: int
    kind: str                  # link kind, e.g. "host-rtsw"
    medium: str
    peer: str                  # peer device name
    peer_port: str
    ipv4: str | None = None    # "10.0.0.0/31"
    ipv6: str | None = None
    peer_ipv4: str | None = None   # peer address without prefix length
    peer_ipv6: str | None = None
    direction: str = "down"    # "down" (towards hosts) or "up"


@dataclass(slots=True)
class Device:
    name: str
    role: str                  # host, rtsw, ctsw, atsw, fe-rsw, fsw, storage
    model: str                 # catalogue key, or host platform
    nos: str | None
    zone: int | None           # 1-based; None for cluster-wide devices
    rack: str                  # rack name for placement
    ru: int                    # lowest rack unit occupied
    height_ru: int
    plane: str = "backend"     # backend or frontend
    asn: int | None = None
    loopback4: str | None = None   # "10.0.0.1/32"
    loopback6: str | None = None
    router_id: str | None = None
    mgmt: str | None = None        # out-of-band management address with prefix length
    prefixes4: list[str] = field(default_factory=list)  # host subnets this device originates
    prefixes6: list[str] = field(default_factory=list)
    power_w: int = 0
    interfaces: list[Interface] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)   # role-specific facts (GPUs, drives, storage role ...)


@dataclass(slots=True)
class End:
    device: str
    port: str
    ipv4: str | None = None
    ipv6: str | None = None


@dataclass(slots=True)
class Link:
    kind: str                  # host-rtsw, rtsw-ctsw, ctsw-atsw, host-fersw, storage-fersw, fersw-fsw
    a: End                     # south end
    b: End                     # north end
    speed_gbps: int
    medium: str                # dac, smf, ...
    mtu: int
    zone: int | None
    rack: str


@dataclass(slots=True)
class Fabric:
    name: str
    site: str
    backend: str               # roce or infiniband
    devices: dict[str, Device] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    qos: dict[str, Any] = field(default_factory=dict)      # backend QoS intent, as the spec says it
    bgp: dict[str, Any] = field(default_factory=dict)
    management: dict[str, Any] = field(default_factory=dict)
    targets: dict[str, float] = field(default_factory=dict)  # oversubscription targets per tier
    models: dict[str, Any] = field(default_factory=dict)    # the catalogue entries used, by name
    duplicate_names: list[str] = field(default_factory=list)

    def add(self, device: Device) -> Device:
        if device.name in self.devices:
            self.duplicate_names.append(device.name)
        else:
            self.devices[device.name] = device
        return device

    def by_role(self, role: str) -> list[Device]:
        return [d for d in self.devices.values() if d.role == role]
