"""Rules over an InfiniBand spec: what must hold before its fat tree and its subnet manager's files can be made.

Each rule is a small named function `(Cluster, file)`: models that are no InfiniBand switch, an SU larger than a
leaf's ports (or any count that makes no fat tree), HCAs that do not match the links, a routing engine OpenSM does not
have, a GUID map that is malformed or lacks devices, subnet manager hosts and partitions that name no host, QoS that
cannot be spelled, more LIDs than a subnet has.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from teton.catalogue import catalogue_for
from teton.design.guids import read_guid_map, resolve
from teton.design.infiniband import IbShape, IbShapeError, ib_shape, node_names, radix, sm_leaf
from teton.design.naming import host_name, leaf_name
from teton.design.subnet import sm_hosts, sm_services, su_hosts, tenant_hosts
from teton.fabric.roles import tier_roles
from teton.findings import Finding
from teton.spec.model import Cluster, InfinibandBackend

# Term as in teton.checks.spec_rules: (what, how many, ((spec path, value), ...))
Term = tuple[str, int, tuple[tuple[str, int], ...]]
BE = "backend"
TIERS = tier_roles("infiniband")
FAT_TREE_ENGINES = ("ftree", "updn", "ar_ftree")
# upstream OpenSM 3.3 (opensm(8)), and NVIDIA's OpenSM (MLNX_OFED / UFM) on top of it
OPENSM_ENGINES = ("minhop", "updn", "dnup", "file", "ftree", "lash", "dor", "torus-2qos", "nue", "dfsssp", "sssp")
NVIDIA_ENGINES = ("ar_ftree", "ar_updn", "ar_dor", "ar_torus", "pqft")
UNICAST_LIDS = 0xBFFF       # LIDs 1 ... 0xBFFF are unicast
HCA_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,32}$")


def _ib(c: Cluster) -> InfinibandBackend | None:
    return c.backend if isinstance(c.backend, InfinibandBackend) else None


def _shape(c: Cluster) -> IbShape | None:
    be = _ib(c)
    models = catalogue_for(c)
    if be is None or any(getattr(be, t).model not in models for t in TIERS):
        return None
    try:
        return ib_shape(c, models)
    except IbShapeError:
        return None


def ib_size_terms(c: Cluster) -> tuple[list[Term], list[Term]]:
    """(devices, links) of the fat tree, for the size guard (teton.checks.spec_rules.size_terms).  When the spec makes
    no fat tree, bounds from the counts alone: no more spines than leaves, no more cores than spines."""
    be = _ib(c)
    if be is None:
        return [], []
    z, rails = ("zones", c.zones), ("host.backend_nics", c.host.backend_nics)
    nodes = (z, ("racks_per_zone", c.racks_per_zone), ("hosts_per_rack", c.hosts_per_rack), rails)
    s = _shape(c)
    leaves = c.zones * c.host.backend_nics
    host_links = leaves * c.racks_per_zone * c.hosts_per_rack
    spines, cores = (s.spines, s.cores) if s else (leaves, leaves)
    up_links = (s.leaf_spine_links, s.spine_core_links) if s else (host_links, host_links)
    devices: list[Term] = [("leaf", leaves, (z, rails)), ("spine", spines, (z, rails)), ("core", cores, (z, rails))]
    links: list[Term] = [("host-leaf", host_links, nodes), ("leaf-spine", up_links[0], nodes),
                         ("spine-core", up_links[1], nodes),
                         ("service-leaf", len(sm_services(c)), (("services", len(sm_services(c))),))]
    return devices, links


def ib_switch_count(c: Cluster) -> int:
    """InfiniBand switches that take a management address (0 for other backends or a spec with no fat tree)."""
    s = _shape(c)
    return s.switches if s else 0


def ib_model(c: Cluster, file: str) -> Iterator[Finding]:
    """Every tier names a catalogue model, and an InfiniBand switch."""
    be = _ib(c)
    if be is None:
        return
    models = catalogue_for(c)
    for t in TIERS:
        name = getattr(be, t).model
        m = models.get(name)
        if m is None:
            yield Finding(file, f"{BE}.{t}.model", f"unknown switch model {name!r}; InfiniBand models: "
                          f"{', '.join(sorted(k for k, v in models.items() if v.port_naming == 'ib')) or 'none'}",
                          rule="unknown-model")
        elif m.port_naming != "ib":
            yield Finding(file, f"{BE}.{t}.model", f"{name} is not an InfiniBand switch (its ports are named "
                          f"{m.port_naming!r}, an InfiniBand model's 'ib')", rule="unknown-model")


def ib_fat_tree(c: Cluster, file: str) -> Iterator[Finding]:
    """The counts make a fat tree: an SU fits a leaf, uplinks are whole, three levels are enough."""
    be = _ib(c)
    models = catalogue_for(c)
    if be is None or any(getattr(be, t).model not in models for t in TIERS):
        return
    try:
        ib_shape(c, models)
    except IbShapeError as exc:
        yield Finding(file, exc.path, exc.message, rule="fat-tree")


def ib_hcas(c: Cluster, file: str) -> Iterator[Finding]:
    """HCA names: one per backend NIC, distinct, verbs-device-like; HCAs as fast as the links."""
    be = _ib(c)
    if be is None:
        return
    names = be.hca_names
    if names and len(names) != c.host.backend_nics:
        yield Finding(file, f"{BE}.hca_names", f"{len(names)} HCA names for {c.host.backend_nics} backend NICs "
                      "(host.backend_nics): one per rail", rule="ib-hca")
    for i, name in enumerate(names):
        if not HCA_NAME.match(name):
            yield Finding(file, f"{BE}.hca_names[{i}]", f"{name!r} is not a verbs device name (letters, digits, "
                          "'_', '.', '-')", rule="ib-hca")
        elif name in names[:i]:
            yield Finding(file, f"{BE}.hca_names[{i}]", f"{name!r} is named twice", rule="ib-hca")
    if c.host.backend_nic_gbps != be.link_speed_gbps:
        yield Finding(file, "host.backend_nic_gbps", f"the HCAs run at {c.host.backend_nic_gbps}G but the fabric's "
                      f"links at {be.link_speed_gbps}G (backend.link_speed_gbps)", rule="speed-mismatch")


def ib_routing_engine(c: Cluster, file: str) -> Iterator[Finding]:
    """A fat-tree engine OpenSM has: ftree, updn, or ar_ftree (NVIDIA's OpenSM; a warning says so)."""
    be = _ib(c)
    if be is None:
        return
    engine, path = be.subnet_manager.routing_engine, f"{BE}.subnet_manager.routing_engine"
    known = ", ".join(FAT_TREE_ENGINES)
    if engine not in OPENSM_ENGINES + NVIDIA_ENGINES:
        yield Finding(file, path, f"OpenSM has no routing engine {engine!r}: it would log an error and route with "
                      f"minhop instead; for a fat tree use {known}", rule="routing-engine")
    elif engine not in FAT_TREE_ENGINES:
        yield Finding(file, path, f"{engine!r} is an OpenSM engine, but not one for a fat tree (no credit-loop "
                      f"freedom or balance guaranteed here); use {known}", rule="routing-engine")
    elif engine.startswith("ar_"):
        yield Finding(file, path, f"{engine} is in NVIDIA's OpenSM (MLNX_OFED, UFM) only; upstream OpenSM (Debian's "
                      "opensm) logs an error for it and routes with ftree, which teton lists after it",
                      rule="routing-engine", severity="warning")


def ib_guid_map(c: Cluster, file: str) -> Iterator[Finding]:
    """The GUID map reads cleanly and has a GUID for every node of the fabric (extra nodes: a warning)."""
    be = _ib(c)
    if be is None or be.guid_map is None:
        return
    path = resolve(Path(file).parent, be.guid_map)
    gm = read_guid_map(path, root=Path(file).parent)
    for line, problem in gm.problems:
        yield Finding(str(path), f"{BE}.guid_map", f"the GUID map {problem}", rule="guid-map", line=line)
    if gm.problems and not gm.nodes:
        return
    s = _shape(c)
    if s is None:
        return
    wanted = node_names(c, s)
    missing = [n for n in wanted if n not in gm.nodes]
    if missing:
        more = f" and {len(missing) - 5:,} more" if len(missing) > 5 else ""
        shown = ", ".join(repr(n) for n in missing[:5]) + more
        yield Finding(file, f"{BE}.guid_map", f"{path} has no GUID for {len(missing):,} of the fabric's "
                      f"{len(wanted):,} nodes: {shown} (switches by name, HCAs as '<host> <hca>')", rule="guid-map")
    extra = sorted(set(gm.nodes) - set(wanted))
    if extra:
        yield Finding(str(path), f"{BE}.guid_map", f"{len(extra):,} nodes the fabric does not have, e.g. "
                      f"{extra[0]!r} (line {gm.lines[extra[0]]}): ignored", rule="guid-map",
                      line=gm.lines[extra[0]], severity="warning")


def _hosts(c: Cluster) -> set[str]:
    return {host_name(z, r, h) for z in range(1, c.zones + 1) for r in range(1, c.racks_per_zone + 1)
            for h in range(1, c.hosts_per_rack + 1)}


def ib_subnet_manager(c: Cluster, file: str) -> Iterator[Finding]:
    """One host per subnet manager instance, each a GPU host of no tenant or a service host of role subnet-manager
    (never a tenant's: its root would hold the SM_Key and its own port's P_Keys); a free leaf port for each service
    host's HCA; priorities stay >= 0."""
    for i, svc in enumerate(c.services):
        if svc.role == "subnet-manager" and _ib(c) is None:
            yield Finding(file, f"services[{i}].role", f"{svc.name!r} is a subnet manager, but the backend is "
                          f"{c.backend.kind}: only an InfiniBand fabric has one", rule="subnet-manager")
    be = _ib(c)
    if be is None:
        return
    sm, base = be.subnet_manager, f"{BE}.subnet_manager"
    want = sm.standby + 1
    tenants = tenant_hosts(c)
    services = {s.name: s.role for s in c.services}
    if sm.priority - sm.standby < 0:
        yield Finding(file, f"{base}.standby", f"{sm.standby} standbys below priority {sm.priority} would need "
                      "priorities under 0", rule="subnet-manager")
    if sm.hosts:
        if len(sm.hosts) != want:
            yield Finding(file, f"{base}.hosts", f"{len(sm.hosts)} hosts for {want} subnet managers (the master and "
                          f"{sm.standby} standby)", rule="subnet-manager")
        hosts = _hosts(c)
        for i, h in enumerate(sm.hosts):
            if h in services and services[h] != "subnet-manager":
                yield Finding(file, f"{base}.hosts[{i}]", f"service host {h!r} is a {services[h]}, cabled to the "
                              "front end only: a subnet manager runs on a service of role subnet-manager (it gets "
                              "an HCA on a leaf) or a GPU host", rule="subnet-manager")
            elif h not in hosts and h not in services:
                yield Finding(file, f"{base}.hosts[{i}]", f"no host {h!r} in the cluster (hosts are named like "
                              f"{host_name(1, 1, 1)!r}; or a service of role subnet-manager)", rule="subnet-manager")
            elif h in sm.hosts[:i]:
                yield Finding(file, f"{base}.hosts[{i}]", f"{h!r} is named twice: an HA pair needs two hosts",
                              rule="subnet-manager")
            elif h in tenants:
                yield Finding(file, f"{base}.hosts[{i}]", _tenant_sm(h, tenants[h]), rule="subnet-manager")
    elif sm_services(c):
        n = len(sm_services(c))
        if n != want:
            yield Finding(file, "services", f"{n} services of role subnet-manager for {want} subnet managers (the "
                          f"master and {sm.standby} standby: backend.subnet_manager.standby)", rule="subnet-manager")
    elif len(sm_hosts(c)) < want:
        yield Finding(file, f"{base}.standby", f"{want} subnet managers need {want} hosts of no tenant, and "
                      f"{'there is none' if not sm_hosts(c) else f'only {len(sm_hosts(c))} has none'}: declare "
                      f"{want} services of role subnet-manager (each gets an HCA on a leaf)", rule="subnet-manager")
    yield from _sm_ports(c, file)


def ib_live(c: Cluster, file: str) -> Iterator[Finding]:
    """A build for the live fabric (`teton render --live`) needs the hardware GUIDs: synthetic ones are for a
    simulation only (OpenSM over ibsim), on hardware OpenSM could not bind and every partition would be empty."""
    be = _ib(c)
    if be is not None and be.guid_map is None:
        yield Finding(file, BE, "a live build needs the fabric's hardware GUIDs: set backend.guid_map (an OpenSM "
                      "node-name-map of every switch and HCA, from the vendor's manifest or an ibnetdiscover of the "
                      "installed fabric); without it every GUID is synthetic, for a simulation build only",
                      rule="live-guids")


def _tenant_sm(host: str, tenant: str) -> str:
    return (f"{host!r} is a host of tenant {tenant!r}: whoever has root there holds the SM_Key and can rewrite its "
            "own port's P_Key table, and the port's limited membership demotes the subnet manager; run it on a "
            "service of role subnet-manager or a host of no tenant")


def _sm_ports(c: Cluster, file: str) -> Iterator[Finding]:
    """A free port on the leaf each subnet manager service host is cabled to (after the SU's nodes and uplinks)."""
    s = _shape(c)
    be = _ib(c)
    if s is None or be is None:
        return
    free = radix(catalogue_for(c)[be.leaf.model], be.link_speed_gbps) - s.nodes - s.leaf_up
    taken: dict[tuple[int, int], int] = {}
    index = {svc.name: i for i, svc in enumerate(c.services)}
    for n, svc in enumerate(sm_services(c)):
        zr = sm_leaf(c, n)
        taken[zr] = taken.get(zr, 0) + 1
        if taken[zr] > free:
            yield Finding(file, f"services[{index[svc.name]}]", f"subnet manager {svc.name!r} needs a port on leaf "
                          f"{leaf_name(*zr)}, which has none free: its {s.nodes + s.leaf_up + free} ports are "
                          f"{s.nodes} down to the SU's nodes and {s.leaf_up} up; give it one as NVIDIA's SuperPOD "
                          "gives its UFM one (an SU one node smaller, or a leaf blocking factor above 1), or name "
                          "hosts of no tenant in backend.subnet_manager.hosts", rule="subnet-manager")


def ib_partitions(c: Cluster, file: str) -> Iterator[Finding]:
    """P_Keys and names unique (and none the scheduler's partition: each is a Slurm partition too); members exist; a
    host in one tenant partition at most (its P_Key index 0)."""
    be = _ib(c)
    if be is None or not be.partitions:
        return
    hosts = _hosts(c)
    owner: dict[str, str] = {}
    for i, p in enumerate(be.partitions):
        base = f"{BE}.partitions[{i}]"
        for j, q in enumerate(be.partitions[:i]):
            if q.pkey == p.pkey:
                yield Finding(file, f"{base}.pkey", f"P_Key 0x{p.pkey:04x} is also partition {q.name!r}'s "
                              f"(partitions[{j}])", rule="partition")
            if q.name == p.name:
                yield Finding(file, f"{base}.name", f"partition name {p.name!r} is used twice", rule="partition")
        if p.name == c.scheduler.partition:
            yield Finding(file, f"{base}.name", f"partition name {p.name!r} is the scheduler's partition of the hosts "
                          "of no tenant (scheduler.partition): each P_Key gets a Slurm partition of its own, named "
                          "after its InfiniBand partition", rule="partition")
        members: list[str] = []
        for k, z in enumerate(p.zones):
            if not 1 <= z <= c.zones:
                yield Finding(file, f"{base}.zones[{k}]", f"no SU {z}: the cluster has SUs 1-{c.zones}",
                              rule="partition")
            else:
                members += su_hosts(c, z)
        for k, h in enumerate(p.hosts):
            if h not in hosts:
                yield Finding(file, f"{base}.hosts[{k}]", f"no host {h!r} in the cluster", rule="partition")
            else:
                members.append(h)
        if not members:
            yield Finding(file, base, f"partition {p.name!r} has no members", rule="partition", severity="warning")
        for h in dict.fromkeys(members):
            if h in owner and owner[h] != p.name:
                yield Finding(file, base, f"{h} is also in partition {owner[h]!r}: NCCL uses the P_Key at index 0 of "
                              "each HCA, which only one tenant partition can hold", rule="partition")
                break
            owner[h] = p.name


def ib_qos(c: Cluster, file: str) -> Iterator[Finding]:
    """High-priority service levels need a VL of their own; GPU traffic on one of them starves everything else."""
    be = _ib(c)
    if be is None or not be.qos.enabled:
        return
    q, base = be.qos, f"{BE}.qos"
    if q.high_priority_sls and q.data_vls < 2:
        yield Finding(file, f"{base}.high_priority_sls", "high-priority service levels need a VL of their own: "
                      "data_vls must be 2 or more", rule="ib-qos")
    if q.compute_sl in q.high_priority_sls:
        yield Finding(file, f"{base}.compute_sl", f"GPU traffic on high-priority SL {q.compute_sl} would be scheduled "
                      "before everything else and starve it", rule="ib-qos", severity="warning")


def ib_lid_space(c: Cluster, file: str) -> Iterator[Finding]:
    """Every HCA port takes 2^lmc LIDs and every switch one: together within the 49,151 unicast LIDs."""
    be = _ib(c)
    s = _shape(c)
    if be is None or s is None:
        return
    lmc = be.subnet_manager.lmc
    need = s.host_links * (1 << lmc) + s.switches
    if need > UNICAST_LIDS:
        yield Finding(file, f"{BE}.subnet_manager.lmc", f"{s.host_links:,} HCA ports x {1 << lmc} LIDs (lmc {lmc}) "
                      f"+ {s.switches:,} switches = {need:,} LIDs, more than the {UNICAST_LIDS:,} unicast LIDs of a "
                      "subnet; lower the lmc", rule="lid-space")


IB_RULES = (ib_model, ib_fat_tree, ib_hcas, ib_routing_engine, ib_guid_map, ib_subnet_manager, ib_partitions, ib_qos,
            ib_lid_space)
