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
- Storage: a Tectonic server mounts drive n at <root>/tectonic/dNN (one file system per drive, its chunk servers'
  layout).  An NFS (Hammerspace) server joins all its drives into one data volume (`storage[].volume`: md RAID, or
  drive 0 alone for `single`) mounted at <root>/<R>, and exports exactly its group's shares (`storage[].shares`) as
  folders on it, to the share's clients (default the front end's host networks).  The hosts mount exactly the shares
  that name their kind (rule storage-share refuses a mount nobody exports), each from the server `assign_nfs` gives
  it: every server of the group serves the share, and the clients are spread over them (below), unless the share
  has a failover address, which every client mounts.
"""

from __future__ import annotations

from dataclasses import replace

from teton.catalogue.hosts import nic_links as catalogue_links
from teton.fabric.hostplan import (
    DataVolume,
    DriveMount,
    GpuHostPlan,
    HostSettings,
    NcclPlan,
    NfsAssignment,
    NfsExport,
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


MD_DEVICE = "/dev/md/teton-data"   # the data volume's md array (mdadm --create names it so; udev links it)


def storage_plan(cluster: Cluster, device: Device) -> StoragePlan:
    s = cluster.hosts.storage_server
    role = str(device.attrs.get("storage_role", ""))
    drives = int(device.attrs.get("drives", 0))
    group = cluster.storage[int(device.attrs.get("group", 1)) - 1] if cluster.storage else None
    root = s.mount_root.rstrip("/")
    links = nic_links(str(device.model), _fe_names(device))
    if role not in NFS_ROLES or group is None:
        mounts = tuple(DriveMount(n, f"{root}/{role}/d{n:02d}") for n in range(drives))
        return StoragePlan(role, s.filesystem, mounts, tuple(s.mount_options), (), s.format_drives, links)
    clients: tuple[str, ...] = ()
    if cluster.frontend is not None:
        fa = cluster.frontend.addressing
        clients = _pools(fa.ipv4) + _pools(fa.ipv6)
    volume = DataVolume(group.volume.layout, group.volume.chunk_kib,
                        "" if group.volume.layout == "single" else MD_DEVICE, f"{root}/{role}")
    exports = tuple(NfsExport(sh.name, f"{volume.mount_point}/{sh.name}", sh.path, sh.access,
                              tuple(sh.clients) or clients) for sh in group.shares)
    return StoragePlan(role, s.filesystem, tuple(DriveMount(n, "") for n in range(drives)), tuple(s.mount_options),
                       exports, s.format_drives, links, volume)


def _first_address(d: Device) -> str | None:
    for i in d.interfaces:
        if i.kind in server_link_kinds("frontend"):
            for cidr in (i.ipv4, i.ipv6):
                if cidr:
                    return cidr.split("/", 1)[0]
    return None


def _group_servers(devices: dict[str, Device]) -> dict[int, list[tuple[str, str | None]]]:
    """{storage group (1-based): [(server, its front-end address)] by name}."""
    out: dict[int, list[tuple[str, str | None]]] = {}
    for name in sorted(devices):
        d = devices[name]
        if d.role == "storage":
            out.setdefault(int(d.attrs.get("group", 1)), []).append((name, _first_address(d)))
    return out


def _mounts(cluster: Cluster) -> tuple[tuple[TectonicMountPlan, ...], tuple[NfsMountPlan, ...]]:
    """Every share of every storage group, as the hosts that name their kind mount it, then the spec's extra mounts
    (hosts.storage_client), which must name a share (rule storage-share)."""
    tectonic: list[TectonicMountPlan] = []
    nfs: list[NfsMountPlan] = []
    clients = {sh.name: g.client for g in cluster.storage if g.role == "tectonic" for sh in g.shares}

    def client(namespace: str) -> tuple[str | None, tuple[str, ...]]:
        found = clients.get(namespace)
        return (None, ()) if found is None else (found.package, tuple(found.endpoints))

    for group in cluster.storage:
        for sh in group.shares:
            if group.role == "tectonic":
                tectonic.append(TectonicMountPlan(sh.name, sh.mount_point, tuple(sh.options), tuple(sh.mounted_by),
                                                  *client(sh.name)))
            else:
                nfs.append(NfsMountPlan(sh.name, sh.mount_point, sh.path, sh.failover_address, tuple(sh.options),
                                        tuple(sh.mounted_by)))
    c = cluster.hosts.storage_client
    if c.tectonic is not None:
        tectonic.append(TectonicMountPlan(c.tectonic.namespace, c.tectonic.mount_point, tuple(c.tectonic.options),
                                          ("gpu",), *client(c.tectonic.namespace)))
    for m in c.hammerspace:
        nfs.append(NfsMountPlan(m.name, m.mount_point, m.export, c.hammerspace_server,
                                ("vers=4.2", f"nconnect={m.nconnect}", *m.options), ("gpu",)))
    return tuple(tectonic), tuple(nfs)


_CLIENT_KINDS = {"host": "gpu", "service": "service"}   # device role -> the `mounted_by` kind


def assign_nfs(cluster: Cluster, devices: dict[str, Device]) -> dict[str, Device]:
    """`devices` with each GPU and service host's plan naming the server of every NFS share it mounts.

    Every server of the share's group serves it, so the clients are spread: host i of a rack (hosts in name order)
    mounts server (k + i) mod n of the group (servers by name), where k is the rack's zone plus its number in the
    zone (a GPU rack), or the rack's place among the other clients' racks (service racks).  A rack's hosts use
    every server (a failed server stalls part of each rack, not a whole rack), consecutive racks start on different
    servers so each zone uses every server, and the counts per server differ by at most one when the racks are
    equal.  k depends on nothing that growth changes: a rack or zone added leaves every existing host's server as it
    was (a server added to the group re-spreads its clients).  A share with a failover address (the site's VIP,
    Hammerspace's metadata address) is mounted there by every client.  Deterministic: names only."""
    _, nfs = _mounts(cluster)
    servers = _group_servers(devices)
    group_of = {sh.path: g for g, grp in enumerate(cluster.storage, start=1) if grp.role in NFS_ROLES
                for sh in grp.shares}
    chosen: dict[str, list[NfsAssignment]] = {}
    for m in nfs:
        pool = servers.get(group_of.get(m.export, 0), [])
        clients = sorted((d.rack, d.name) for d in devices.values()
                         if _CLIENT_KINDS.get(d.role) in m.mounted_by and d.host is not None)
        others = sorted({rack for rack, name in clients if "rack_index" not in devices[name].attrs})
        seen: dict[str, int] = {}
        for rack, name in clients:
            i = seen[rack] = seen.get(rack, -1) + 1
            d = devices[name]
            k = (d.zone or 0) + int(d.attrs["rack_index"]) if "rack_index" in d.attrs else others.index(rack)
            if m.failover is not None:
                pick = NfsAssignment(m.mount_point, m.failover, None)
            elif pool:
                server, address = pool[(k + i) % len(pool)]
                pick = NfsAssignment(m.mount_point, address, server)
            else:
                pick = NfsAssignment(m.mount_point, None, None)
            chosen.setdefault(name, []).append(pick)
    out = dict(devices)
    for name, picks in chosen.items():
        plan = out[name].host
        assert isinstance(plan, (GpuHostPlan, ServicePlan)), name
        out[name] = replace(out[name], host=replace(plan, nfs=tuple(picks)))
    return out


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
    tectonic, nfs = _mounts(cluster)
    return HostSettings(
        renderer=h.network.renderer, lldp=h.network.lldp, nccl=nccl, tectonic=tectonic, nfs=nfs,
        scheduler=SchedulerPlan(sc.kind, cluster.name, sc.controller, _controller_address(cluster, devices),
                                sc.partition, sc.slurmctld_port, sc.slurmd_port, sc.sockets, sc.cores_per_socket,
                                sc.threads_per_core, sc.real_memory_mb, sc.health_check_interval_s))
