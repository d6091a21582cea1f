"""The spec's host side: what the host playbooks configure, the scheduler, and the service hosts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from teton import limits
from teton.spec.base import SpecModel, limit_text
from teton.spec.grammar import Address, HostPath, MountOption

# ------------------------------------------------------------------------------------ hosts (Ansible) and scheduler

NcclSubsys = Literal["INIT", "COLL", "P2P", "SHM", "NET", "GRAPH", "TUNING", "ENV", "ALLOC", "CALL", "PROXY", "NVLS",
                     "BOOTSTRAP", "REG", "ALL"]


class HostNetwork(SpecModel):
    """How the GPU hosts' backend NICs are configured (Ansible role backend_nics)."""

    renderer: Literal["networkd", "netplan"] = Field(
        default="networkd", description="systemd-networkd .network files, or one netplan YAML per host")
    route_table_base: int = Field(default=100, ge=1, le=250 - limits.MAX_PER_HOST,
                                  description="routing table of the NIC on rail n is base + n (one table per NIC)")
    rule_priority_base: int = Field(default=1000, ge=1, le=32000,
                                    description="priority of the rule sending NIC n's source address to its table "
                                                "is base + n (below the main table's 32766)")
    lldp: bool = Field(default=True, description="lldpd on the backend NICs, so each NIC's switch port can be checked")


class Nccl(SpecModel):
    """NCCL and PyTorch settings written to every GPU host (/etc/nccl.conf, the flight recorder's environment)."""

    gid_index: int | None = Field(default=None, ge=0, le=255, description="NCCL_IB_GID_INDEX, fixed; default none: "
                                  "NCCL picks the RoCE v2 GID of the rail's address at run time (the GID table's "
                                  "order depends on address order and DAD, so index 3 is not always IPv4 RoCE v2)")
    ib_timeout: int = Field(default=22, ge=1, le=31, description="NCCL_IB_TIMEOUT: 4.096 us x 2^n per retry; Meta's "
                                                                 "idle RTT is ~22 us, far above NCCL's assumption")
    debug: Literal["VERSION", "WARN", "INFO", "TRACE"] = Field(default="WARN", description="NCCL_DEBUG")
    debug_subsys: list[NcclSubsys] = Field(default_factory=list, max_length=16, description="NCCL_DEBUG_SUBSYS")
    trace_buffer_size: int = Field(default=2000, ge=0, le=1_000_000,
                                   description="TORCH_NCCL_TRACE_BUFFER_SIZE: entries the PyTorch flight recorder "
                                               "keeps per rank (0 turns it off)")
    dump_on_timeout: bool = Field(default=True, description="TORCH_NCCL_DUMP_ON_TIMEOUT: dump the flight recorder "
                                                            "when a collective times out")
    dump_dir: HostPath = Field(default="/var/tmp/nccl-trace", description="where the flight recorder's dumps go")


class TectonicMount(SpecModel):
    """The Tectonic FUSE client: a systemd unit mounting the cluster's Tectonic namespace."""

    mount_point: HostPath = "/mnt/tectonic"
    namespace: str = Field(default="checkpoints", pattern=r"^[a-z][a-z0-9_-]{0,63}$")
    options: list[MountOption] = Field(default_factory=lambda: ["allow_other", "default_permissions"],
                                       max_length=32)


class NfsMount(SpecModel):
    """One Hammerspace NFS export mounted on the GPU hosts."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$")
    mount_point: HostPath
    export: HostPath
    nconnect: int = Field(default=16, ge=1, le=16, description="TCP connections per mount (Linux allows 16)")
    options: list[MountOption] = Field(default_factory=lambda: ["hard", "noatime", "rsize=1048576",
                                                                "wsize=1048576"], max_length=32)


class StorageClient(SpecModel):
    """Mounts beyond the storage groups' `shares` (which the GPU and service hosts mount as they say): each must
    name a share some storage group serves (rule storage-share)."""

    tectonic: TectonicMount | None = Field(default=None, description="a Tectonic FUSE mount; its namespace must be "
                                                                     "a share of a tectonic group")
    hammerspace: list[NfsMount] = Field(default_factory=list, max_length=16,
                                        description="NFSv4.2 mounts; each export must be the path of a share of a "
                                                    "hammerspace group")
    hammerspace_server: Address | None = Field(
        default=None, description="NFS server every GPU host mounts these from (the Hammerspace metadata service, "
                                  "a failover address); default: the server of the export's group the design "
                                  "assigns each host")


class StorageServer(SpecModel):
    """Sierra Point storage servers: one file system per E1.S drive on Tectonic servers; one data volume over the
    drives on Hammerspace (NFS) servers, holding the exports (storage[].volume)."""

    filesystem: Literal["xfs", "ext4"] = "xfs"
    mount_root: HostPath = Field(default="/srv", description="drive n of a server of role R mounts at "
                                                             "<mount_root>/<R>/dNN")
    mount_options: list[MountOption] = Field(default_factory=lambda: ["noatime", "nofail"], max_length=32)
    export_options: list[MountOption] = Field(default_factory=lambda: ["rw", "sync", "no_subtree_check"],
                                              max_length=32, description="kernel NFS server exports(5) options; "
                                              "unused since the servers run NFS-Ganesha (a share's access says rw "
                                              "or ro), kept so older specs load")
    format_drives: bool = Field(default=False, description="create file systems on empty drives (destructive: off "
                                                           "unless asked)")


class HostSetup(SpecModel):
    """What the host playbooks configure (playbooks/, from build/<cluster>/ansible/)."""

    network: HostNetwork = HostNetwork()
    nccl: Nccl = Nccl()
    storage_client: StorageClient = StorageClient()
    storage_server: StorageServer = StorageServer()


class Scheduler(SpecModel):
    """Slurm: node definitions, gres.conf and topology.conf from the Fabric (rack switch -> zone -> cluster)."""

    kind: Literal["slurm"] = "slurm"
    controller: str = Field(default="slurmctl", pattern=r"^[a-z][a-z0-9-]{0,62}$", description="controller host name")
    controller_address: Address | None = None
    partition: str = Field(default="gpu", pattern=r"^[a-z][a-z0-9_-]{0,31}$")
    slurmctld_port: int = Field(default=6817, ge=1, le=65535)
    slurmd_port: int = Field(default=6818, ge=1, le=65535)
    sockets: int = Field(default=2, ge=1, le=16, description="CPU sockets per GPU host (Grand Teton: 2)")
    cores_per_socket: int = Field(default=48, ge=1, le=1024, description="not published: set it to what "
                                                                         "`slurmd -C` prints on a host")
    threads_per_core: int = Field(default=2, ge=1, le=8)
    real_memory_mb: int = Field(default=1_900_000, ge=1, description="not published: set it to what `slurmd -C` "
                                                                     "prints")
    health_check_interval_s: int = Field(default=300, ge=0, le=86400,
                                         description="how often slurmd runs the node health check (0: never)")


# --------------------------------------------------------------------------------------------------- service hosts


class ServiceHost(SpecModel):
    """A host the cluster needs besides GPU and storage servers (the Slurm controller; InfiniBand subnet managers):
    placed in a service rack with a port on its RSW, addresses, cabling and an inventory entry."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,62}$", description="host name")
    role: Literal["slurm-controller", "subnet-manager"]
    nics: int = Field(default=2, ge=1, le=limits.MAX_NICS_PER_SERVER,
                      description=f"front-end NICs (fe0 ...), {limit_text('MAX_NICS_PER_SERVER')}")
    nic_gbps: int = Field(default=100, ge=1, description="front-end NIC speed (not published: ours)")
    height_ru: int = Field(default=1, ge=1, le=8)
    power_w: int = Field(default=500, ge=1, description="power per server (not published)")
