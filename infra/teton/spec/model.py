"""The cluster spec: what a user writes, as typed Python classes.

YAML specs are loaded into the same classes (see `teton.spec.load`), so the two spellings are one model.  Every class
forbids unknown keys and is strict about types: a string where a number goes is an error, never a silent coercion.
The JSON Schema (2020-12) printed by `teton schema` is generated from these classes.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from teton import limits
from teton.spec.base import SpecModel, limit_text
from teton.spec.floor import Floor, OpticChoice
from teton.spec.grammar import (
    ABSOLUTE_PATH_PATTERN,
    BREAKOUT_PATTERN,
    RELATIVE_PATH_PATTERN,
    TEXT_PATTERN,
    Asn,
    Name,
    Network,
    SecretName,
    Text,
)
from teton.spec.hosts import HostSetup, Scheduler, ServiceHost
from teton.spec.management import Management, Ztp
from teton.spec.monitoring import Monitoring
from teton.spec.storage import StorageRacks

# A network OS by name (sonic, eos, fboss ...).  Any name parses; the spec rule "nos-no-target" fails a NOS that no
# registered target renders (teton.targets), so adding a target package is all a new NOS needs.
Nos = Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$", description="network OS, e.g. sonic, eos, fboss")]
Medium = Literal["auto", "dac", "aec", "aoc", "smf", "mmf"]
BufferClass = Literal["shallow", "deep"]
DEEP_BUFFER_MB = 1024      # a switch model with this much packet buffer or more is deep-buffered unless it says


# --------------------------------------------------------------------------------------------------- catalogue


class PortGroup(SpecModel):
    """A run of identical front-panel ports of a switch model."""

    count: int = Field(ge=1, le=limits.MAX_PORTS_PER_MODEL,
                       description=f"number of ports in this group; a model has {limit_text('MAX_PORTS_PER_MODEL')}")
    speed_gbps: int = Field(ge=1, description="native speed of each port")
    lanes: int = Field(ge=1, le=8, description="SerDes lanes per port")
    form_factor: Name = Field(description="cage, e.g. QSFP-DD, OSFP, QSFP56")
    breakouts: list[Annotated[str, Field(pattern=BREAKOUT_PATTERN)]] = Field(
        default_factory=list, max_length=16, description="supported breakout modes, e.g. '2x200G'")
    ports_per_cage: int = Field(default=1, ge=1, le=8, description="logical ports one cage holds: 2 on a QM9700, "
                                "whose OSFP cage takes one twin-port transceiver feeding two ports")


class HeadroomOverride(SpecModel):
    """A vendor's lossless headroom for one port speed and cable length (e.g. from the SKU's pg_profile_lookup.ini)."""

    speed_gbps: int = Field(ge=1)
    cable_m: int = Field(ge=0, le=10000)
    xoff_bytes: int = Field(ge=0, le=1 << 30)


class SwitchModel(SpecModel):
    """A switch model of the catalogue: ports, ASIC and the NOS choices it supports."""

    name: Name = Field(description="catalogue key, e.g. minipack2")
    vendor: Text
    asic: Text
    asic_tbps: float = Field(gt=0, description="switching capacity; used ports may not exceed it")
    port_groups: list[PortGroup] = Field(min_length=1, max_length=limits.MAX_PORT_GROUPS,
                                         description=f"runs of identical ports, {limit_text('MAX_PORT_GROUPS')}")
    port_naming: str = Field(pattern=r"^[a-z][a-z0-9-]{0,31}$",
                             description="how the NOS names its ports, a naming a NOS package registers: "
                                         "sonic EthernetN by lane, eos-modular EthernetS/P/1, eos-fixed EthernetN/1, "
                                         "ib 1/C/N")
    nos_port_naming: dict[Nos, Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")]] = Field(
        default_factory=dict, max_length=16, description="per NOS, a naming that replaces port_naming on the "
        "switches of this model that run that NOS (FBOSS names Minipack2's ports fboss-fuji: eth<PIM>/<port>/1)")
    box: Name | None = Field(default=None, description="the box's front-panel map from vendor data (teton.catalogue."
                             "boxes: fuji for Minipack2 with 16Q PIMs, wedge400): the ports sit on its cages, with its "
                             "lanes and speeds, for every NOS")
    slots: int = Field(default=1, ge=1, le=limits.MAX_SLOTS,
                       description=f"line-card slots (modular chassis), {limit_text('MAX_SLOTS')}")
    first_slot: int = Field(default=1, ge=1, description="number of the first line-card slot")
    nos: list[Nos] = Field(default_factory=list, description="NOS this model can run")
    platform: dict[Nos, Name] = Field(default_factory=dict, max_length=16, description="per-NOS platform string")
    hwsku: dict[Nos, Name] = Field(default_factory=dict, max_length=16,
                                   description="per-NOS hardware SKU (SONiC: names the build's sku/<hwsku> folder)")
    height_ru: int = Field(default=1, ge=1)
    power_w: int = Field(default=0, ge=0, description="typical power draw")
    mtu_max: int = Field(default=9216, ge=1500)
    buffer_mb: float = Field(default=32, gt=0, description="packet buffer of the ASIC (shared or per-port VoQ/HBM)")
    buffer_class: BufferClass | None = Field(
        default=None, description="shallow (a shared on-chip buffer) or deep (VoQ/HBM); default: deep from 1 GB of "
        "buffer_mb (the ECN thresholds of docs/qos.md depend on it)")
    serdes: int | None = Field(default=None, ge=1, le=16384,
                               description="SerDes lanes of the ASIC(s): the ports' lanes must fit (checked)")
    serdes_gbps: int | None = Field(default=None, ge=1, le=800,
                                    description="speed of one SerDes lane: a port runs at lanes x this (checked)")
    oversubscribed: bool = Field(default=False, description="the front panel may carry more than the ASIC switches")
    cell_bytes: int = Field(default=256, ge=64, le=1024, description="buffer cell size: headroom is counted in cells")
    headroom: list[HeadroomOverride] = Field(default_factory=list, max_length=256,
                                             description="vendor PFC headroom figures that replace teton's formula")

    @property
    def ports(self) -> int:
        return sum(g.count for g in self.port_groups)

    @property
    def buffering(self) -> BufferClass:
        """Its buffer class: the entry's `buffer_class`, else deep from 1 GB of buffer (VoQ/HBM), shallow below."""
        if self.buffer_class is not None:
            return self.buffer_class
        return "deep" if self.buffer_mb >= DEEP_BUFFER_MB else "shallow"

    @model_validator(mode="after")
    def _ports_bounded(self) -> SwitchModel:
        if self.ports > limits.MAX_PORTS_PER_MODEL:
            raise ValueError(f"a switch model has at most MAX_PORTS_PER_MODEL = {limits.MAX_PORTS_PER_MODEL:,} "
                             f"ports; {self.name!r} has {self.ports:,}")
        return self


# --------------------------------------------------------------------------------------------------- compute


class HostPlatform(SpecModel):
    """The GPU server.  Defaults are Grand Teton (docs/sources.md section 4)."""

    platform: Literal["grand-teton"] = "grand-teton"
    gpus: int = Field(default=8, ge=1, le=limits.MAX_PER_HOST,
                      description=f"H100 GPUs per server, {limit_text('MAX_PER_HOST')}")
    gpu_model: Name = Field(default="H100-80GB-HBM3", description="GPU type: the Gres type of slurm.conf/gres.conf")
    backend_nics: int = Field(default=8, ge=1, le=limits.MAX_PER_HOST,
                              description=f"backend RDMA NICs, paired 1:1 with GPUs, {limit_text('MAX_PER_HOST')}")
    backend_nic_gbps: int = Field(default=400, ge=1)
    frontend_nics: int = Field(default=2, ge=0, le=limits.MAX_PER_HOST,
                               description=f"front-end NICs (one per CPU), {limit_text('MAX_PER_HOST')}")
    frontend_nic_gbps: int = Field(default=400, ge=1)
    power_w: int = Field(default=10200, ge=1, description="power per server; not published, overridable")
    height_ru: int = Field(default=4, ge=1, description="rack units per server; not published, overridable")


# --------------------------------------------------------------------------------------------------- backend


MEDIUM_TEXT = ("cabling of this tier's downlinks: dac (passive copper), aec (active copper with a gearbox), aoc, smf "
               "or mmf (optics), or auto: the cheapest that joins both ends at the run's length (a DAC within its "
               "reach, else an AEC, else single-mode optics)")


class Tier(SpecModel):
    model: Name = Field(description="switch model: a catalogue key")
    nos: Nos
    medium_down: Medium = Field(default="smf", description=MEDIUM_TEXT)
    optics_down: OpticChoice | None = Field(default=None, description="the optics of this tier's optical downlinks, "
                                            "where teton should not choose")


class RtswTier(Tier):
    medium_down: Medium = Field(default="auto", description=MEDIUM_TEXT)
    downlink_speed_gbps: int = Field(default=400, ge=1)
    uplinks_per_ctsw: int = Field(default=1, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                  description="parallel links from each RTSW to each CTSW of its zone, "
                                              f"{limit_text('MAX_PARALLEL_LINKS')}")
    uplink_speed_gbps: int = Field(default=400, ge=1)
    oversubscription: float = Field(default=1.0, gt=0, description="target downlink:uplink capacity ratio")


class CtswTier(Tier):
    per_zone: int = Field(ge=1, le=limits.MAX_CTSW_PER_ZONE,
                          description=f"CTSWs (spine planes) per zone, {limit_text('MAX_CTSW_PER_ZONE')}")
    uplinks_per_atsw: int = Field(default=1, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                  description="parallel links from each CTSW to each ATSW, "
                                              f"{limit_text('MAX_PARALLEL_LINKS')}")
    uplink_speed_gbps: int = Field(default=400, ge=1)
    oversubscription: float = Field(default=1.0, gt=0, description="target downlink:uplink capacity ratio")


class AtswTier(Tier):
    count: int = Field(ge=0, le=limits.MAX_ATSW,
                       description="aggregation switches joining the zones; 0 for a single-zone cluster; "
                                   f"{limit_text('MAX_ATSW')}")


class EcnThreshold(SpecModel):
    """WRED/ECN marking of the lossless queue for one port speed and buffer class, replacing the design's default
    (docs/qos.md)."""

    speed_gbps: int = Field(ge=1, le=1600)
    buffer: BufferClass = Field(description="shallow: a rack switch's shared buffer; deep: a VoQ/HBM spine")
    min_bytes: int = Field(ge=1, le=1 << 32, description="marking starts at this queue depth (bytes)")
    max_bytes: int = Field(ge=1, le=1 << 32, description="marking reaches mark_percent at this depth (bytes)")
    mark_percent: int = Field(default=5, ge=1, le=100, description="marking probability at max_bytes")


class RoceQos(SpecModel):
    roce_dscp: int = Field(default=26, ge=0, le=63)
    lossless_priority: int = Field(default=3, ge=0, le=7)
    cnp_dscp: int = Field(default=48, ge=0, le=63)
    cnp_priority: int = Field(default=6, ge=0, le=7)
    control_dscp: int = Field(default=46, ge=0, le=63, description="DSCP of the collective's control messages "
                              "(NCCL's clear-to-send FIFO, NCCL_IB_FIFO_TC): a strict-priority class of its own")
    control_priority: int = Field(default=5, ge=0, le=7, description="traffic class = queue of the control class")
    lossless_weight: int = Field(default=50, ge=1, le=97, description="DWRR share (percent) of the lossless queue; "
                                 "best effort gets the rest but 1 % per idle round-robin queue below it")
    ecn: bool = Field(default=False, description="ECN marking on the lossless queue (Meta ran 400G with PFC only)")
    ecn_thresholds: list[EcnThreshold] = Field(
        default_factory=list, max_length=64, description="per port speed and buffer class, replacing the design's "
        "defaults (docs/qos.md); used only when ecn is true")
    pfc_watchdog: bool = True
    pfc_watchdog_ms: int = Field(default=200, ge=100, le=5000, multiple_of=10,
                                 description="storm detection time: 100-5000 ms (what SONiC accepts), in steps of "
                                 "10 ms (EOS takes hundredths of a second)")


class BgpTimers(SpecModel):
    keepalive: int = Field(default=1, ge=0, le=3600)
    hold: int = Field(default=3, ge=0, le=3600)
    connect_retry: int = Field(default=1, ge=1, le=3600)


class Bgp(SpecModel):
    timers: BgpTimers = BgpTimers()
    bfd: bool = False
    password_secret: SecretName | None = Field(
        default=None, description="name of the secret holding the session password (letters, digits and '_')")
    ttl_security_hops: int | None = Field(
        default=None, ge=1, le=254,
        description="GTSM (RFC 5082, TTL security) on every session: packets sent with TTL 255, a peer's accepted only "
                    "within this many hops (1: the directly connected eBGP of the fabric); none: off")


class AsnPlan(SpecModel):
    """eBGP per RFC 7938 with 4-byte private ASNs (4200000000-4294967294)."""

    atsw: Asn = Field(default=4200000000, description="one ASN shared by all ATSWs")
    ctsw: Asn = Field(default=4200000100, description="CTSW ASN of zone z is ctsw + z (shared inside a zone)")
    rtsw: Asn = Field(default=4201000000, description="RTSW ASN is rtsw + zone*rtsw_zone_stride + rack")
    rtsw_zone_stride: int = Field(default=1000, ge=1)


class AddressPools(SpecModel):
    loopbacks: Network | None = Field(default=None, description="/32 or /128 per switch")
    fabric_links: Network | None = Field(default=None, description="/31 or /127 per switch-to-switch link")
    host_links: Network | None = Field(default=None, description="per-RTSW block of /31 or /127 NIC links")


class Addressing(SpecModel):
    ipv4: AddressPools | None = None
    ipv6: AddressPools | None = None


class RoceBackend(SpecModel):
    kind: Literal["roce"] = "roce"
    rtsw: RtswTier
    ctsw: CtswTier
    atsw: AtswTier
    mtu: int = Field(default=9100, ge=1280, le=9216, description="L3 MTU of every backend link")
    qos: RoceQos = RoceQos()
    bgp: Bgp = Bgp()
    asn: AsnPlan = AsnPlan()
    addressing: Addressing
    qps_per_connection: int = Field(default=16, ge=1, le=128, description="RDMA queue pairs per GPU pair (NCCL_IB_"
                                    "QPS_PER_CONNECTION): ECMP entropy; Meta used 16 for LLM jobs (docs/sources.md "
                                    "section 2)")
    drain: list[Name] = Field(default_factory=list, max_length=1024,
                             description="switches under maintenance: they stay up but prepend their ASN three times "
                             "to every path they send, so traffic moves to their peers")


class IbTier(SpecModel):
    """A tier of the InfiniBand fat tree: a catalogue switch model (Quantum-2 QM9700 unless said otherwise)."""

    model: Name = Field(default="nvidia-qm9700", description="switch model: a catalogue key")
    medium_down: Medium = Field(default="smf", description=MEDIUM_TEXT)
    optics_down: OpticChoice | None = Field(default=None, description="the optics of this tier's optical downlinks, "
                                            "where teton should not choose")


class IbLeafTier(IbTier):
    medium_down: Medium = Field(default="mmf", description="cabling from the hosts' HCAs to the leaves")
    blocking_factor: float = Field(default=1.0, ge=1.0, le=64,
                                   description="a leaf's downlink:uplink ratio; 1 is full bisection (the SU's nodes "
                                               "divided by it must be a whole number of uplinks)")


class IbSpineTier(IbTier):
    blocking_factor: float = Field(default=1.0, ge=1.0, le=64,
                                   description="a spine's downlink:uplink ratio towards the cores (three levels)")
    links_per_leaf: int | None = Field(default=None, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                       description="parallel links between a leaf and each spine it reaches; "
                                                   "default: as few spines as fit (two levels), 1 (three levels)")


class IbQos(SpecModel):
    """Service levels onto virtual lanes, the same on every port of the subnet."""

    enabled: bool = True
    data_vls: Literal[1, 2, 4, 8] = Field(default=2, description="data virtual lanes of every port")
    compute_sl: int = Field(default=0, ge=0, le=14, description="service level of GPU traffic (NCCL_IB_SL)")
    high_priority_sls: list[int] = Field(default_factory=list, max_length=15,
                                         description="service levels scheduled from the high-priority VL "
                                                     "arbitration table (on a VL of their own)")


PKEY_DEFAULT = 0x7FFF
IbRate = Literal[10, 20, 25, 40, 50, 56, 100, 200, 300, 400, 600]   # rates OpenSM has a code for


class IbPartition(SpecModel):
    """A tenant's partition: a P_Key and its full members (every HCA of the hosts it names)."""

    name: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,31}$")
    pkey: int = Field(ge=1, lt=PKEY_DEFAULT, description="15-bit P_Key; 0x7fff is the default partition")
    zones: list[int] = Field(default_factory=list, max_length=99, description="SUs whose hosts are members")
    hosts: list[Name] = Field(default_factory=list, max_length=limits.MAX_PARTITION_HOSTS,
                             description=f"more member hosts, by name, {limit_text('MAX_PARTITION_HOSTS')}")
    ipoib: bool = Field(default=True, description="IPoIB may run on it (OpenSM creates its broadcast group)")
    default_membership: Literal["limited"] = Field(
        default="limited", description="its hosts' ports in the default partition 0x7fff: limited members (they reach "
                                       "the subnet manager and the switches, no other host).  'none' cannot be had: "
                                       "OpenSM 3.3 makes every end port at least a limited member of 0x7fff")
    mtu: Literal[2048, 4096] | None = Field(default=None, description="IB MTU of the partition; default: the "
                                                                      "backend's")
    rate_gbps: IbRate | None = Field(default=None, description="rate of its IPoIB broadcast group (OpenSM's rate=); "
                                                               "default: OpenSM's")
    sl: int | None = Field(default=None, ge=0, le=15, description="service level of the partition (OpenSM's sl=); "
                                                                  "default: OpenSM's (0)")


class IbSubnetManager(SpecModel):
    """The subnet manager (OpenSM) that routes the fabric, in an HA pair by default."""

    routing_engine: str = Field(default="ftree", pattern=r"^[a-z0-9_-]{1,32}$",
                                description="ftree, updn, or ar_ftree (adaptive routing: NVIDIA's OpenSM)")
    lmc: int = Field(default=0, ge=0, le=7, description="LID mask control: 2^lmc LIDs (paths) per HCA port")
    priority: int = Field(default=15, ge=1, le=15, description="sm_priority of the master; each standby one less")
    standby: int = Field(default=1, ge=0, le=3, description="standby subnet managers")
    hosts: list[Name] = Field(default_factory=list, max_length=4,
                             description="hosts whose first HCA runs a subnet manager, master first (never a tenant's "
                                         "host); default: the services of role subnet-manager, else the first host "
                                         "of no tenant of SUs spread across the cluster")
    sm_key_secret: SecretName = Field(default="ib_sm_key",
                                      description="name of the secret holding the SM_Key the subnet managers share")
    m_key_secret: SecretName = Field(default="ib_m_key",
                                     description="name of the secret holding the M_Key the subnet managers set on "
                                                 "every port (a host with root cannot then Set(PortInfo) its own)")
    m_key_protection_level: int = Field(default=2, ge=0, le=3,
                                        description="IBTA M_Key protection: 0 none, 1 Get returns the key, 2 Set and "
                                                    "Get of the key need it, 3 every Get needs it too")
    m_key_lease_period_s: int = Field(default=60, ge=0, le=65535,
                                      description="seconds a port keeps its M_Key protection with no subnet manager "
                                                  "(0: for ever; a lost key then needs the port reset)")
    sweep_interval_s: int = Field(default=10, ge=1, le=3600, description="light sweep interval")
    config_dir: str = Field(default="/etc/opensm", pattern=ABSOLUTE_PATH_PATTERN, max_length=201,
                            description="where the subnet manager hosts keep the files under ib/")
    log_dir: str = Field(default="/var/log/opensm", pattern=ABSOLUTE_PATH_PATTERN, max_length=201,
                         description="OpenSM's log and dump files")


class InfinibandBackend(SpecModel):
    """A rail-optimized Quantum-2 fat tree routed by a subnet manager (docs/sources.md section 3).

    A zone is a scalable unit (SU): racks_per_zone x hosts_per_rack nodes; HCA i of every node goes to leaf i of its
    SU.  Leaves, spines and, when one spine layer cannot join every leaf, cores.
    """

    kind: Literal["infiniband"]
    leaf: IbLeafTier = IbLeafTier()
    spine: IbSpineTier = IbSpineTier()
    core: IbTier = IbTier()
    link_speed_gbps: int = Field(default=400, ge=1, description="NDR: 400")
    mtu: Literal[2048, 4096] = Field(default=4096, description="IB MTU of the partitions")
    hca_names: list[Name] = Field(default_factory=list, max_length=limits.MAX_PER_HOST,
                                 description="verbs names of the backend HCAs in rail order (NCCL_IB_HCA); default "
                                             "mlx5_0 ... mlx5_<n-1>")
    guid_map: str | None = Field(default=None, min_length=1, max_length=4096, pattern=RELATIVE_PATH_PATTERN,
                                 description="file of hardware GUIDs, relative to the spec (inside its folder): "
                                             "one node a line, "
                                             "'0x<node GUID> \"<name>\" [0x<port GUID>]' (an OpenSM node-name-map, "
                                             "names '<switch>' or '<host> <hca>'); default: synthetic GUIDs")
    subnet_manager: IbSubnetManager = IbSubnetManager()
    qos: IbQos = IbQos()
    partitions: list[IbPartition] = Field(default_factory=list, max_length=limits.MAX_PARTITIONS,
                                          description=f"tenant partitions, {limit_text('MAX_PARTITIONS')}")


# ---------------------------------------------------------------------------------------- front end and storage

# An absolute path of letters, digits, '_', '.', '-' (no '..'): mount points and file-system roots on the hosts.


class FrontendAsn(SpecModel):
    ssw: Asn = Field(default=4209000000, description="one ASN shared by every front-end spine (SSW), as the ATSWs "
                                                     "share one on the backend (RFC 7938)")
    fsw: Asn = Field(default=4210000000, description="FSW ASN of zone z is fsw + z; storage racks use zone 0")
    rsw: Asn = Field(default=4211000000, description="RSW ASN is rsw + zone*rsw_zone_stride + rack")
    rsw_zone_stride: int = Field(default=1000, ge=1)


class SswTier(Tier):
    """Front-end spines: plane j (1 .. fsw_per_zone) joins FSW j of every zone and of the storage racks."""

    per_plane: int = Field(default=1, ge=1, le=limits.MAX_SSW_PER_PLANE,
                           description=f"spine switches per plane, {limit_text('MAX_SSW_PER_PLANE')}")
    uplinks_per_ssw: int = Field(default=1, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                 description="parallel links from each FSW to each spine of its plane, "
                                             f"{limit_text('MAX_PARALLEL_LINKS')}")
    uplink_speed_gbps: int = Field(default=400, ge=1, description="speed of an FSW-SSW link")


class Edge(SpecModel):
    """The site's uplinks of the front end: a default route the spines originate (the site's routers are reached
    some other way, or not at all: a closed cluster)."""

    default_route: bool = Field(default=False, description="every spine originates a default route to its FSWs, so "
                                                           "hosts' default routes end at the spines, not at an RSW")


class Frontend(SpecModel):
    """Front-end network: one RSW per compute, storage and service rack, uplinked to the FSWs of its zone; spine
    planes (`ssw`) join the FSWs of all zones."""

    rsw: Tier = Field(description="front-end rack switch, one per compute and storage rack")
    fsw: Tier = Field(description="front-end fabric switches the RSWs uplink to")
    ssw: SswTier | None = Field(default=None, description="front-end spine planes joining the zones' FSWs; without "
                                                          "them every zone's front end is an island")
    edge: Edge | None = Field(default=None, description="the site's uplinks (a default route the spines originate)")
    fsw_per_zone: int = Field(default=4, ge=1, le=limits.MAX_FSW_PER_ZONE,
                              description="FSWs per zone (and for the storage racks), "
                                          f"{limit_text('MAX_FSW_PER_ZONE')}")
    uplinks_per_fsw: int = Field(default=1, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                 description="parallel links from each RSW to each FSW, "
                                             f"{limit_text('MAX_PARALLEL_LINKS')}")
    host_link_speed_gbps: int = Field(default=400, ge=1)
    uplink_speed_gbps: int = Field(default=400, ge=1)
    mtu: int = Field(default=9100, ge=1280, le=9216)
    asn: FrontendAsn = FrontendAsn()
    password_secret: SecretName | None = Field(
        default=None, description="name of the secret holding the front end's BGP session password (as the backend's)")
    ttl_security_hops: int | None = Field(
        default=None, ge=1, le=254,
        description="GTSM (RFC 5082) on every front-end session, hops as the backend's `bgp.ttl_security_hops`")
    addressing: Addressing


# --------------------------------------------------------------------------------------------------- the cluster


class Room(SpecModel):
    """Room to grow in place: the most of each thing the cluster will have.  Every address block, ASN, port, loopback
    and cable id is laid out for this room (never for how many exist now), so adding a zone, racks, storage racks,
    aggregators or spines up to it changes only the new devices and the ports where they attach.  A dimension left
    out: what the chosen models' ports allow (`teton plan` prints the room and how much of each pool it takes)."""

    zones: int | None = Field(default=None, ge=1, le=99, description="most AI zones; default: what the ATSWs' and "
                              "the front-end spines' downlink ports hold")
    racks_per_zone: int | None = Field(default=None, ge=1, le=999, description="most racks in a zone; default: "
                                       "what the CTSWs' and FSWs' downlink ports hold")
    atsw: int | None = Field(default=None, ge=0, le=limits.MAX_ATSW, description="most ATSWs: CTSW uplink "
                             "ports kept for them; default: backend.atsw.count")
    ssw_per_plane: int | None = Field(default=None, ge=1, le=limits.MAX_SSW_PER_PLANE, description="most front-end "
                                      "spines per plane: FSW uplink ports kept for them; default: "
                                      "frontend.ssw.per_plane")
    storage_racks: int | None = Field(default=None, ge=1, le=limits.MAX_STORAGE_RACKS, description="most racks of "
                                      "each storage group; default: what the storage FSWs' ports hold, shared by "
                                      "the groups")


class Rack(SpecModel):
    """A compute rack that differs from the others (`racks:`, by rack name)."""

    hosts: int = Field(ge=0, le=16, description="GPU servers installed in this rack, at most hosts_per_rack (which "
                       "sizes every rack switch's ports and address block): a rack being filled, or one whose servers "
                       "were taken out")


class Cluster(SpecModel):
    """A GPU training cluster: the root of a spec."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,30}$", description="cluster name; names the build folder")
    site: Annotated[str, Field(pattern=TEXT_PATTERN, max_length=64)] = Field(description="building or data hall")
    zones: int = Field(ge=1, le=99, description="AI zones (pods)")
    racks_per_zone: int = Field(ge=1, le=999)
    hosts_per_rack: int = Field(ge=1, le=16)
    racks: dict[Annotated[str, Field(pattern=r"^z[0-9]{2}-r[0-9]{3}$")], Rack] = Field(
        default_factory=dict, max_length=99 * 999,
        description="compute racks that differ from the others, by name (z01-r005): fewer hosts (RoCE backend)")
    host: HostPlatform = HostPlatform()
    backend: RoceBackend | InfinibandBackend = Field(discriminator="kind")
    frontend: Frontend | None = None
    storage: list[StorageRacks] = Field(default_factory=list)
    services: list[ServiceHost] = Field(default_factory=list, max_length=limits.MAX_SERVICE_HOSTS,
                                        description="service hosts, all in one service rack of the front end's zone 0 "
                                                    f"(with the storage racks), {limit_text('MAX_SERVICE_HOSTS')}")
    management: Management = Management()
    ztp: Ztp | None = Field(default=None, description="day 0: the provisioning server and images (`teton ztp`)")
    room: Room | None = Field(default=None, description="room to grow in place (zones, racks, aggregators ...); "
                              "none: laid out for what the spec has now (growing renumbers); `room: {}`: for what "
                              "the models' ports allow")
    switch_models: list[SwitchModel] = Field(default_factory=list, max_length=limits.MAX_SWITCH_MODELS,
                                             description="extra catalogue entries; same name overrides the built-in; "
                                                         f"{limit_text('MAX_SWITCH_MODELS')}")
    hosts: HostSetup = Field(default_factory=HostSetup, description="what the host playbooks configure")
    floor: Floor | None = Field(default=None, description="where the racks stand (cable lengths) and their power "
                                "budget; none: the defaults, no budget")
    scheduler: Scheduler = Field(default_factory=Scheduler, description="the Slurm files of the build")
    monitoring: Monitoring = Field(default_factory=Monitoring, description="the alerts' thresholds and durations and "
                                   "where the exporters listen (`monitoring/` of the build, docs/monitoring.md)")
