"""The host-side intents the design decides: how every GPU host's rails are routed and paired with its GPUs, how every
Sierra Point server lays out its drives, and the cluster-wide settings the host playbooks and the scheduler spell.

Like the switch intents (`teton.fabric.intent`), these are decided once in `teton.design.hostplan` and only spelled by
the targets (the Ansible inventory, the Slurm files), so a routing table number, an RDMA device name or a GPU-NIC pair
cannot differ between two files of one build.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, NamedTuple


class NicLink(NamedTuple):
    """A NIC named by its PCI address: what a systemd .link file matches (Path=pci-<pci>) to give it `name`."""

    name: str                  # e.g. be3, fe0
    pci: str                   # e.g. 0000:3c:00.0 (the host platform's catalogue, teton.catalogue.hosts)


class RailNic(NamedTuple):
    """One backend NIC of a GPU host: its rail, the GPU it serves and how its traffic is kept on its rail."""

    name: str                  # interface name, e.g. be0
    rail: int                  # = the NIC's ordinal: NIC n of every host is on rail n
    gpu: int                   # the GPU it is paired with (same PCIe switch)
    rdma_device: str | None    # InfiniBand: the HCA (e.g. mlx5_3); RoCE: None, the host reads it from
                               # /sys/class/net/<name>/device/infiniband (never a numbering assumption)
    pcie_switch: int           # PCIe switch holding the NIC and its GPU
    numa: int                  # CPU socket the PCIe switch hangs off
    table: int                 # routing table of this NIC's source address (0: an InfiniBand HCA, no address)
    rule_priority: int         # priority of the rule "from <address> lookup <table>" (0: none)
    main_metric: int = 0       # metric of its main-table routes to the backend supernets (0: none), so a socket with no
                               # bound source (rdma_cm tools) reaches the backend over a rail, not the front end


@dataclass(frozen=True, slots=True)
class GpuHostPlan:
    """A GPU host's backend: per-NIC source routing towards the backend supernets, and the GPU-NIC pairing."""

    nics: tuple[RailNic, ...]          # in NIC order
    supernets4: tuple[str, ...]        # backend prefixes each NIC reaches through its own RTSW
    supernets6: tuple[str, ...]
    socket_ifnames: tuple[str, ...]    # front-end NICs (NCCL's bootstrap and socket traffic)
    links: tuple[NicLink, ...] = ()    # every NIC (rails, then front end) by PCI address
    nfs: tuple[NfsAssignment, ...] = ()   # the server each NFS mount of this host is served by


class NfsAssignment(NamedTuple):
    """The server one host mounts one NFS share from, as the design assigns it (`teton.design.hostplan.assign_nfs`):
    every server of the share's group serves some clients, or every client uses the share's failover address."""

    mount_point: str           # the mount (unique per host)
    server: str | None         # the address the host mounts from (None: the group has no server address)
    server_name: str | None    # the storage server it is (None: a failover address, which follows a live server)


class DriveMount(NamedTuple):
    ordinal: int               # drive n of the server, in PCI order
    mount_point: str


class DataVolume(NamedTuple):
    """The one volume an NFS server builds from its drives, and where its file system mounts."""

    layout: str                # raid6, raid10, raid0 (md RAID over every drive) or single (drive 0, no md)
    chunk_kib: int             # md chunk size
    device: str                # /dev/md/<name> (md), or drive 0's device (single: the role takes it as found)
    mount_point: str           # <mount_root>/<role>: every export is a folder here


class NfsExport(NamedTuple):
    """One share as the server exports it: a folder on the data volume, under the share's path in the pseudo file
    system (what the clients mount)."""

    name: str
    path: str                  # on the data volume: <volume mount point>/<share name>
    pseudo: str                # the share's path, as the clients mount it (Ganesha's Pseudo)
    access: Literal["rw", "ro"]
    clients: tuple[str, ...]   # networks allowed to mount it


@dataclass(frozen=True, slots=True)
class StoragePlan:
    """A Sierra Point server.  Tectonic: one file system per E1.S drive (`drives`, its chunk servers' layout).  NFS
    (Hammerspace): one data volume over all drives (`volume`) whose file system holds every export."""

    role: str                          # tectonic or hammerspace
    filesystem: Literal["xfs", "ext4"]
    drives: tuple[DriveMount, ...]     # Tectonic: where each drive mounts; NFS: the drives, mount points unused ('')
    mount_options: tuple[str, ...]
    exports: tuple[NfsExport, ...]     # its group's shares (NFS)
    format_drives: bool
    links: tuple[NicLink, ...] = ()    # its front-end NICs by PCI address
    volume: DataVolume | None = None   # NFS: the data volume


@dataclass(frozen=True, slots=True)
class ServicePlan:
    """A service host (the Slurm controller, a subnet manager): its role and NICs."""

    role: str                          # slurm-controller or subnet-manager
    links: tuple[NicLink, ...] = ()
    nfs: tuple[NfsAssignment, ...] = ()   # the server each NFS mount of this host is served by


HostPlan = GpuHostPlan | StoragePlan | ServicePlan


class NfsMountPlan(NamedTuple):
    """A Hammerspace share (or a spec's extra mount) as the clients mount it."""

    name: str
    mount_point: str
    export: str                        # the path its servers export (the pseudo path clients mount)
    failover: str | None               # the site's failover address for it, else None: each host's plan assigns a
                                       # server of the group (NfsAssignment)
    options: tuple[str, ...]           # as mount(8) takes them (vers=4.2, nconnect=16, hard ...)
    mounted_by: tuple[str, ...]        # kinds of host that mount it: gpu, service


class TectonicMountPlan(NamedTuple):
    """A Tectonic namespace mounted through the FUSE client: its group's client package and endpoints (none: the
    spec names no client, and no mount is rendered: rule tectonic-client)."""

    namespace: str
    mount_point: str
    options: tuple[str, ...]
    mounted_by: tuple[str, ...]
    package: str | None = None
    endpoints: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NcclPlan:
    gid_index: int | None              # NCCL_IB_GID_INDEX, or None: NCCL selects by RoCE version, family and range
    ib_timeout: int
    roce_tos: int                      # NCCL_IB_TC and the RDMA-CM ToS: the RoCE DSCP, shifted, with ECT(0) when ECN
    debug: str
    debug_subsys: tuple[str, ...]
    trace_buffer_size: int
    dump_on_timeout: bool
    dump_dir: str
    transport: Literal["roce", "infiniband"] = "roce"   # the backend NCCL's IB transport runs over
    service_level: int | None = None   # InfiniBand: NCCL_IB_SL, the subnet manager's SL for GPU traffic
    adaptive_routing: bool = False     # InfiniBand: NCCL_IB_ADAPTIVE_ROUTING, as the routing engine spreads flows
    qps_per_connection: int | None = None   # None: the backend's hashing policy says (RoCE ECMP entropy)


@dataclass(frozen=True, slots=True)
class SchedulerPlan:
    kind: Literal["slurm"]
    cluster: str
    controller: str
    controller_address: str | None
    partition: str
    slurmctld_port: int
    slurmd_port: int
    sockets: int
    cores_per_socket: int
    threads_per_core: int
    real_memory_mb: int
    health_check_interval_s: int


@dataclass(frozen=True, slots=True)
class HostSettings:
    """What every host of the cluster shares: how NICs are written, NCCL, storage mounts, the scheduler."""

    renderer: Literal["networkd", "netplan"]
    lldp: bool
    nccl: NcclPlan
    tectonic: tuple[TectonicMountPlan, ...]   # Tectonic shares and who mounts them
    nfs: tuple[NfsMountPlan, ...]             # Hammerspace shares and who mounts them
    scheduler: SchedulerPlan
