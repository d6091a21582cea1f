"""Spec -> Fabric: pure, deterministic expansion, one module per concern."""

from __future__ import annotations

from teton.catalogue import catalogue_for
from teton.design.fabric import Device, End, Fabric, Interface, Link
from teton.design.frontend import design_frontend
from teton.design.management import assign_management
from teton.design.roce import design_roce
from teton.spec.model import Cluster, RoceBackend

__all__ = ["Device", "End", "Fabric", "Interface", "Link", "design"]


def design(cluster: Cluster) -> Fabric:
    """The Fabric of `cluster`.  Assumes the spec-level checks passed (see `teton.checks.check_spec`)."""
    models = catalogue_for(cluster)
    be = cluster.backend
    fabric = Fabric(cluster.name, cluster.site, be.kind)
    if isinstance(be, RoceBackend):
        design_roce(cluster, fabric, models)
    else:  # pragma: no cover - guarded by the unsupported-backend check
        raise NotImplementedError("the InfiniBand backend comes with its own issue")
    design_frontend(cluster, fabric, models)
    assign_management(cluster, fabric)
    fabric.management = cluster.management.model_dump()
    return fabric
