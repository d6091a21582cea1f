"""The cluster spec: what a user writes, as typed Python classes.

YAML specs are loaded into the same classes (see `teton.spec.load`), so the two spellings are one model.  Every class
forbids unknown keys and is strict about types: a string where a number goes is an error, never a silent coercion.
The JSON Schema (2020-12) printed by `teton schema` is generated from these classes.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

Nos = Literal["sonic", "eos", "fboss"]
Medium = Literal["dac", "aoc", "smf", "mmf"]


def _network(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"not an IP network: {exc}") from None
    return value


def _address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError as exc:
        raise ValueError(f"not an IP address: {exc}") from None
    return value


Network = Annotated[str, AfterValidator(_network)]
Address = Annotated[str, AfterValidator(_address)]
Asn = Annotated[int, Field(ge=1, le=4294967294)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


# --------------------------------------------------------------------------------------------------- catalogue


class PortGroup(_Model):
    """A run of identical front-panel ports of a switch model."""

    count: int = Field(ge=1, description="number of ports in this group")
    speed_gbps: int = Field(ge=1, description="native speed of each port")
    lanes: int = Field(ge=1, le=8, description="SerDes lanes per port")
    form_factor: str = Field(description="cage, e.g. QSFP-DD, OSFP, QSFP56")
    breakouts: list[str] = Field(default_factory=list, description="supported breakout modes, e.g. '2x200G'")


class SwitchModel(_Model):
    """A switch model of the catalogue: ports, ASIC and the NOS choices it supports."""

    name: str = Field(description="catalogue key, e.g. minipack2")
    vendor: str
    asic: str
    asic_tbps: float = Field(gt=0, description="switching capacity; used ports may not exceed it")
    port_groups: list[PortGroup] = Field(min_length=1)
    port_naming: Literal["sonic", "eos-modular", "eos-fixed", "ib"] = Field(
        description="how ports are named: sonic EthernetN by lane, eos-modular EthernetS/P/1, ib S/P/N")
    slots: int = Field(default=1, ge=1, description="line-card slots (modular chassis)")
    first_slot: int = Field(default=1, ge=1, description="number of the first line-card slot")
    nos: list[Nos] = Field(default_factory=list, description="NOS this model can run")
    platform: dict[str, str] = Field(default_factory=dict, description="per-NOS platform string")
    hwsku: dict[str, str] = Field(default_factory=dict, description="per-NOS hardware SKU")
    height_ru: int = Field(default=1, ge=1)
    power_w: int = Field(default=0, ge=0, description="typical power draw")
    mtu_max: int = Field(default=9216, ge=1500)
    buffer_mb: float = Field(default=32, gt=0, description="packet buffer of the ASIC (shared or per-port VoQ/HBM)")

    @property
    def ports(self) -> int:
        return sum(g.count for g in self.port_groups)


# --------------------------------------------------------------------------------------------------- compute


class HostPlatform(_Model):
    """The GPU server.  Defaults are Grand Teton (domain-facts section 4)."""

    platform: Literal["grand-teton"] = "grand-teton"
    gpus: int = Field(default=8, ge=1, description="H100 GPUs per server")
    gpu_model: str = "H100-80GB-HBM3"
    backend_nics: int = Field(default=8, ge=1, description="backend RDMA NICs, paired 1:1 with GPUs")
    backend_nic_gbps: int = Field(default=400, ge=1)
    frontend_nics: int = Field(default=2, ge=0, description="front-end NICs (one per CPU)")
    frontend_nic_gbps: int = Field(default=400, ge=1)
    power_w: int = Field(default=10200, ge=1, description="power per server; not published, overridable")
    height_ru: int = Field(default=4, ge=1, description="rack units per server; not published, overridable")


# --------------------------------------------------------------------------------------------------- backend


class Tier(_Model):
    model: str = Field(description="switch model: a catalogue key")
    nos: Nos
    medium_down: Medium = Field(default="smf", description="cabling of this tier's downlinks")


class RtswTier(Tier):
    medium_down: Medium = "dac"
    downlink_speed_gbps: int = Field(default=400, ge=1)
    uplinks_per_ctsw: int = Field(default=1, ge=1, description="parallel links from each RTSW to each CTSW of its zone")
    uplink_speed_gbps: int = Field(default=400, ge=1)
    oversubscription: float = Field(default=1.0, gt=0, description="target downlink:uplink capacity ratio")


class CtswTier(Tier):
    per_zone: int = Field(ge=1, description="CTSWs (spine planes) per zone")
    uplinks_per_atsw: int = Field(default=1, ge=1, description="parallel links from each CTSW to each ATSW")
    uplink_speed_gbps: int = Field(default=400, ge=1)
    oversubscription: float = Field(default=1.0, gt=0, description="target downlink:uplink capacity ratio")


class AtswTier(Tier):
    count: int = Field(ge=0, description="aggregation switches joining the zones; 0 for a single-zone cluster")


class RoceQos(_Model):
    roce_dscp: int = Field(default=26, ge=0, le=63)
    lossless_priority: int = Field(default=3, ge=0, le=7)
    cnp_dscp: int = Field(default=48, ge=0, le=63)
    cnp_priority: int = Field(default=6, ge=0, le=7)
    ecn: bool = Field(default=False, description="ECN marking on the lossless queue (Meta ran 400G with PFC only)")
    ecn_min_kbytes: int = Field(default=150, ge=1)
    ecn_max_kbytes: int = Field(default=1500, ge=1)
    pfc_watchdog: bool = True
    pfc_watchdog_ms: int = Field(default=200, ge=10, le=5000)


class BgpTimers(_Model):
    keepalive: int = Field(default=1, ge=0, le=3600)
    hold: int = Field(default=3, ge=0, le=3600)
    connect_retry: int = Field(default=1, ge=1, le=3600)


class Bgp(_Model):
    timers: BgpTimers = BgpTimers()
    bfd: bool = False
    password_secret: str | None = Field(default=None, description="name of the secret holding the session password")


class AsnPlan(_Model):
    """eBGP per RFC 7938 with 4-byte private ASNs (4200000000-4294967294)."""

    atsw: Asn = Field(default=4200000000, description="one ASN shared by all ATSWs")
    ctsw: Asn = Field(default=4200000100, description="CTSW ASN of zone z is ctsw + z (shared inside a zone)")
    rtsw: Asn = Field(default=4201000000, description="RTSW ASN is rtsw + zone*rtsw_zone_stride + rack")
    rtsw_zone_stride: int = Field(default=1000, ge=1)


class AddressPools(_Model):
    loopbacks: Network | None = Field(default=None, description="/32 or /128 per switch")
    fabric_links: Network | None = Field(default=None, description="/31 or /127 per switch-to-switch link")
    host_links: Network | None = Field(default=None, description="per-RTSW block of /31 or /127 NIC links")


class Addressing(_Model):
    ipv4: AddressPools | None = None
    ipv6: AddressPools | None = None


class RoceBackend(_Model):
    kind: Literal["roce"] = "roce"
    rtsw: RtswTier
    ctsw: CtswTier
    atsw: AtswTier
    mtu: int = Field(default=9100, ge=1280, le=9216, description="L3 MTU of every backend link")
    qos: RoceQos = RoceQos()
    bgp: Bgp = Bgp()
    asn: AsnPlan = AsnPlan()
    addressing: Addressing


class InfinibandBackend(_Model):
    """Reserved: the InfiniBand (Quantum-2 fat tree) backend comes with its own issue."""

    kind: Literal["infiniband"]


# ---------------------------------------------------------------------------------------- front end and storage


class FrontendAsn(_Model):
    fsw: Asn = Field(default=4210000000, description="FSW ASN of zone z is fsw + z; storage racks use zone 0")
    rsw: Asn = Field(default=4211000000, description="RSW ASN is rsw + zone*rsw_zone_stride + rack")
    rsw_zone_stride: int = Field(default=1000, ge=1)


class Frontend(_Model):
    """Front-end network: one RSW per compute and storage rack, uplinked to the FSWs of its zone."""

    rsw: Tier = Field(description="front-end rack switch, one per compute and storage rack")
    fsw: Tier = Field(description="front-end fabric switches the RSWs uplink to")
    fsw_per_zone: int = Field(default=4, ge=1, description="FSWs per zone (and for the storage racks)")
    uplinks_per_fsw: int = Field(default=1, ge=1, description="parallel links from each RSW to each FSW")
    host_link_speed_gbps: int = Field(default=400, ge=1)
    uplink_speed_gbps: int = Field(default=400, ge=1)
    mtu: int = Field(default=9100, ge=1280, le=9216)
    asn: FrontendAsn = FrontendAsn()
    addressing: Addressing


class StorageRacks(_Model):
    role: Literal["tectonic", "hammerspace"]
    racks: int = Field(ge=1)
    servers_per_rack: int = Field(ge=1)
    drives_per_server: int = Field(default=16, ge=1, description="E1.S SSDs per Sierra Point server")
    drive_tb: float = Field(default=15.36, gt=0)
    nic_gbps: int = Field(default=200, ge=1, description="front-end NIC speed per server (not published)")
    nics_per_server: int = Field(default=1, ge=1)
    power_w: int = Field(default=600, ge=1, description="power per server (not published)")
    platform: Literal["sierra-point"] = "sierra-point"


# --------------------------------------------------------------------------------------------------- management


class Management(_Model):
    prefixes: list[Network] = Field(default_factory=list, description="prefixes admitted to the management plane")
    network: Network | None = Field(default=None, description="out-of-band network the switches' mgmt ports are in")
    gateway: Address | None = None
    vrf: str = "mgmt"
    ntp_servers: list[Address] = Field(default_factory=list)
    syslog_servers: list[Address] = Field(default_factory=list)
    aaa_protocol: Literal["tacacs+", "radius"] = "tacacs+"
    aaa_servers: list[Address] = Field(default_factory=list)
    aaa_key_secret: str = "aaa_key"
    telemetry: Literal["gnmi", "snmpv3"] = "gnmi"
    snmpv3_user: str = "teton"
    snmpv3_auth_secret: str = "snmpv3_auth"
    snmpv3_priv_secret: str = "snmpv3_priv"


# --------------------------------------------------------------------------------------------------- the cluster


class Cluster(_Model):
    """A GPU training cluster: the root of a spec."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,30}$", description="cluster name; names the build folder")
    site: str = Field(description="building or data hall")
    zones: int = Field(ge=1, le=99, description="AI zones (pods)")
    racks_per_zone: int = Field(ge=1, le=999)
    hosts_per_rack: int = Field(ge=1, le=16)
    host: HostPlatform = HostPlatform()
    backend: RoceBackend | InfinibandBackend = Field(discriminator="kind")
    frontend: Frontend | None = None
    storage: list[StorageRacks] = Field(default_factory=list)
    management: Management = Management()
    switch_models: list[SwitchModel] = Field(default_factory=list,
                                             description="extra catalogue entries; same name overrides the built-in")
