"""Spec -> Fabric: pure, deterministic functions, one module per concern, then one freeze.

The designers (`roce`, `frontend`, `management`) wire mutable drafts of the devices; `design` freezes them into the
`teton.fabric.Fabric` and attaches the intents every switch runs with (`routing`, `qos`, `management`).  Every
decision is made here, once; targets only spell it.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType

from teton.catalogue import catalogue_for
from teton.catalogue.ports import port_map
from teton.design.draft import Draft, DraftFabric
from teton.design.frontend import design_frontend
from teton.design.management import assign_management, management
from teton.design.qos import qos
from teton.design.roce import design_roce
from teton.design.routing import routing
from teton.fabric.model import Device, Fabric
from teton.spec.model import Cluster, RoceBackend

__all__ = ["design"]


def design(cluster: Cluster) -> Fabric:
    """The Fabric of `cluster`.  Assumes the spec-level checks passed (see `teton.checks.check_spec`)."""
    models = catalogue_for(cluster)
    be = cluster.backend
    draft = DraftFabric(cluster.name, cluster.site, be.kind)
    if isinstance(be, RoceBackend):
        design_roce(cluster, draft, models)
    else:  # pragma: no cover - guarded by the unsupported-backend check
        raise NotImplementedError("the InfiniBand backend comes with its own issue")
    design_frontend(cluster, draft, models)
    assign_management(cluster, draft)
    return _freeze(cluster, draft)


def _freeze(cluster: Cluster, draft: DraftFabric) -> Fabric:
    be = cluster.backend
    assert isinstance(be, RoceBackend)
    backend_qos = qos(be.qos)
    mgmt = management(cluster)
    topology = {n: _device(draft.devices[n], draft) for n in sorted(draft.devices)}
    devices: dict[str, Device] = {}
    for name, d in topology.items():
        if d.nos is not None:
            d = replace(d, routing=routing(d, topology, be.bgp), qos=backend_qos if d.plane == "backend" else None,
                        management=mgmt)
        elif d.role == "host":
            d = replace(d, qos=backend_qos)
        devices[name] = d
    return Fabric(draft.name, draft.site, draft.backend, MappingProxyType(devices), tuple(draft.links),
                  MappingProxyType(dict(sorted(draft.models.items()))), backend_qos, mgmt,
                  MappingProxyType(dict(draft.targets)), tuple(draft.duplicate_names))


def _device(d: Draft, draft: DraftFabric) -> Device:
    model = draft.models.get(d.model)
    return Device(d.name, d.role, d.model, d.nos, d.zone, d.rack, d.ru, d.height_ru, d.plane, d.asn, d.loopback4,
                  d.loopback6, d.router_id, d.mgmt, tuple(d.prefixes4), tuple(d.prefixes6), d.power_w,
                  tuple(d.interfaces), port_map(model) if model is not None and d.nos is not None else (),
                  MappingProxyType(d.attrs))

