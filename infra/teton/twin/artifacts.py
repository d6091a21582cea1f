"""A rendered build folder -> a TwinPlan of its backend fabric (switches, GPU hosts, links), and nothing else.

The twin deploys artifacts, never the spec.  Every target reads its own files back (`teton.targets`): a SONiC switch
runs its rendered `frr.conf` unchanged with the addresses of its `config_db.json`; a switch whose NOS cannot run here
(EOS) runs the FRR spelling (`teton.targets.frr`) of the routing read back from its structured config; hosts get
their NICs from `hosts/backend.json`, each NIC source-routed to its own rack switch port (one rail per NIC).  Links and
expectations come from the build's `fabric.json`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from teton.buildfolder import BuildFolder, device_dir
from teton.fabric.model import Fabric
from teton.fabric.roles import link_kinds, tier_roles
from teton.findings import Finding, SpecError, TetonError
from teton.targets import DeviceView, RenderContext
from teton.targets.frr import render_frr
from teton.twin.plan import TwinInterface, TwinLink, TwinNode, TwinPlan
from teton.validate.rendered import read_views


@dataclass(frozen=True)
class SwitchOrigin:
    """How a switch got the routing config the twin runs."""

    as_frr: bool      # the FRR spelling of the routing read back from its config (its NOS cannot run here)

    @property
    def how(self) -> str:
        return ("the FRR spelling of the routing read back from its config" if self.as_frr
                else "its rendered frr.conf, unchanged")


@dataclass
class TwinSource:
    """The plan, and how each switch got its routing config."""

    plan: TwinPlan
    fabric: Fabric
    origin: dict[str, SwitchOrigin] = field(default_factory=dict)

    def as_frr(self) -> list[str]:
        """The switches that run the FRR spelling of their read-back routing, sorted."""
        return sorted(d for d, o in self.origin.items() if o.as_frr)


def plan_name(cluster: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", cluster)[:16]


def _switch(view: DeviceView, fabric: Fabric) -> tuple[TwinNode, SwitchOrigin]:
    interfaces = [TwinInterface("lo", view.loopbacks, 65536)] + [
        TwinInterface(name, port.addresses, port.mtu or 1500) for name, port in sorted(view.interfaces.items())]
    if view.frr_conf is not None:
        return (TwinNode(name=view.name, kind="switch", interfaces=tuple(interfaces), frr_conf=view.frr_conf),
                SwitchOrigin(as_frr=False))
    if view.routing is None:
        raise SpecError([Finding(view.file, "", "no routing could be read back, so the twin cannot run it",
                                 rule="twin")])
    routing = view.routing
    designed = fabric.devices[view.name].routing
    if routing.timers.connect_retry is None and designed is not None:
        # the NOS keeps its own connect-retry timer; FRR gets the design's, so that sessions come back as fast
        routing = replace(routing, timers=replace(routing.timers, connect_retry=designed.timers.connect_retry))
    return (TwinNode(name=view.name, kind="switch", interfaces=tuple(interfaces),
                     frr_conf=render_frr(view.name, routing)),
            SwitchOrigin(as_frr=True))


def switch_frr_conf(view: DeviceView, fabric: Fabric) -> str:
    """The integrated frr.conf the twin runs for a switch read back into `view` (what a deploy pushes to it)."""
    conf = _switch(view, fabric)[0].frr_conf
    assert conf is not None
    return conf


def _host(view: DeviceView) -> TwinNode:
    interfaces = tuple(TwinInterface(name, port.addresses, port.mtu or 1500)
                       for name, port in view.interfaces.items())
    routes: list[tuple[str, str, str]] = []
    source: list[tuple[str, str, str]] = []
    for name, port in view.interfaces.items():
        for addr in port.addresses:
            gw = next((g for g in port.gateways if (":" in g) == (":" in addr)), None)
            if gw is None:
                continue
            if not any((":" in r[1]) == (":" in gw) for r in routes):
                routes.append(("default", gw, name))
            source.append((addr.split("/")[0], gw, name))
    return TwinNode(name=view.name, kind="host", interfaces=interfaces, frr_conf=None, routes=tuple(routes),
                    source_routes=tuple(source))


def twin_plan(build: BuildFolder | Path, name: str | None = None) -> TwinSource:
    """The backend fabric of the build folder `build` as a twin plan (named after the cluster unless `name`)."""
    source = build if isinstance(build, BuildFolder) else BuildFolder(build)
    fabric = source.fabric()
    if fabric.backend != "roce":
        raise TetonError(f"cluster {fabric.name!r} has an {fabric.backend} backend; the twin runs a routed "
                         "Ethernet backend in FRR.  An InfiniBand fabric is simulated by ibsim and routed by a real "
                         "OpenSM (tests/ib/test_opensm_sim.py), and checked with `teton ib verify`")
    views, problems = read_views(source, fabric, RenderContext(validate=False), vendor=False)
    if problems:
        raise SpecError(problems)
    by_name = {v.name: v for v in views}
    links = [link for link in fabric.links if link.kind in link_kinds("roce")]
    wanted = sorted({link.a.device for link in links} | {link.b.device for link in links})
    nodes: list[TwinNode] = []
    out = TwinSource(TwinPlan(name or plan_name(fabric.name), (), ()), fabric)
    missing = [d for d in wanted if d not in by_name]
    if missing:
        raise SpecError([Finding(device_dir(d), "", "no files for this device in the build (rendered with --only?)",
                                 rule="twin") for d in missing])
    for d in wanted:
        view = by_name[d]
        if fabric.devices[d].role in tier_roles("roce"):
            node, origin = _switch(view, fabric)
            out.origin[d] = origin
        else:
            node = _host(view)
        nodes.append(node)
    mtu = {(n.name, i.name): i.mtu for n in nodes for i in n.interfaces}
    plan_links = tuple(TwinLink(link.a.device, link.a.port, link.b.device, link.b.port,
                                min(mtu[(link.a.device, link.a.port)], mtu[(link.b.device, link.b.port)]))
                       for link in links)
    out.plan = TwinPlan(out.plan.name, tuple(nodes), plan_links)
    return out
