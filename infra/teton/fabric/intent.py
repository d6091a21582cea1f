"""The per-device intents the design decides: routing, QoS and the management plane.

A target only spells these; it never decides.  So the two ends of a session, the switch and the NIC side of the lossless
class, and every NOS of one fabric agree by construction.  Secrets appear here by name only (`*_secret`); a target
spells a reference to the name (`teton.secrets.secret_ref`), never a value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple

Family = Literal["ipv4", "ipv6"]
Direction = Literal["up", "down"]


@dataclass(frozen=True, slots=True)
class BgpTimersIntent:
    keepalive: int             # seconds
    hold: int                  # seconds (0: no keepalives)
    connect_retry: int | None  # seconds between connection attempts (None: the NOS's own default, where a NOS
                               # has no per-peer setting: EOS)


class PeerGroup(NamedTuple):
    """The sessions of one address family towards one tier of neighbours."""

    name: str                  # e.g. RTSW_V4: the neighbours' tier and the family
    family: Family
    direction: Direction       # where the neighbours are: "up" (uplinks) or "down" (downlinks)
    passive: bool              # wait for the neighbour to connect (the upper tier of a link): no connection collisions


class Neighbor(NamedTuple):
    address: str               # the neighbour's address on the link
    family: Family
    remote_as: int
    group: str                 # PeerGroup.name
    interface: str             # the local port of the link
    local_address: str         # this device's address on the link (no prefix length)
    peer: str                  # "device:port" of the other end


class Accept(NamedTuple):
    """A prefix a neighbour may send: `prefix` itself, or with `ge`/`le` the routes inside it of those lengths (a
    prefix-list line's meaning, `teton.fabric.bgpview.PrefixRule`)."""

    prefix: str
    ge: int | None = None
    le: int | None = None


class ImportPolicy(NamedTuple):
    """What some neighbours may send this switch: anything else they send is dropped on arrival (the route-policy
    layout's IMPORT_ prefix list and route map, `teton.frr.policy`)."""

    name: str                    # the prefix list's and route map's name: IMPORT_RTSW_V4, IMPORT_rtsw-z01-r01_V4
    family: Family
    neighbors: tuple[str, ...]   # the neighbours' addresses it applies to, in the intent's neighbour order
    accept: tuple[Accept, ...]


@dataclass(frozen=True, slots=True)
class Routing:
    """eBGP (RFC 7938) of one switch: whom it peers with and what it sends them."""

    asn: int
    router_id: str
    groups: tuple[PeerGroup, ...]            # uplink groups first, then downlinks, by name
    neighbors: tuple[Neighbor, ...]          # in port order, IPv4 then IPv6 per port
    maximum_paths: int                       # ECMP width: the most links towards one neighbour ASN
    timers: BgpTimersIntent
    bfd: bool
    password_secret: str | None              # name of the secret holding the session password
    loopback4: str | None                    # "10.0.0.1/32": announced
    loopback6: str | None
    aggregates4: tuple[str, ...]             # host subnets announced as one summary (summary-only)
    aggregates6: tuple[str, ...]
    transit: bool                            # passes on what it learns (spines); else sends only what it originates
    maximum_prefixes: int                    # per neighbour and family: a session past it is torn down
    maximum_prefix_restart_min: int          # ... and brought up again after this many minutes
    startup_hold_s: int                      # after a (re)start, hold updates until the peers are up (at most this)
    drain_prepend: int                       # maintenance drain: its ASN this many more times on every path it
                                             # sends, so peers route around it (0: in service)
    default_originate: bool = False          # sends a default route to its downlink peers (front-end spines
                                             # with `frontend.edge.default_route`)
    ttl_security_hops: int | None = None     # GTSM (RFC 5082) on every session: TTL 255 sent, a peer's packets
                                             # accepted within this many hops (None: off)
    imports: tuple[ImportPolicy, ...] = ()   # inbound: what each neighbour may send (by name); every neighbour is
                                             # in exactly one (`teton.design.routing.imports`)

    def families(self) -> tuple[Family, ...]:
        """Address families that have at least one neighbour, IPv4 first."""
        present = {n.family for n in self.neighbors}
        order: tuple[Family, ...] = ("ipv4", "ipv6")
        return tuple(f for f in order if f in present)


QueueRole = Literal["lossless", "cnp", "control", "best-effort", "idle"]
BufferClass = Literal["shallow", "deep"]


class Queue(NamedTuple):
    """One egress queue (= traffic class = priority group key) and how it is scheduled."""

    tc: int                    # traffic class = queue = priority
    role: QueueRole            # "idle": no DSCP maps to it
    strict: bool               # strict priority, or deficit weighted round robin
    weight: int                # DWRR weight when not strict: percent of the round-robin share (they sum to 100)


class Ecn(NamedTuple):
    """WRED/ECN marking of the lossless queue on a port of one speed of a switch of one buffer class (bytes)."""

    speed_gbps: int
    buffer: BufferClass
    min_bytes: int
    max_bytes: int
    mark_percent: int          # marking probability at the max threshold


@dataclass(frozen=True, slots=True)
class PfcWatchdog:
    detection_ms: int          # a queue paused this long is declared stormed
    restoration_ms: int
    poll_ms: int
    action: Literal["drop"]


@dataclass(frozen=True, slots=True)
class Qos:
    """RoCE QoS of the backend, the same on every backend switch and NIC (docs/sources.md section 2)."""

    roce_dscp: int
    cnp_dscp: int
    lossless_priority: int
    cnp_priority: int
    dscp_to_tc: tuple[int, ...]       # traffic class of DSCP 0..63
    pfc_priorities: tuple[int, ...]   # priorities that PFC protects (one lossless class)
    queues: tuple[Queue, ...]         # queues 0..7
    ecn: tuple[Ecn, ...] | None       # ECN marking on the lossless queue per (speed, buffer class), or none (PFC only)
    watchdog: PfcWatchdog | None
    roce_tos: int                     # the hosts' RoCE traffic class (NCCL_IB_TC, RDMA-CM ToS): the DSCP shifted, with
                                      # ECT(0) when ECN is on (DSCP 26 is ToS 104, or 106 with ECN)
    control_dscp: int                 # the collective's control messages (NCCL's CTS FIFO): strict, above RoCE
    control_priority: int
    control_tos: int                  # NCCL_IB_FIFO_TC: the control DSCP shifted (no ECT: never marked)

    def ecn_for(self, speed_gbps: int, buffer: BufferClass) -> Ecn | None:
        """The marking thresholds of a port of this speed on a switch of this buffer class (None: PFC only)."""
        if self.ecn is None:
            return None
        return next((e for e in self.ecn if (e.speed_gbps, e.buffer) == (speed_gbps, buffer)), None)


@dataclass(frozen=True, slots=True)
class ZtpIntent:
    """Day 0 (`teton ztp`): the provisioning server's base URL as switches reach it, the NOS images by NOS, and the
    quarantine pool for unknown MACs (first, last), if any."""

    server: str
    images: tuple[tuple[str, str], ...] = ()     # (nos, url), sorted by NOS
    quarantine: tuple[str, str] | None = None
    interface: str = "*"                         # Kea's interface on the management network


@dataclass(frozen=True, slots=True)
class ManagementIntent:
    """The management plane every switch gets (its own address is `Device.mgmt`)."""

    vrf: str
    gateway: str | None
    prefixes: tuple[str, ...]         # sources admitted to the control plane (SSH, gNMI/SNMP)
    ntp_servers: tuple[str, ...]
    syslog_servers: tuple[str, ...]
    aaa_protocol: Literal["tacacs+", "radius"]
    aaa_servers: tuple[str, ...]
    aaa_key_secret: str
    telemetry: Literal["gnmi", "snmpv3"]
    snmpv3_user: str
    snmpv3_auth_secret: str
    snmpv3_priv_secret: str
    gnmi_port: int
    breakglass_user: str               # a local administrator for when every AAA server is down
    breakglass_secret: str             # name of the secret holding its password's SHA-512 crypt hash
    ntp_key_secret: str | None = None  # the NTP servers' symmetric key (key 1, SHA-1); None: no NTP auth
    syslog_tls: bool = False           # syslog over TLS (RFC 5425) where the NOS has it
    network: str | None = None         # the out-of-band network the management ports are in
    dns_servers: tuple[str, ...] = ()  # what DHCP hands out at day 0
    domain: str | None = None
    ztp: ZtpIntent | None = None       # day 0's provisioning server, images and quarantine pool


class PgProfile(NamedTuple):
    """The lossless priority group's buffer for one port speed and cable length (bytes)."""

    speed_gbps: int
    cable_m: int
    xoff: int                  # headroom: what arrives after PFC is sent until the sender stops
    xon: int
    size: int                  # reserved (guaranteed) buffer
    xon_offset: int
    source: str                # "formula" or "vendor" (a catalogue override)


@dataclass(frozen=True, slots=True)
class Buffers:
    """A shared-buffer switch's carve-up: pools (bytes) and the lossless profiles its ports use."""

    ingress_lossless_pool: int
    ingress_xoff_pool: int     # shared headroom for all lossless PGs
    egress_lossless_pool: int
    egress_lossy_pool: int
    cell_bytes: int
    profiles: tuple[PgProfile, ...]   # by (speed, cable): every one a port of this switch uses
    lookup: tuple[PgProfile, ...]     # the model's table for every native speed and standard cable length


@dataclass(frozen=True, slots=True)
class Hashing:
    """How ECMP spreads RDMA traffic (docs/sources.md section 2: E-ECMP, QP scaling)."""

    fields: tuple[str, ...]            # packet fields of the ECMP hash, in SONiC's names
    roce_udp_port: int                 # RoCEv2's UDP destination port
    roce_dqp_bytes: tuple[int, int]    # bytes of the UDP payload (the BTH) holding the destination QP, first-last
    qps_per_connection: int            # NCCL_IB_QPS_PER_CONNECTION: flows per GPU pair
    per_qp_source_port: bool           # the design requires each QP to have its own UDP source port (the entropy a
                                       # switch that cannot read the BTH hashes on: SONiC)
    entropy: str                       # where the per-flow entropy comes from, in words


@dataclass(frozen=True, slots=True)
class LinkDamping:
    """Link-flap dampening (RFC 2439's penalty scheme applied to a port's link state)."""

    half_life_s: int
    penalty_per_flap: int
    suppress_threshold: int
    reuse_threshold: int
    max_suppress_s: int


@dataclass(frozen=True, slots=True)
class Monitoring:
    """The counters and thresholds behind the operators' alerts (docs/sources.md section 2: PFC watchdog at a pause of
    more than 200 ms, RTSW buffer above 80 %)."""

    counter_groups: tuple[str, ...]    # counter groups to poll, in SONiC's FLEX_COUNTER_TABLE names
    buffer_alert_percent: int
    queue_monitor_log_s: int


@dataclass(frozen=True, slots=True)
class SwitchPolicy:
    """What every switch of the backend does the same way: hashing, link dampening, monitoring."""

    hashing: Hashing
    damping: LinkDamping
    monitoring: Monitoring


@dataclass(frozen=True, slots=True)
class MonitoringIntent:
    """The alerts' thresholds and durations (seconds) and where the exporters listen: the spec's `monitoring:` as
    the design carries it (`teton.targets.monitoring` spells it as Prometheus rules, docs/monitoring.md)."""

    scrape_interval_s: int
    evaluation_interval_s: int
    link_down_for_s: int
    bgp_down_for_s: int
    link_flaps: int
    link_flap_window_s: int
    port_errors: int
    port_error_window_s: int
    pfc_storm_window_s: int
    pfc_pause_percent: int
    pfc_pause_window_s: int
    pfc_pause_for_s: int
    buffer_percent: int
    buffer_for_s: int
    ecn_mark_percent: int
    ecn_window_s: int
    ecn_for_s: int
    optics_margin_db: float
    optics_for_s: int
    mount_for_s: int
    row_remap_for_s: int
    exporter_down_for_s: int
    design_missing_for_s: int
    node_exporter_port: int
    frr_exporter_port: int
    dcgm_exporter_port: int
    designed_at: str
    gnmi_collector_at: str
    test_sample: int
