"""Host-side decisions: each GPU host's rails (routing table, rule, RDMA device, GPU pairing) and each storage
server's drive layout, plus the settings every host shares.

- NIC names: every NIC of a host is named by its PCI address from the host platform's catalogue
  (`teton.catalogue.hosts`): the plan's `links`, which the host playbooks write as systemd .link files.
- Rails: NIC n is on rail n and pairs with GPU n (Grand Teton: 8 backend NICs 1:1 with GPUs, four PCIe Gen5 switches
  each holding 2 NICs and 2 GPUs, two switches per CPU; docs/sources.md section 4).  A RoCE rail's RDMA device is
  not numbered here: the front-end NICs are RDMA-capable too and shift mlx5_N, so the host reads it from
  /sys/class/net/<nic>/device/infiniband (`rdma_device` None).  Its source address has its own routing
  table (base + n) and rule (priority base + n), whose routes send the backend's supernets (the host-link pools)
  through that NIC's own RTSW port: a NIC's traffic never leaves on another rail.  The main table also routes the
  supernets through every rail's own NIC (metric base + n: rail 0 first, the others standing by), so a socket with no
  bound source address (rdma_cm tools, ping) reaches the backend over a rail instead of the front end's default.
- RoCE GID: chosen at run time by NCCL (RoCE v2, the rail's address family and the backend's supernet), unless the
  spec fixes `hosts.nccl.gid_index`: the GID table's order depends on the order addresses were added and on DAD.
- The RoCE ToS (NCCL_IB_TC, RDMA-CM's default ToS) is the backend QoS's RoCE DSCP shifted left by two, with ECT(0)
  set when the QoS marks ECN: DSCP 26 is ToS 106 with ECN, 104 without.
- InfiniBand: a rail is an HCA port (the interface is the HCA, e.g. mlx5_3, cabled to leaf 3 of the SU).  It carries
  no address (the subnet manager assigns LIDs), so it has no routing table or rule (0); NCCL's service level and
  adaptive routing are the subnet manager's (`teton.design.subnet`), so hosts and the SM cannot disagree.
- Storage: drive n of a server of role R mounts at <root>/<R>/dNN; Hammerspace servers export exactly their group's
  shares (`storage[].shares`) to the front end's host networks, and the hosts mount exactly the shares that name
  their kind, from the first server of the share's group (rule storage-share refuses a mount nobody exports).
"""

from __future__ import annotations

from dataclasses import replace

from teton.catalogue.hosts import nic_links as catalogue_links
from teton.fabric.hostplan import (
    DriveMount,
    GpuHostPlan,
    HostSettings,
    NcclPlan,
    NfsMountPlan,
    NicLink,
    RailNic,
    SchedulerPlan,
    ServicePlan,
    StoragePlan,
    TectonicMountPlan,
)
from teton.fabric.intent import Qos
from teton.fabric.model import Device
from teton.fabric.roles import rail_kinds, server_link_kinds
from teton.fabric.subnet import SubnetManager
from teton.spec.model import AddressPools, Cluster, RoceBackend

PCIE_SWITCHES = 4      # Grand Teton: four PCIe Gen5 switches, each with 2 GPUs and 2 backend NICs
NFS_ROLES = ("hammerspace",)
SERVICE_PLATFORM = "service-1u"


def nic_links(platform: str, names: list[str]) -> tuple[NicLink, ...]:
    """The NICs `names` of `platform` by their PCI address in the host catalogue."""
    return tuple(NicLink(n.name, n.pci) for n in catalogue_links(platform, names))
MAIN_METRIC_BASE = 100     # metric of rail n's main-table routes to the backend supernets: 100 + n


def roce_tos(q: Qos | None) -> int:
    return 0 if q is None else q.roce_tos


def _pools(pools: AddressPools | None) -> tuple[str, ...]:
    return () if pools is None or pools.host_links is None else (pools.host_links,)


def gpu_host_plan(cluster: Cluster, device: Device) -> GpuHostPlan:
    net = cluster.hosts.network
    gpus = cluster.host.gpus
    sockets = cluster.scheduler.sockets
    rails = [i for i in device.interfaces if i.kind in rail_kinds()]   # to its RoCE RTSW or its InfiniBand leaf
    count = max(1, len(rails))
    nics = []
    for i in rails:
        n = i.ordinal
        switch = n * PCIE_SWITCHES // count
        numa = switch * sockets // PCIE_SWITCHES
        if i.kind == "host-leaf":       # an HCA: no address, so no table or rule of its own
            nics.append(RailNic(i.name, n, n * gpus // count, i.name, switch, numa, 0, 0))
        else:
            nics.append(RailNic(i.name, n, n * gpus // count, None, switch, numa,
                                net.route_table_base + n, net.rule_priority_base + n, MAIN_METRIC_BASE + n))
    be = cluster.backend
    v4: tuple[str, ...] = ()
    v6: tuple[str, ...] = ()
    if isinstance(be, RoceBackend):
        v4, v6 = _pools(be.addressing.ipv4), _pools(be.addressing.ipv6)
    fe = [i.name for i in device.interfaces if i.kind == "host-fersw"]
    names = [i.name for i in rails if i.kind == "host-rtsw"] + fe
    return GpuHostPlan(tuple(nics), v4, v6, tuple(fe), nic_links(cluster.host.platform, names))


def _fe_names(device: Device) -> list[str]:
    return [i.name for i in device.interfaces if i.kind in server_link_kinds("frontend")]


def service_plan(cluster: Cluster, device: Device) -> ServicePlan:
    return ServicePlan(str(device.attrs.get("service_role", "")), nic_links(SERVICE_PLATFORM, _fe_names(device)))


def storage_plan(cluster: Cluster, device: Device) -> StoragePlan:
    s = cluster.hosts.storage_server
    role = str(device.attrs.get("storage_role", ""))
    drives = int(device.attrs.get("drives", 0))
    mounts = tuple(DriveMount(n, f"{s.mount_root.rstrip('/')}/{role}/d{n:02d}") for n in range(drives))
    serves = role in NFS_ROLES
    group = cluster.storage[int(device.attrs.get("group", 1)) - 1] if cluster.storage else None
    exports = tuple(sh.path for sh in group.shares) if serves and group is not None else ()
    clients: tuple[str, ...] = ()
    if exports and cluster.frontend is not None:
        fa = cluster.frontend.addressing
        clients = _pools(fa.ipv4) + _pools(fa.ipv6)
    return StoragePlan(role, s.filesystem, mounts, tuple(s.mount_options), exports, clients,
                       tuple(s.export_options) if exports else (), s.format_drives,
                       nic_links(str(device.model), _fe_names(device)))


def _first_address(d: Device) -> str | None:
    for i in d.interfaces:
        if i.kind in server_link_kinds("frontend"):
            for cidr in (i.ipv4, i.ipv6):
                if cidr:
                    return cidr.split("/", 1)[0]
    return None


def _group_servers(devices: dict[str, Device]) -> dict[int, str | None]:
    """{storage group (1-based): front-end address of its first server}."""
    out: dict[int, str | None] = {}
    for d in devices.values():
        if d.role == "storage":
            out.setdefault(int(d.attrs.get("group", 1)), _first_address(d))
    return out


def _mounts(cluster: Cluster,
            devices: dict[str, Device]) -> tuple[tuple[TectonicMountPlan, ...], tuple[NfsMountPlan, ...]]:
    """Every share of every storage group, as the hosts that name their kind mount it, then the spec's extra mounts
    (hosts.storage_client), which must name a share (rule storage-share)."""
    servers = _group_servers(devices)
    tectonic: list[TectonicMountPlan] = []
    nfs: list[NfsMountPlan] = []
    clients = {sh.name: g.client for g in cluster.storage if g.role == "tectonic" for sh in g.shares}

    def client(namespace: str) -> tuple[str | None, tuple[str, ...]]:
        found = clients.get(namespace)
        return (None, ()) if found is None else (found.package, tuple(found.endpoints))

    for g, group in enumerate(cluster.storage, start=1):
        for sh in group.shares:
            if group.role == "tectonic":
                tectonic.append(TectonicMountPlan(sh.name, sh.mount_point, tuple(sh.options), tuple(sh.mounted_by),
                                                  *client(sh.name)))
            else:
                nfs.append(NfsMountPlan(sh.name, sh.mount_point, sh.path, servers.get(g), tuple(sh.options),
                                    tuple(sh.mounted_by)))
    c = cluster.hosts.storage_client
    if c.tectonic is not None:
        tectonic.append(TectonicMountPlan(c.tectonic.namespace, c.tectonic.mount_point, tuple(c.tectonic.options),
                                          ("gpu",), *client(c.tectonic.namespace)))
    first_hammerspace = next((servers.get(g) for g, grp in enumerate(cluster.storage, start=1)
                              if grp.role in NFS_ROLES), None)
    for m in c.hammerspace:
        nfs.append(NfsMountPlan(m.name, m.mount_point, m.export, c.hammerspace_server or first_hammerspace,
                            ("vers=4.2", f"nconnect={m.nconnect}", *m.options), ("gpu",)))
    return tuple(tectonic), tuple(nfs)


def _controller_address(cluster: Cluster, devices: dict[str, Device]) -> str | None:
    """The scheduler's controller address: the spec's, else its service host's first front-end address."""
    sc = cluster.scheduler
    if sc.controller_address is not None:
        return sc.controller_address
    d = devices.get(sc.controller)
    return _first_address(d) if d is not None and d.role == "service" else None


def host_settings(cluster: Cluster, devices: dict[str, Device], qos: Qos | None,
                  sm: SubnetManager | None = None) -> HostSettings:
    """What every host shares; `qos`: the RoCE backend's, `sm`: the InfiniBand backend's subnet manager."""
    h = cluster.hosts
    n, sc = h.nccl, cluster.scheduler
    nccl = NcclPlan(n.gid_index, n.ib_timeout, roce_tos(qos), n.debug, tuple(n.debug_subsys), n.trace_buffer_size,
                n.dump_on_timeout, n.dump_dir)
    if sm is not None:
        # One QP per peer (NCCL's default): a static fat tree routes every QP between two HCAs on the same path (by
        # destination LID), so more QPs add no path diversity; adaptive routing spreads a QP's packets itself.
        nccl = replace(nccl, transport="infiniband", service_level=sm.compute_sl, adaptive_routing=sm.adaptive_routing,
                       qps_per_connection=1)
    tectonic, nfs = _mounts(cluster, devices)
    return HostSettings(
        renderer=h.network.renderer, lldp=h.network.lldp, nccl=nccl, tectonic=tectonic, nfs=nfs,
        scheduler=SchedulerPlan(sc.kind, cluster.name, sc.controller, _controller_address(cluster, devices),
                                sc.partition, sc.slurmctld_port, sc.slurmd_port, sc.sockets, sc.cores_per_socket,
                                sc.threads_per_core, sc.real_memory_mb, sc.health_check_interval_s))
