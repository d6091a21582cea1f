"""The InfiniBand subnet's intent: what its subnet manager (OpenSM) does, decided once by the design.

GUIDs are facts of the devices, not of the subnet manager: a switch's is `Device.attrs["guid"]`, a host's HCAs' are
`attrs["hca_guids"]` (node GUIDs) and `attrs["port_guids"]` (port 1's), by HCA name.  This intent names devices; the
OpenSM target spells their GUIDs.  `to_json` / `from_json` carry it in fabric.json and read it back identically.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple


class SmInstance(NamedTuple):
    """One subnet manager: the host HCA it runs on and its priority (the highest is master)."""

    host: str
    hca: str
    priority: int


class Partition(NamedTuple):
    """A tenant's partition: every backend HCA of its member hosts is a full member."""

    name: str
    pkey: int
    ipoib: bool
    index0: bool               # its P_Key goes to index 0 of the members' tables (NCCL's default P_Key index)
    members: tuple[str, ...]   # host names, sorted
    mtu: int | None = None     # bytes; None: the subnet's
    rate_gbps: int | None = None          # its IPoIB broadcast group's rate; None: OpenSM's
    sl: int | None = None      # None: OpenSM's


@dataclass(frozen=True, slots=True)
class SubnetQos:
    """Service levels onto virtual lanes and the VL arbitration of every port."""

    max_vls: int
    high_limit: int                            # high-priority packets sent before a low-priority one may go
    vlarb_high: tuple[tuple[int, int], ...]    # (VL, weight)
    vlarb_low: tuple[tuple[int, int], ...]
    sl2vl: tuple[int, ...]                     # the VL of SL 0 ... 15


@dataclass(frozen=True, slots=True)
class SubnetManager:
    routing_engines: tuple[str, ...]    # tried in order; OpenSM routes with minhop when all of them fail
    roots: tuple[str, ...]              # root switches of the fat tree (its top tier), by name
    lmc: int                            # 2^lmc LIDs per HCA port
    mtu: int                            # the partitions' IB MTU, bytes
    sm_key_secret: str                  # name of the secret holding the SM_Key every instance shares
    sweep_interval_s: int
    polling_timeout_ms: int             # a standby polls the master this often ...
    polling_retries: int                # ... and takes over after this many unanswered polls
    instances: tuple[SmInstance, ...]   # master first
    default_limited: tuple[str, ...]    # hosts only limited members of the default partition 0x7fff (the tenants'
                                        # members; OpenSM makes every end port at least a limited member); every
                                        # other host's HCAs are full members
    partitions: tuple[Partition, ...]   # tenants, by P_Key
    qos: SubnetQos | None               # None: OpenSM's defaults (QoS off)
    compute_sl: int                     # the service level GPU traffic uses (NCCL_IB_SL)
    adaptive_routing: bool              # the engine spreads flows by switch adaptive routing (NCCL_IB_ADAPTIVE_ROUTING)
    hcas: tuple[str, ...]               # the hosts' backend HCAs in rail order (NCCL_IB_HCA)
    config_dir: str                     # where the subnet manager hosts keep the files
    log_dir: str
    m_key_secret: str = "ib_m_key"      # name of the secret holding every port's M_Key
    m_key_protection_level: int = 2     # 0-3 (IBTA PortInfo:MKeyProtectBits)
    m_key_lease_period_s: int = 60      # how long a port keeps its protection with no SM setting it (0: for ever)
    synthetic_guids: bool = True        # the GUIDs are made up (no guid_map): a simulation build, never live


def to_json(sm: SubnetManager) -> dict[str, Any]:
    q = sm.qos
    return {"routing_engines": list(sm.routing_engines), "roots": list(sm.roots), "lmc": sm.lmc, "mtu": sm.mtu,
            "sm_key_secret": sm.sm_key_secret, "sweep_interval_s": sm.sweep_interval_s,
            "polling_timeout_ms": sm.polling_timeout_ms, "polling_retries": sm.polling_retries,
            "instances": [list(i) for i in sm.instances], "default_limited": list(sm.default_limited),
            "partitions": [[p.name, p.pkey, p.ipoib, p.index0, list(p.members), p.mtu, p.rate_gbps, p.sl]
                           for p in sm.partitions],
            "qos": None if q is None else {
                "max_vls": q.max_vls, "high_limit": q.high_limit, "vlarb_high": [list(v) for v in q.vlarb_high],
                "vlarb_low": [list(v) for v in q.vlarb_low], "sl2vl": list(q.sl2vl)},
            "compute_sl": sm.compute_sl, "adaptive_routing": sm.adaptive_routing, "hcas": list(sm.hcas),
            "config_dir": sm.config_dir, "log_dir": sm.log_dir, "m_key_secret": sm.m_key_secret,
            "m_key_protection_level": sm.m_key_protection_level, "m_key_lease_period_s": sm.m_key_lease_period_s,
            "synthetic_guids": sm.synthetic_guids}


def from_json(d: dict[str, Any]) -> SubnetManager:
    q = d["qos"]
    return SubnetManager(
        routing_engines=tuple(d["routing_engines"]), roots=tuple(d["roots"]), lmc=d["lmc"], mtu=d["mtu"],
        sm_key_secret=d["sm_key_secret"], sweep_interval_s=d["sweep_interval_s"],
        polling_timeout_ms=d["polling_timeout_ms"], polling_retries=d["polling_retries"],
        instances=tuple(SmInstance(*i) for i in d["instances"]), default_limited=tuple(d["default_limited"]),
        partitions=tuple(Partition(n, k, ip, i0, tuple(m), *rest) for n, k, ip, i0, m, *rest in d["partitions"]),
        qos=None if q is None else SubnetQos(
            q["max_vls"], q["high_limit"], tuple((vl, w) for vl, w in q["vlarb_high"]),
            tuple((vl, w) for vl, w in q["vlarb_low"]), tuple(q["sl2vl"])),
        compute_sl=d["compute_sl"], adaptive_routing=d["adaptive_routing"], hcas=tuple(d["hcas"]),
        config_dir=d["config_dir"], log_dir=d["log_dir"], m_key_secret=d["m_key_secret"],
        m_key_protection_level=d["m_key_protection_level"], m_key_lease_period_s=d["m_key_lease_period_s"],
        synthetic_guids=d["synthetic_guids"])
