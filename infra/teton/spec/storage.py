"""The spec's storage racks: what each group of Sierra Point servers serves (shares), how it joins its drives into
one volume, and Tectonic's client; part of the cluster spec (`teton.spec.model`)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from teton import limits
from teton.spec.base import SpecModel, limit_text
from teton.spec.grammar import Address, Endpoint, HostPath, MountOption, Network, Package

MountedBy = Literal["gpu", "service"]


class Share(SpecModel):
    """What a storage group serves and who mounts it: an NFS export (Hammerspace) or a Tectonic namespace (FUSE).
    Servers export exactly the shares; clients mount exactly them."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_-]{0,31}$", description="share name (a Tectonic namespace)")
    path: HostPath = Field(description="exported path on the servers (Hammerspace); the namespace root (Tectonic)")
    mount_point: HostPath = Field(description="where the clients mount it")
    mounted_by: list[MountedBy] = Field(default_factory=lambda: list[MountedBy](["gpu"]), max_length=2,
                                        description="kinds of host that mount it: gpu, service")
    options: list[MountOption] = Field(
        default_factory=lambda: ["vers=4.2", "nconnect=16", "hard", "noatime"], max_length=32,
        description="mount options as mount(8) takes them (NFS: vers=4.2, nconnect=N, hard ...)")
    access: Literal["rw", "ro"] = Field(default="rw", description="NFS: what the servers let the clients do "
                                                                 "(Ganesha's Access_Type)")
    clients: list[Network] = Field(default_factory=list, max_length=32,
                                   description="NFS: the networks the servers let mount it; default the front-end "
                                               "host networks (the hosts that mount it are there)")
    failover_address: Address | None = Field(
        default=None, description="NFS: an address that follows a live server of the group (a site's VIP or "
                                  "Hammerspace's metadata address): every client mounts it instead of its assigned "
                                  "server")


VolumeLayout = Literal["raid6", "raid10", "raid0", "single"]


class DataVolume(SpecModel):
    """The one data volume a storage server builds from its drives (md RAID, mdadm(8)), with one file system on it
    mounted at <hosts.storage_server.mount_root>/<role>; every export lives on it."""

    layout: VolumeLayout = Field(default="raid6", description="md RAID level over the server's drives: raid6 "
                                                             "(two drives may fail; needs 4), raid10 (needs 2, an "
                                                             "even count), raid0 (no redundancy), single (drive 0 "
                                                             "alone, no md)")
    chunk_kib: int = Field(default=512, ge=4, le=65536, description="md chunk size in KiB (mdadm --chunk)")


class TectonicClient(SpecModel):
    """Tectonic's FUSE client, which Meta has not published: a site that has one names its package and the
    endpoints it connects to; without it teton renders no Tectonic mount (rule tectonic-client)."""

    package: Package = Field(description="the client's package as the hosts' package manager installs it")
    endpoints: list[Endpoint] = Field(min_length=1, max_length=16,
                                      description="the metadata endpoints the client connects to, host:port each")


class StorageRacks(SpecModel):
    role: Literal["tectonic", "hammerspace"]
    racks: int = Field(ge=1, le=limits.MAX_STORAGE_RACKS,
                       description=f"storage racks, {limit_text('MAX_STORAGE_RACKS')}")
    servers_per_rack: int = Field(ge=1, le=limits.MAX_SERVERS_PER_RACK,
                                  description=f"storage servers per rack, {limit_text('MAX_SERVERS_PER_RACK')}")
    drives_per_server: int = Field(default=16, ge=1, description="E1.S SSDs per Sierra Point server")
    drive_tb: float = Field(default=15.36, gt=0)
    nic_gbps: int = Field(default=200, ge=1, description="front-end NIC speed per server (not published)")
    nics_per_server: int = Field(default=1, ge=1, le=limits.MAX_NICS_PER_SERVER,
                                 description=f"front-end NICs per server, {limit_text('MAX_NICS_PER_SERVER')}")
    power_w: int = Field(default=600, ge=1, description="power per server (not published)")
    platform: Literal["sierra-point"] = "sierra-point"
    shares: list[Share] = Field(default_factory=list, max_length=limits.MAX_SHARES,
                                description=f"what these servers serve and who mounts it, {limit_text('MAX_SHARES')}")
    client_gbps: float | None = Field(default=None, gt=0, le=100_000,
                                      description="front-end bandwidth one client host draws from this group at its "
                                                  "peak (a checkpoint save, Gb/s): the group's servers must hold "
                                                  "their clients' share of it (rule storage-load)")
    client: TectonicClient | None = Field(default=None, description="Tectonic's FUSE client (tectonic groups only): "
                                                                     "no mount is rendered without it")
    volume: DataVolume = Field(default_factory=DataVolume, description="how each server joins its drives into "
                                                                         "the one volume its exports live on")
