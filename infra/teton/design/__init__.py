"""Spec -> Fabric: pure, deterministic functions, one module per concern, then one freeze.

The designers (`roce`, `frontend`, `management`) wire mutable drafts of the devices; `design` freezes them into the
`teton.fabric.Fabric` and attaches the intents every switch runs with (`routing`, `qos`, `management`,
`buffers`, `policy`).  Every decision is made here, once; targets only spell it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

from teton.catalogue import catalogue_for
from teton.design.buffers import BufferCache, buffers
from teton.design.draft import DraftFabric
from teton.design.frontend import design_frontend
from teton.design.hostplan import assign_nfs, gpu_host_plan, host_settings, service_plan, storage_plan
from teton.design.infiniband import FRONTEND_BGP, attach_subnet_managers, design_infiniband
from teton.design.infiniband import NOS as SUBNET_MANAGED
from teton.design.management import assign_management, management
from teton.design.media import optic_rules, resolve_media
from teton.design.monitoring import monitoring
from teton.design.policy import policy
from teton.design.qos import qos
from teton.design.roce import design_roce
from teton.design.room import Room, room_of
from teton.design.routing import (
    AcceptCache,
    imports,
    maximum_prefixes,
    paths_room,
    routing,
    session_protection,
    supernets,
)
from teton.design.site import SiteMember, attach, external
from teton.fabric.floor import floor_plan
from teton.fabric.intent import Qos, SwitchPolicy
from teton.fabric.model import Device, Fabric
from teton.fabric.subnet import SubnetManager
from teton.spec.model import Cluster, RoceBackend

__all__ = ["design"]


def design(cluster: Cluster, spec_dir: Path | None = None, site: SiteMember | None = None) -> Fabric:
    """The Fabric of `cluster`.  Assumes the spec-level checks passed (see `teton.checks.check_spec`).  `spec_dir`:
    the folder the spec's relative file names (an InfiniBand GUID map) are in; default the current one.  `site`: the
    cluster is a member of a site (`teton.design.site`): its ATSWs attach to the site's aggregation tier, whose
    switches are the Fabric's externals, and its backend accepts the site's blocks."""
    models = catalogue_for(cluster)
    be = cluster.backend
    draft = DraftFabric(cluster.name, cluster.site, be.kind)
    room = room_of(cluster, models)
    ib = None
    if isinstance(be, RoceBackend):
        design_roce(cluster, draft, models, room)
    else:
        ib = design_infiniband(cluster, draft, models, spec_dir)
    design_frontend(cluster, draft, models, room)      # the service hosts too: a subnet manager's, with an HCA below
    if ib is not None:
        attach_subnet_managers(cluster, draft, ib)
    sm = ib.sm if ib is not None else None
    assign_management(cluster, draft)
    if site is not None:
        attach(draft, site, cluster.backend.mtu if isinstance(be, RoceBackend) else 9100)
    return _freeze(cluster, draft, sm, room, site)


def _freeze(cluster: Cluster, draft: DraftFabric, sm: SubnetManager | None, room: Room,
            site: SiteMember | None = None) -> Fabric:
    """The drafts frozen with the intents attached.  RoCE: routing, QoS, buffers and policy on the backend switches
    and the GPU hosts.  InfiniBand (`sm`): its switches are the subnet manager's; the front end routes with the
    default timers (an InfiniBand spec has no BGP section)."""
    be = cluster.backend
    backend_qos: Qos | None = None
    backend_policy: SwitchPolicy | None = None
    bgp, drained = FRONTEND_BGP, set[str]()
    mgmt = management(cluster)
    topology = draft.frozen()
    plan = floor_plan(cluster.floor, room.racks_per_zone, room.zones, optic_rules(cluster, draft.links, topology))
    links, topology = resolve_media(draft.links, topology, draft.models, plan)
    if isinstance(be, RoceBackend):
        speeds = {i.speed_gbps for d in topology.values() if d.plane == "backend" for i in d.interfaces}
        backend_qos, backend_policy, bgp, drained = (qos(be.qos, speeds), policy(be, cluster.monitoring.buffer_percent),
                                                       be.bgp, set(be.drain))
    limits = maximum_prefixes(cluster, room)
    floors = paths_room(cluster, room)
    protection = session_protection(cluster, topology)
    pools = supernets(cluster)
    if site is not None:
        limits["backend"], pools["backend"] = site.maximum_prefixes, site.pools
    edge_default = _edge_default(cluster) and any(x.role == "ssw" and x.nos is not None for x in topology.values())
    cache: BufferCache = {}
    accepts: AcceptCache = {}
    devices: dict[str, Device] = {}
    for name, d in topology.items():
        if d.nos == SUBNET_MANAGED:
            pass
        elif d.nos is not None:
            backend = d.plane == "backend"
            r = routing(d, topology, bgp, limits[d.plane], name in drained, protection[d.plane],
                        d.role == "ssw" and _edge_default(cluster), floors.get(d.role, 0))
            r = imports(r, topology, pools.get(d.plane, {}), d.plane == "frontend" and edge_default, accepts)
            d = replace(d, routing=r,
                        qos=backend_qos if backend else None, management=mgmt,
                        buffers=buffers(draft.models[d.model], d.interfaces, cache) if backend else None,
                        policy=backend_policy if backend else None)
        elif d.role == "host":
            d = replace(d, qos=backend_qos, policy=backend_policy, host=gpu_host_plan(cluster, d))
        elif d.role == "storage":
            d = replace(d, host=storage_plan(cluster, d))
        elif d.role == "service":
            d = replace(d, host=service_plan(cluster, d))
        devices[name] = d
    devices = assign_nfs(cluster, devices)
    externals = {n: external(devices.pop(n)) for n in sorted(devices) if devices[n].role == "bag"} if site else {}
    return Fabric(name=draft.name, site=draft.site, backend=draft.backend, devices=MappingProxyType(devices),
                  links=tuple(links), models=MappingProxyType(dict(sorted(draft.models.items()))),
                  qos=backend_qos, management=mgmt, policy=backend_policy,
                  oversubscription_goals=MappingProxyType(dict(draft.oversubscription_goals)),
                  duplicate_names=tuple(draft.duplicate_names), subnet_manager=sm,
                  hosts=host_settings(cluster, devices, backend_qos, sm),
                  floor=plan, monitoring=monitoring(cluster.monitoring), externals=MappingProxyType(externals))


def _edge_default(cluster: Cluster) -> bool:
    fe = cluster.frontend
    return fe is not None and fe.edge is not None and fe.edge.default_route
