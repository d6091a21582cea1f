"""The cluster spec: what a user writes, as typed Python classes.

YAML specs are loaded into the same classes (see `teton.spec.load`), so the two spellings are one model.  Every class
forbids unknown keys and is strict about types: a string where a number goes is an error, never a silent coercion.
The JSON Schema (2020-12) printed by `teton schema` is generated from these classes.
"""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from teton import limits

# A network OS by name (sonic, eos, fboss ...).  Any name parses; the spec rule "nos-no-target" fails a NOS that no
# registered target renders (teton.targets), so adding a target package is all a new NOS needs.
Nos = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$", description="network OS, e.g. sonic, eos, fboss")]
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


SECRET_NAME_PATTERN = r"^[A-Za-z0-9_]{1,64}$"


def _secret_name(value: str) -> str:
    if not re.fullmatch(SECRET_NAME_PATTERN, value):
        raise ValueError("secret names are letters, digits and '_', 1 to 64 of them")
    return value


def _limit(name: str) -> str:
    """'at most MAX_X = n': the limit a bound comes from, for field descriptions (and so for error messages)."""
    return f"at most {name} = {getattr(limits, name):,}"


Network = Annotated[str, AfterValidator(_network)]
Address = Annotated[str, AfterValidator(_address)]
Asn = Annotated[int, Field(ge=1, le=4294967294)]
SecretName = Annotated[str, AfterValidator(_secret_name), Field(json_schema_extra={"pattern": SECRET_NAME_PATTERN})]


class _Model(BaseModel):
    # allow_inf_nan=False: inf and nan are not numbers a cluster can have, and they break strict JSON output
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


# --------------------------------------------------------------------------------------------------- catalogue


class PortGroup(_Model):
    """A run of identical front-panel ports of a switch model."""

    count: int = Field(ge=1, le=limits.MAX_PORTS_PER_MODEL,
                       description=f"number of ports in this group; a model has {_limit('MAX_PORTS_PER_MODEL')}")
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
    port_groups: list[PortGroup] = Field(min_length=1, max_length=limits.MAX_PORT_GROUPS,
                                         description=f"runs of identical ports, {_limit('MAX_PORT_GROUPS')}")
    port_naming: Literal["sonic", "eos-modular", "eos-fixed", "ib"] = Field(
        description="how ports are named: sonic EthernetN by lane, eos-modular EthernetS/P/1, ib S/P/N")
    slots: int = Field(default=1, ge=1, le=limits.MAX_SLOTS,
                       description=f"line-card slots (modular chassis), {_limit('MAX_SLOTS')}")
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

    @model_validator(mode="after")
    def _ports_bounded(self) -> SwitchModel:
        if self.ports > limits.MAX_PORTS_PER_MODEL:
            raise ValueError(f"a switch model has at most MAX_PORTS_PER_MODEL = {limits.MAX_PORTS_PER_MODEL:,} "
                             f"ports; {self.name!r} has {self.ports:,}")
        return self


# --------------------------------------------------------------------------------------------------- compute


class HostPlatform(_Model):
    """The GPU server.  Defaults are Grand Teton (domain-facts section 4)."""

    platform: Literal["grand-teton"] = "grand-teton"
    gpus: int = Field(default=8, ge=1, le=limits.MAX_PER_HOST,
                      description=f"H100 GPUs per server, {_limit('MAX_PER_HOST')}")
    gpu_model: str = "H100-80GB-HBM3"
    backend_nics: int = Field(default=8, ge=1, le=limits.MAX_PER_HOST,
                              description=f"backend RDMA NICs, paired 1:1 with GPUs, {_limit('MAX_PER_HOST')}")
    backend_nic_gbps: int = Field(default=400, ge=1)
    frontend_nics: int = Field(default=2, ge=0, le=limits.MAX_PER_HOST,
                               description=f"front-end NICs (one per CPU), {_limit('MAX_PER_HOST')}")
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
    uplinks_per_ctsw: int = Field(default=1, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                  description="parallel links from each RTSW to each CTSW of its zone, "
                                              f"{_limit('MAX_PARALLEL_LINKS')}")
    uplink_speed_gbps: int = Field(default=400, ge=1)
    oversubscription: float = Field(default=1.0, gt=0, description="target downlink:uplink capacity ratio")


class CtswTier(Tier):
    per_zone: int = Field(ge=1, le=limits.MAX_CTSW_PER_ZONE,
                          description=f"CTSWs (spine planes) per zone, {_limit('MAX_CTSW_PER_ZONE')}")
    uplinks_per_atsw: int = Field(default=1, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                  description="parallel links from each CTSW to each ATSW, "
                                              f"{_limit('MAX_PARALLEL_LINKS')}")
    uplink_speed_gbps: int = Field(default=400, ge=1)
    oversubscription: float = Field(default=1.0, gt=0, description="target downlink:uplink capacity ratio")


class AtswTier(Tier):
    count: int = Field(ge=0, le=limits.MAX_ATSW,
                       description="aggregation switches joining the zones; 0 for a single-zone cluster; "
                                   f"{_limit('MAX_ATSW')}")


class RoceQos(_Model):
    roce_dscp: int = Field(default=26, ge=0, le=63)
    lossless_priority: int = Field(default=3, ge=0, le=7)
    cnp_dscp: int = Field(default=48, ge=0, le=63)
    cnp_priority: int = Field(default=6, ge=0, le=7)
    ecn: bool = Field(default=False, description="ECN marking on the lossless queue (Meta ran 400G with PFC only)")
    ecn_min_kbytes: int = Field(default=150, ge=1)
    ecn_max_kbytes: int = Field(default=1500, ge=1)
    pfc_watchdog: bool = True
    pfc_watchdog_ms: int = Field(default=200, ge=100, le=5000, multiple_of=10,
                                 description="storm detection time: 100-5000 ms (what SONiC accepts), in steps of "
                                 "10 ms (EOS takes hundredths of a second)")


class BgpTimers(_Model):
    keepalive: int = Field(default=1, ge=0, le=3600)
    hold: int = Field(default=3, ge=0, le=3600)
    connect_retry: int = Field(default=1, ge=1, le=3600)


class Bgp(_Model):
    timers: BgpTimers = BgpTimers()
    bfd: bool = False
    password_secret: SecretName | None = Field(
        default=None, description="name of the secret holding the session password (letters, digits and '_')")


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
    fsw_per_zone: int = Field(default=4, ge=1, le=limits.MAX_FSW_PER_ZONE,
                              description=f"FSWs per zone (and for the storage racks), {_limit('MAX_FSW_PER_ZONE')}")
    uplinks_per_fsw: int = Field(default=1, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                 description="parallel links from each RSW to each FSW, "
                                             f"{_limit('MAX_PARALLEL_LINKS')}")
    host_link_speed_gbps: int = Field(default=400, ge=1)
    uplink_speed_gbps: int = Field(default=400, ge=1)
    mtu: int = Field(default=9100, ge=1280, le=9216)
    asn: FrontendAsn = FrontendAsn()
    addressing: Addressing


class StorageRacks(_Model):
    role: Literal["tectonic", "hammerspace"]
    racks: int = Field(ge=1, le=limits.MAX_STORAGE_RACKS, description=f"storage racks, {_limit('MAX_STORAGE_RACKS')}")
    servers_per_rack: int = Field(ge=1, le=limits.MAX_SERVERS_PER_RACK,
                                  description=f"storage servers per rack, {_limit('MAX_SERVERS_PER_RACK')}")
    drives_per_server: int = Field(default=16, ge=1, description="E1.S SSDs per Sierra Point server")
    drive_tb: float = Field(default=15.36, gt=0)
    nic_gbps: int = Field(default=200, ge=1, description="front-end NIC speed per server (not published)")
    nics_per_server: int = Field(default=1, ge=1, le=limits.MAX_NICS_PER_SERVER,
                                 description=f"front-end NICs per server, {_limit('MAX_NICS_PER_SERVER')}")
    power_w: int = Field(default=600, ge=1, description="power per server (not published)")
    platform: Literal["sierra-point"] = "sierra-point"


# --------------------------------------------------------------------------------------------------- management


_ENTRIES = _limit("MAX_MANAGEMENT_ENTRIES")


class Management(_Model):
    prefixes: list[Network] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                    description=f"prefixes admitted to the management plane, {_ENTRIES}")
    network: Network | None = Field(default=None, description="out-of-band network the switches' mgmt ports are in")
    gateway: Address | None = None
    vrf: str = "mgmt"
    ntp_servers: list[Address] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                       description=f"NTP servers, {_ENTRIES}")
    syslog_servers: list[Address] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                          description=f"syslog servers, {_ENTRIES}")
    aaa_protocol: Literal["tacacs+", "radius"] = "tacacs+"
    aaa_servers: list[Address] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                       description=f"TACACS+/RADIUS servers, {_ENTRIES}")
    aaa_key_secret: SecretName = Field(default="aaa_key", description="name of the secret holding the AAA key")
    telemetry: Literal["gnmi", "snmpv3"] = "gnmi"
    snmpv3_user: str = "teton"
    snmpv3_auth_secret: SecretName = Field(default="snmpv3_auth", description="name of the SNMPv3 auth key's secret")
    snmpv3_priv_secret: SecretName = Field(default="snmpv3_priv", description="name of the SNMPv3 priv key's secret")


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
    switch_models: list[SwitchModel] = Field(default_factory=list, max_length=limits.MAX_SWITCH_MODELS,
                                             description="extra catalogue entries; same name overrides the built-in; "
                                                         f"{_limit('MAX_SWITCH_MODELS')}")
