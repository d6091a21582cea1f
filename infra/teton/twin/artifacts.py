"""A rendered build folder -> a TwinPlan of its routed networks: the RoCE backend and the front end (switches, GPU
hosts, storage servers, service hosts, links), and nothing else.

The twin deploys artifacts, never the spec.  Every target reads its own files back (`teton.targets`): a SONiC switch
runs its rendered `frr.conf` unchanged with the addresses of its `config_db.json`; a switch whose NOS cannot run here
(EOS, FBOSS) runs the FRR spelling (`teton.targets.frr`) of the routing its BGP view carries (the target's one BGP
reader, `teton.frr.policy.routing_of`).  A server is the union of what the targets read back about it: a GPU host's
rails from `hosts/backend.json`, each source-routed to its own rack switch port (one rail per NIC); every server's
front-end NICs from its Ansible host variables (`teton_frontend`, what the host_nics role configures), with one ECMP
default route over them.  What each node announces over LLDP (`teton twin lldp`) is its target's `LldpView` of its
files.  Links and expectations come from the build's `fabric.json`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from teton.buildfolder import BuildFolder, device_dir
from teton.expect import FRONTEND_NICS, ROUTED, TIER
from teton.fabric.model import Fabric
from teton.fabric.roles import link_kinds
from teton.findings import Finding, SpecError, TetonError
from teton.frr.policy import routing_of
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
    networks: tuple[str, ...] = ()     # the routed networks it runs: "roce", "frontend" (an InfiniBand cluster: its
                                       # front end; the backend is ibsim's and OpenSM's)

    def as_frr(self) -> list[str]:
        """The switches that run the FRR spelling of their read-back routing, sorted."""
        return sorted(d for d, o in self.origin.items() if o.as_frr)


def plan_name(cluster: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", cluster)[:16]


_LLDP_VALUE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,63}")


def _lldp(views: list[DeviceView], ports: set[str]) -> dict[str, Any]:
    """The LLDP announcement of a node (TwinNode's lldp_system and lldp_ports) from the views that say it, for its
    interfaces in the twin; a name or port id outside the grammar lldpd's configuration takes is refused (it is
    written into an lldpcli command line)."""
    found = next((v.lldp for v in views if v.lldp is not None), None)
    if found is None:
        return {}
    announced = [(p, i) for p, i in sorted(found.ports.items()) if p in ports]
    bad = [x for x in (found.system, *(i for _, i in announced)) if not _LLDP_VALUE.fullmatch(x)]
    if bad:
        raise SpecError([Finding(found.where, "", f"{bad[0]!r} cannot be announced over LLDP (letters, digits and "
                                 "._:/@+- only, 64 at most)", rule="twin")])
    return {"lldp_system": found.system, "lldp_ports": tuple(announced)}


def _switch(view: DeviceView, fabric: Fabric) -> tuple[TwinNode, SwitchOrigin]:
    interfaces = [TwinInterface("lo", view.loopbacks, 65536)] + [
        TwinInterface(name, port.addresses, port.mtu or 1500) for name, port in sorted(view.interfaces.items())]
    lldp = _lldp([view], set(view.interfaces))
    if view.frr_conf is not None:
        return (TwinNode(name=view.name, kind="switch", interfaces=tuple(interfaces), frr_conf=view.frr_conf,
                         **lldp), SwitchOrigin(as_frr=False))
    if view.bgp is None:
        raise SpecError([Finding(view.file, "", "no routing could be read back, so the twin cannot run it",
                                 rule="twin")])
    routing = routing_of(view.bgp)
    designed = fabric.devices[view.name].routing
    if routing.timers.connect_retry is None and designed is not None:
        # the NOS keeps its own connect-retry timer; FRR gets the design's, so that sessions come back as fast
        routing = replace(routing, timers=replace(routing.timers, connect_retry=designed.timers.connect_retry))
    if routing.password_secret is None and designed is not None and designed.password_secret is not None \
            and any(p.password for p in view.bgp.peers):
        # files as pushed (EOS's type-7 ciphertext, what a switch fetched at day 0) name no secret, and the view never
        # holds a value: FRR gets the secret the design names, resolved with the twin's secrets
        routing = replace(routing, password_secret=designed.password_secret)
    return (TwinNode(name=view.name, kind="switch", interfaces=tuple(interfaces),
                     frr_conf=render_frr(view.name, routing), **lldp),
            SwitchOrigin(as_frr=True))


def switch_frr_conf(view: DeviceView, fabric: Fabric) -> str:
    """The integrated frr.conf the twin runs for a switch read back into `view` (what a deploy pushes to it)."""
    conf = _switch(view, fabric)[0].frr_conf
    assert conf is not None
    return conf


def _host(views: list[DeviceView], fabric: Fabric) -> TwinNode:
    """A server from every view of it: backend NICs source-routed (a rail's traffic leaves by its own NIC), the
    front-end NICs sharing one ECMP default route per family (as host_nics writes it); without a front end, the
    default route goes by the first backend NIC."""
    name = views[0].name
    ports = {n: p for v in views for n, p in sorted(v.interfaces.items())}
    device = fabric.devices[name]
    front = {n for n in ports if (i := device.interface(n)) is not None and i.kind in FRONTEND_NICS}
    routes: list[tuple[str, str, str]] = []
    source: list[tuple[str, str, str]] = []
    for nic, port in ports.items():
        for addr in port.addresses:
            gw = next((g for g in port.gateways if (":" in g) == (":" in addr)), None)
            if gw is None:
                continue
            if nic in front:
                routes.append(("default", gw, nic))
                continue
            if not front and not any((":" in r[1]) == (":" in gw) for r in routes):
                routes.append(("default", gw, nic))
            source.append((addr.split("/")[0], gw, nic))
    interfaces = tuple(TwinInterface(n, p.addresses, p.mtu or 1500) for n, p in ports.items())
    return TwinNode(name=name, kind="host", interfaces=interfaces, frr_conf=None, routes=tuple(routes),
                    source_routes=tuple(source), **_lldp(views, set(ports)))


def twin_plan(build: BuildFolder | Path, name: str | None = None) -> TwinSource:
    """The routed networks of the build folder `build` (a RoCE backend, the front end) as a twin plan (named after
    the cluster unless `name`); an InfiniBand cluster's twin is its front end."""
    source = build if isinstance(build, BuildFolder) else BuildFolder(build)
    fabric = source.fabric()
    networks = tuple(net for net in ROUTED if any(link.kind in link_kinds(net) for link in fabric.links))
    if not networks:
        raise TetonError(f"cluster {fabric.name!r} has an {fabric.backend} backend and no front end; the twin runs "
                         "routed Ethernet networks in FRR.  An InfiniBand fabric is simulated by ibsim and routed by "
                         "a real OpenSM (tests/ib/test_opensm_sim.py), and checked with `teton ib verify`")
    views, problems = read_views(source, fabric, RenderContext(validate=False), vendor=False)
    if problems:
        raise SpecError(problems)
    by_name: dict[str, list[DeviceView]] = {}
    for v in views:
        by_name.setdefault(v.name, []).append(v)
    kinds = {k for net in networks for k in link_kinds(net)}
    links = [link for link in fabric.links if link.kind in kinds]
    wanted = sorted({link.a.device for link in links} | {link.b.device for link in links})
    nodes: list[TwinNode] = []
    out = TwinSource(TwinPlan(name or plan_name(fabric.name), (), ()), fabric, networks=networks)
    missing = [d for d in wanted if d not in by_name]
    if missing:
        raise SpecError([Finding(device_dir(d), "", "no files for this device in the build (rendered with --only?)",
                                 rule="twin") for d in missing])
    for d in wanted:
        if fabric.devices[d].role in TIER:
            node, origin = _switch(by_name[d][0], fabric)
            out.origin[d] = origin
        else:
            node = _host(by_name[d], fabric)
        nodes.append(node)
    mtu = {(n.name, i.name): i.mtu for n in nodes for i in n.interfaces}
    plan_links = tuple(TwinLink(link.a.device, link.a.port, link.b.device, link.b.port,
                                min(mtu[(link.a.device, link.a.port)], mtu[(link.b.device, link.b.port)]))
                       for link in links)
    out.plan = TwinPlan(out.plan.name, tuple(nodes), plan_links)
    return out
