"""The subnet manager's decisions for an InfiniBand fabric, made once (the OpenSM target only spells them).

- Routing: the spec's engine; `ar_ftree` (adaptive routing, NVIDIA's OpenSM) is followed by `ftree`, so an OpenSM
  without it routes a fat tree rather than falling back to minhop.  The roots of the ranking are the top tier: the
  cores, or the spines of a two-level tree.
- High availability: standby+1 instances, master first with the spec's priority, each standby one less; OpenSM's own
  polling (a standby takes over after 4 unanswered polls 10 s apart) and a shared SM_Key, by secret name.  Where:
  the hosts the spec names; else its service hosts of role `subnet-manager` (each with one HCA on a leaf, see
  `teton.design.infiniband`), in spec order; else, on a fabric whose ports are all taken, the first HCA of the first
  host of no tenant in SUs spread across the cluster.  Never a tenant's host: a tenant has root there, and with it the
  SM_Key and its own port's P_Key table (the spec rule `subnet-manager` refuses it).
- M_Key: every port's from a secret, with the spec's protection level and lease (a host with root can otherwise
  Set(PortInfo) on its own port and leave its partitions); SM_Key from its secret.  Both are resolved at deploy.
- Partitions: every tenant's P_Key at index 0 of its members' tables (so NCCL's default P_Key index 0 is the tenant's);
  a tenant's hosts are only limited members of the default partition 0x7fff, so they reach the subnet manager and
  the switches over it but no other host (OpenSM 3.3 makes every end port at least a limited member of it, so "not
  a member" cannot be asked for); hosts of no tenant stay full members of it.
- QoS: service levels spread over the data VLs round robin; the high-priority SLs get the last VL, scheduled from the
  high-priority arbitration table; the other VLs share the low table equally.
"""

from __future__ import annotations

from teton.design.naming import host_name
from teton.fabric.subnet import Partition, SmInstance, SubnetManager, SubnetQos
from teton.spec.hosts import ServiceHost
from teton.spec.model import Cluster, IbQos, InfinibandBackend

POLLING_TIMEOUT_MS = 10_000   # OpenSM's defaults: a standby takes over about 40 s after the master goes silent
POLLING_RETRIES = 4
LOW_WEIGHT = 64               # VL arbitration weight, in 64-byte units: one 4 KB packet per turn
HIGH_WEIGHT = 255
HIGH_LIMIT = 4                # 4 KB units of high-priority traffic before a low-priority packet may go
ADAPTIVE_FALLBACK = {"ar_ftree": "ftree", "ar_updn": "updn"}


def su_hosts(c: Cluster, zone: int) -> list[str]:
    """The hosts of SU `zone`, in node order (the leaves' port order)."""
    return [host_name(zone, r, h) for r in range(1, c.racks_per_zone + 1) for h in range(1, c.hosts_per_rack + 1)]


def sm_services(c: Cluster) -> list[ServiceHost]:
    """The service hosts of role `subnet-manager` of an InfiniBand cluster, in spec order (each gets an HCA)."""
    if not isinstance(c.backend, InfinibandBackend):
        return []
    return [s for s in c.services if s.role == "subnet-manager"]


def tenant_hosts(c: Cluster) -> dict[str, str]:
    """{host: the tenant partition it is a member of} (a host is one tenant's at most: a spec rule)."""
    be = c.backend
    if not isinstance(be, InfinibandBackend):
        return {}
    out: dict[str, str] = {}
    for p in be.partitions:
        for h in [h for z in p.zones for h in su_hosts(c, z)] + list(p.hosts):
            out.setdefault(h, p.name)
    return out


def sm_hosts(c: Cluster) -> list[str]:
    """The hosts that run a subnet manager, master first: the spec's; else its subnet manager service hosts; else the
    first hosts of no tenant of SUs spread out (fewer than asked when there are not enough: a spec rule says so)."""
    be = c.backend
    assert isinstance(be, InfinibandBackend)
    sm = be.subnet_manager
    if sm.hosts:
        return list(sm.hosts)
    services = sm_services(c)
    if services:
        return [s.name for s in services]
    n = sm.standby + 1
    tenants = tenant_hosts(c)
    out: list[str] = []
    for i in range(n):
        zone = 1 + (i * (c.zones - 1)) // max(1, n - 1)
        spread = list(range(zone, c.zones + 1)) + list(range(1, zone))     # this SU, or the next with a free host
        free = next((h for z in spread for h in su_hosts(c, z) if h not in tenants and h not in out), None)
        if free is not None:
            out.append(free)
    return out


def subnet_qos(q: IbQos) -> SubnetQos | None:
    if not q.enabled:
        return None
    high = sorted(set(q.high_priority_sls))
    low_vls = list(range(q.data_vls - 1 if high else q.data_vls))
    high_vl = q.data_vls - 1
    sl2vl = tuple(high_vl if sl in high else low_vls[sl % len(low_vls)] for sl in range(16))
    return SubnetQos(max_vls=q.data_vls, high_limit=HIGH_LIMIT if high else 0,
                     vlarb_high=((high_vl, HIGH_WEIGHT),) if high else ((0, 0),),
                     vlarb_low=tuple((vl, LOW_WEIGHT) for vl in low_vls), sl2vl=sl2vl)


def subnet_manager(c: Cluster, roots: list[str], hcas: list[str], *, synthetic_guids: bool) -> SubnetManager:
    """The subnet manager of cluster `c`, whose fat tree has `roots` on top and `hcas` on every host."""
    be = c.backend
    assert isinstance(be, InfinibandBackend)
    sm = be.subnet_manager
    engine = sm.routing_engine
    engines = (engine, ADAPTIVE_FALLBACK[engine]) if engine in ADAPTIVE_FALLBACK else (engine,)
    partitions = []
    for p in be.partitions:
        members = {h for z in p.zones for h in su_hosts(c, z)} | set(p.hosts)
        partitions.append(Partition(p.name, p.pkey, p.ipoib, True, tuple(sorted(members)), p.mtu, p.rate_gbps,
                                    p.sl))
    return SubnetManager(
        routing_engines=engines, roots=tuple(sorted(roots)), lmc=sm.lmc, mtu=be.mtu, sm_key_secret=sm.sm_key_secret,
        sweep_interval_s=sm.sweep_interval_s, polling_timeout_ms=POLLING_TIMEOUT_MS, polling_retries=POLLING_RETRIES,
        instances=tuple(SmInstance(h, hcas[0], sm.priority - i) for i, h in enumerate(sm_hosts(c))),
        default_limited=tuple(sorted({h for p in partitions for h in p.members})), partitions=tuple(partitions),
        qos=subnet_qos(be.qos), compute_sl=be.qos.compute_sl, adaptive_routing=engine.startswith("ar_"),
        hcas=tuple(hcas), config_dir=sm.config_dir, log_dir=sm.log_dir, m_key_secret=sm.m_key_secret,
        m_key_protection_level=sm.m_key_protection_level, m_key_lease_period_s=sm.m_key_lease_period_s,
        synthetic_guids=synthetic_guids)
