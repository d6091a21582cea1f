"""The subnet manager's files, spelled from the Fabric's `SubnetManager` intent and the devices' GUIDs."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from teton.fabric.model import Fabric
from teton.fabric.pkeys import pkey_partitions
from teton.fabric.subnet import SubnetManager
from teton.secrets import secret_ref
from teton.targets.templates import Templates
from teton.targets.tokens import token

TEMPLATES = Templates.beside(__file__)

DEFAULT_PKEY = 0x7FFF
MTU_CODE = {256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}   # IBTA MTU encoding, as partitions.conf takes it
RATE_CODE = {10: 3, 20: 6, 25: 15, 40: 7, 50: 20, 56: 12, 100: 16, 200: 17, 300: 18, 400: 21, 600: 22}   # IBTA rates
GUIDS_PER_LINE = 16        # partition lines stay far below the ~1 KB at which OpenSM drops the whole file


def instance_file(k: int) -> str:
    """The build file of the k-th instance (0: the master)."""
    return "ib/opensm.conf" if k == 0 else f"ib/opensm-standby{k}.conf"


def instance_files(sm: SubnetManager) -> list[str]:
    """The opensm.conf of each instance, master first."""
    return [instance_file(k) for k in range(len(sm.instances))]


def _pairs(items: Sequence[tuple[int, int]]) -> str:
    return ",".join(f"{a}:{b}" for a, b in items)


def opensm_confs(f: Fabric, sm: SubnetManager) -> dict[str, str]:
    q = sm.qos
    qos = None if q is None else {"max_vls": q.max_vls, "high_limit": q.high_limit, "vlarb_high": _pairs(q.vlarb_high),
                                  "vlarb_low": _pairs(q.vlarb_low), "sl2vl": ",".join(map(str, q.sl2vl))}
    out = {}
    for rel, inst in zip(instance_files(sm), sm.instances, strict=True):
        host = f.devices[inst.host]
        out[rel] = TEMPLATES.render(
            "opensm.conf.j2", cluster=f.name, role="master" if inst is sm.instances[0] else "standby",
            host=inst.host, hca=inst.hca, config_dir=sm.config_dir, log_dir=sm.log_dir,
            port_guid=host.attrs["port_guids"][inst.hca], priority=inst.priority, sm_key=secret_ref(sm.sm_key_secret),
            m_key=secret_ref(sm.m_key_secret), m_key_protection_level=sm.m_key_protection_level,
            m_key_lease_period_s=sm.m_key_lease_period_s, synthetic=sm.synthetic_guids,
            polling_timeout_ms=sm.polling_timeout_ms, polling_retries=sm.polling_retries,
            sweep_interval_s=sm.sweep_interval_s, routing_engines=",".join(sm.routing_engines), lmc=sm.lmc, qos=qos)
    return out


def _ports(f: Fabric, hosts: Sequence[str], hcas: Sequence[str]) -> list[str]:
    """Port GUIDs of `hcas` of `hosts` (a subnet manager's service host has only the first)."""
    return [g for h in hosts for a in hcas if (g := f.devices[h].attrs["port_guids"].get(a)) is not None]


def _flags(*, ipoib: bool, mtu: int, index0: bool = False, rate_gbps: int | None = None, sl: int | None = None) -> str:
    return ((", indx0" if index0 else "") + (", ipoib" if ipoib else "") + f", mtu={MTU_CODE[mtu]}"
            + (f", rate={RATE_CODE[rate_gbps]}" if rate_gbps is not None else "")
            + (f", sl={sl}" if sl is not None else ""))


def _statements(head: str, members: list[str]) -> Iterator[str]:
    """`head` (the partition and all its flags) on every statement: OpenSM reads each statement afresh, so a
    continuation without `indx0` would put its ports' P_Key at another index of their tables."""
    for i in range(0, len(members), GUIDS_PER_LINE):
        yield f"{head} : {', '.join(members[i:i + GUIDS_PER_LINE])} ;"


def partitions_conf(f: Fabric, sm: SubnetManager) -> str:
    """The default partition, then the tenants'.  A later statement overrides a port's membership, so the switches
    and the running subnet manager (SELF) are made full members of the default partition last, after every port's
    own statement: an SM on a tenant's host is never demoted by its port's `limited`."""
    default = f"Default=0x{DEFAULT_PKEY:04x}{_flags(ipoib=True, mtu=sm.mtu)}"
    limited = set(sm.default_limited)
    if not limited:
        lines = [f"{default} : ALL=full ;"]
        note = "every HCA is a full member"
    else:
        hosts = sorted(d.name for d in f.devices.values() if "port_guids" in d.attrs)   # GPU and SM hosts
        lines = list(_statements(default, [f"{g}=full" for g in _ports(f, [h for h in hosts if h not in limited],
                                                                         sm.hcas)]))
        lines += _statements(default, [f"{g}=limited" for g in _ports(f, sorted(limited), sm.hcas)])
        lines.append(f"{default} : ALL_SWITCHES=full, SELF=full ;")
        note = (f"the {len(limited)} hosts of tenants are limited members (they reach the subnet manager, the\n"
                "# switches and the hosts of no tenant over it, never each other); every other HCA is a full member.\n"
                "# Every statement carries its partition's flags (OpenSM reads each afresh); the switches and the\n"
                "# running subnet manager (SELF) come last, so no port's own statement demotes them")
    tenants = []
    for p in sm.partitions:
        for member in (p.name, *p.members):
            token(member, f"partition {p.name!r}", "name" if member == p.name else "members", "partitions.conf")
        head = f"{p.name}=0x{p.pkey:04x}" + _flags(index0=p.index0, ipoib=p.ipoib, mtu=p.mtu or sm.mtu,
                                                   rate_gbps=p.rate_gbps, sl=p.sl)
        members = [f"{g}=full" for g in _ports(f, p.members, sm.hcas)]
        tenants.append({"name": p.name, "pkey": f"0x{p.pkey:04x}", "hosts": len(p.members), "ports": len(members),
                        "lines": list(_statements(head, members)) or [f"{head} : ;"]})
    return TEMPLATES.render("partitions.conf.j2", cluster=f.name, config_dir=sm.config_dir,
                           default_note=note, default=lines, partitions=tenants)


def root_guids(f: Fabric, sm: SubnetManager) -> str:
    head = f"# {f.name}: the fat tree's root switches (its top tier), for ftree/updn ranking.  Rendered by teton.\n"
    return head + "".join(f"{f.devices[n].attrs['guid']}\n" for n in sm.roots)


def node_name_map(f: Fabric) -> str:
    """`0x<node GUID> "<name>"` for every switch and HCA, by name (OpenSM and the diagnostics print these names)."""
    rows: list[tuple[str, str]] = []
    for d in f.devices.values():
        if d.nos is None and "hca_guids" in d.attrs:        # GPU hosts and the subnet managers' service hosts
            rows += [(f"{d.name} {hca}", g) for hca, g in d.attrs["hca_guids"].items()]
        elif d.nos is not None and "guid" in d.attrs:
            rows.append((d.name, d.attrs["guid"]))
    head = f"# {f.name}: node GUID -> name, for OpenSM and infiniband-diags (--node-name-map).  Rendered by teton.\n"
    return head + "".join(f'{g} "{name}"\n' for name, g in sorted(rows))


def nccl_env(f: Fabric, sm: SubnetManager) -> str:
    vl = sm.qos.sl2vl[sm.compute_sl] if sm.qos is not None else 0
    ar = ("The routing engine spreads flows by adaptive routing: let NCCL use it." if sm.adaptive_routing
          else "Static routing (no adaptive routing engine).")
    parts = pkey_partitions(f)
    rows = []
    for p in parts:
        hosts = ("every host" if len(parts) == 1 else f"the {len(p.hosts)} hosts of no tenant" if not p.tenant
                 else f"its {len(p.hosts)} hosts" if p.hosts else "no GPU host")
        where = (f", {p.table_value} at index {p.pkey_index}" if p.hosts else "") + (
            " (indx0; limited members of 0x7fff)" if p.tenant and p.hosts else "")
        rows.append(f"{p.name} {p.spelled}: {hosts}{where}")
    indices = sorted({p.pkey_index for p in parts if p.hosts})
    return TEMPLATES.render("nccl.env.j2", cluster=f.name, hca="=" + ",".join(f"{h}:1" for h in sm.hcas),
                           sl=sm.compute_sl, vl=vl, ar=1 if sm.adaptive_routing else 0, ar_note=ar,
                           partitions=rows, index=indices[0] if len(indices) == 1 else None)
