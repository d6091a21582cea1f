"""Rules over the front end's hosts and shares: what must hold so the cluster works as one network.

- storage-share: every mount a host makes names a share some storage group serves (a Hammerspace export path, a
  Tectonic namespace), no two shares a host mounts share a mount point, and a share names its group's protocol;
- storage-volume: a group's data volume can be built from its drives (mdadm(8): raid6 needs 4, raid10 and raid0
  need 2), and only an NFS group carries NFS settings;
- services: service hosts need a front end (their only network), unique names, and the scheduler's controller is the
  slurm-controller service host when the spec has one;
- storage-load: the servers of a storage group hold their clients' share of the load the spec states (each server
  takes ceil(clients / servers) of the hosts that mount the group's shares, each drawing `client_gbps`, against its
  front-end NICs), or a warning where the spec states none;
- tectonic-client: a Tectonic share some hosts mount has no client named (Meta has not published Tectonic's FUSE
  client): no mount is rendered for it, and a client on a Hammerspace group is refused;
- frontend-edge: a default route from the spines needs spines;
- host-nic-unknown: a NIC the build names has no PCI address in the host platform's catalogue, so no .link file
  names it (warning: the host keeps the kernel's name and the .network file never matches).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator

from teton.catalogue.hosts import host_platforms
from teton.design.hostplan import SERVICE_PLATFORM
from teton.design.roce import hosts_in_rack
from teton.findings import Finding
from teton.spec.model import Cluster, RoceBackend


def storage_shares(c: Cluster, file: str) -> Iterator[Finding]:
    exports = {sh.path for g in c.storage if g.role == "hammerspace" for sh in g.shares}
    namespaces = {sh.name for g in c.storage if g.role == "tectonic" for sh in g.shares}
    mount_points: dict[tuple[str, str], str] = {}
    for i, g in enumerate(c.storage):
        names: set[str] = set()
        for k, sh in enumerate(g.shares):
            path = f"storage[{i}].shares[{k}]"
            if sh.name in names:
                yield Finding(file, f"{path}.name", f"share {sh.name!r} is named twice in this group",
                              rule="storage-share")
            names.add(sh.name)
            for kind in sh.mounted_by:
                other = mount_points.setdefault((kind, sh.mount_point), path)
                if other != path:
                    yield Finding(file, f"{path}.mount_point", f"{kind} hosts mount {other} at {sh.mount_point} "
                                  "already", rule="storage-share")
    client = c.hosts.storage_client
    for k, m in enumerate(client.hammerspace):
        if m.export not in exports:
            known = ", ".join(sorted(exports)) or "none: no hammerspace group has shares"
            yield Finding(file, f"hosts.storage_client.hammerspace[{k}].export", f"{m.export} is exported by no "
                          f"storage server (the hammerspace shares' paths: {known}); mount.nfs4 would fail",
                          rule="storage-share")
    t = client.tectonic
    if t is not None and t.namespace not in namespaces:
        known = ", ".join(sorted(namespaces)) or "none: no tectonic group has shares"
        yield Finding(file, "hosts.storage_client.tectonic.namespace", f"Tectonic namespace {t.namespace!r} is "
                      f"served by no storage group (the tectonic shares: {known})", rule="storage-share")


def _clients(c: Cluster, kinds: Collection[str]) -> int:
    """How many hosts of `kinds` (gpu, service) the cluster has."""
    gpu = sum(hosts_in_rack(c, z, r) for z in range(1, c.zones + 1) for r in range(1, c.racks_per_zone + 1))
    return (gpu if "gpu" in kinds else 0) + (len(c.services) if "service" in kinds else 0)


def storage_load(c: Cluster, file: str) -> Iterator[Finding]:
    for i, g in enumerate(c.storage):
        kinds = {k for sh in g.shares for k in sh.mounted_by}
        clients = _clients(c, kinds)
        if not clients:
            continue
        servers = g.racks * g.servers_per_rack
        per_server = -(-clients // servers)
        capacity = g.nics_per_server * g.nic_gbps
        if g.client_gbps is None:
            yield Finding(file, f"storage[{i}].client_gbps", f"{clients} hosts mount this group's shares, "
                          f"{per_server} per server, and the spec states no load per client: nothing checks that "
                          f"{g.nics_per_server}x{g.nic_gbps}G per server holds them", rule="storage-load",
                          severity="warning")
        elif per_server * g.client_gbps > capacity:
            most = int(capacity // g.client_gbps)
            yield Finding(file, f"storage[{i}].client_gbps", f"each server takes {per_server} of the {clients} hosts "
                          f"that mount this group's shares: {per_server} x {g.client_gbps:g} Gb/s = "
                          f"{per_server * g.client_gbps:g} Gb/s, over its {g.nics_per_server}x{g.nic_gbps}G front end; "
                          f"{-(-clients // max(most, 1))} servers (or more NICs per server) would hold them",
                          rule="storage-load")


def tectonic_client(c: Cluster, file: str) -> Iterator[Finding]:
    for i, g in enumerate(c.storage):
        if g.role != "tectonic" and g.client is not None:
            yield Finding(file, f"storage[{i}].client", "only a tectonic group has a Tectonic client (a "
                          f"{g.role} group is mounted over NFS)", rule="tectonic-client")
        elif g.role == "tectonic" and g.client is None and any(sh.mounted_by for sh in g.shares):
            yield Finding(file, f"storage[{i}].client", f"no Tectonic client is named, so the share(s) "
                          f"{', '.join(sh.name for sh in g.shares)} are not mounted: Meta has not published "
                          "Tectonic's FUSE client; name the site's as {package, endpoints}", rule="tectonic-client",
                          severity="warning")
MIN_DRIVES = {"raid6": 4, "raid10": 2, "raid0": 2, "single": 1}   # mdadm(8): raid6 4 devices, raid10 and raid0 2


def storage_volumes(c: Cluster, file: str) -> Iterator[Finding]:
    """Each NFS group's volume can be built from its drives; a Tectonic group (one file system per drive, its chunk
    servers' layout) takes no NFS setting."""
    for i, g in enumerate(c.storage):
        if g.role == "tectonic":
            for k, sh in enumerate(g.shares):
                for name in ("failover_address", "clients"):
                    if getattr(sh, name):
                        yield Finding(file, f"storage[{i}].shares[{k}].{name}", f"{name} is an NFS setting and "
                                      "this group is tectonic (FUSE clients)", rule="storage-volume")
            continue
        need = MIN_DRIVES[g.volume.layout]
        if g.drives_per_server < need:
            yield Finding(file, f"storage[{i}].volume.layout", f"{g.volume.layout} needs at least {need} drives "
                          f"and the servers have {g.drives_per_server}; mdadm --create would refuse",
                          rule="storage-volume")


def service_hosts(c: Cluster, file: str) -> Iterator[Finding]:
    if c.services and c.frontend is None:
        yield Finding(file, "services", "service hosts are placed on the front end, and this spec has none",
                      rule="services")
    seen: set[str] = set()
    for k, h in enumerate(c.services):
        if h.name in seen:
            yield Finding(file, f"services[{k}].name", f"service host {h.name!r} is named twice", rule="services")
        seen.add(h.name)
    controllers = [h.name for h in c.services if h.role == "slurm-controller"]
    if controllers and c.scheduler.controller not in controllers:
        yield Finding(file, "scheduler.controller", f"{c.scheduler.controller!r} is not the slurm-controller "
                      f"service host ({', '.join(controllers)}): slurmd would look for a controller nobody runs",
                      rule="services")


def frontend_edge(c: Cluster, file: str) -> Iterator[Finding]:
    fe = c.frontend
    if fe is not None and fe.edge is not None and fe.edge.default_route and fe.ssw is None:
        yield Finding(file, "frontend.edge.default_route", "the spines originate the default route, and "
                      "frontend.ssw gives none", rule="frontend-edge")


def host_nic_unknown(c: Cluster, file: str) -> Iterator[Finding]:
    platforms = host_platforms()

    def check(path: str, platform: str, names: list[str]) -> Iterator[Finding]:
        known = {n.name for n in platforms.get(platform, ())}
        missing = [n for n in names if n not in known]
        if missing:
            yield Finding(file, path, f"{platform} has no PCI address for {', '.join(missing)} in the host catalogue "
                          "(teton/catalogue/hosts.yaml): no .link file names it", rule="host-nic-unknown",
                          severity="warning")

    rails = [f"be{n}" for n in range(c.host.backend_nics)] if isinstance(c.backend, RoceBackend) else []
    fe = [f"fe{n}" for n in range(c.host.frontend_nics)] if c.frontend is not None else []
    yield from check("host", c.host.platform, rails + fe)
    for i, g in enumerate(c.storage):
        yield from check(f"storage[{i}].nics_per_server", g.platform, [f"fe{n}" for n in range(g.nics_per_server)])
    for k, h in enumerate(c.services):
        yield from check(f"services[{k}].nics", SERVICE_PLATFORM, [f"fe{n}" for n in range(h.nics)])


FRONTEND_RULES: tuple[Callable[[Cluster, str], Iterator[Finding]], ...] = (
    storage_shares, storage_volumes, storage_load, tectonic_client, service_hosts, frontend_edge,
    host_nic_unknown)
