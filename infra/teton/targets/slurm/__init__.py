"""The scheduler's files: `slurm/slurm.conf`, `slurm/gres.conf` and `slurm/topology.conf`, from the Fabric.

- Nodes: every GPU host, addressed on its front end, with its GPUs as `gpu:<type>:<count>` and its zone and rack as
  features; the scheduler settings (controller, ports, CPU layout, health check) are the Fabric's host settings.
- gres.conf: each GPU with the cores of the CPU socket its PCIe switch hangs off (the Fabric's GPU-NIC pairing).
- topology.conf: the tree rack switch (RTSW) -> zone -> cluster, each switch and node exactly once, names spelled
  out (slurmctld refuses hostlist expressions in `Switches=`).  An InfiniBand SU is rail-optimized: each of its
  leaves reaches every node of the SU, so no leaf is one node's own; the SU's leaves form one logical switch (the
  zone, its nodes), under its pod (`pNN`: the SUs that share a pod's spine groups, in a three-level fabric), under
  the cluster: what the scheduler needs to keep a job in one SU, else in one pod.
- Partitions: one, `Nodes=ALL`, unless InfiniBand tenants split the hosts: then one per P_Key (a job's queue pairs
  connect only within one), the default partition's hosts of no tenant under the scheduler's partition name, each
  tenant's members under its InfiniBand partition's name, nodes spelled out (teton.fabric.pkeys).

Slurm itself is the validator: tests/hosts/test_slurm.py starts Debian's slurmctld on these files.
"""

from __future__ import annotations

from typing import Any

from teton.fabric.hostplan import GpuHostPlan
from teton.fabric.model import Device, Fabric
from teton.fabric.pkeys import pkey_partitions
from teton.findings import Finding, SpecError
from teton.targets.base import Files, RenderContext, Target
from teton.targets.slurm.topology_yaml import topology_yaml
from teton.targets.templates import Templates
from teton.targets.tokens import token

DIR = "slurm"
TEMPLATES = Templates.beside(__file__)
_NAMES = "Every switch and node once; names spelled out (slurmctld refuses hostlists here)."
TREES = {   # the head of topology.conf: (backend, with a middle tier) -> what the tree is
    ("roce", True): f"rack switch (RTSW) -> zone (its CTSW\n# planes) -> cluster (the ATSWs).  {_NAMES}",
    ("roce", False): f"rack switch (RTSW) -> cluster.\n# {_NAMES}",
    ("infiniband", False): "scalable unit (its rail-optimized\n# InfiniBand leaves, each reaching every node of the "
                           "SU) -> cluster (the spines and cores).  Every switch and node\n# once; names spelled out "
                           "(slurmctld refuses hostlists here).",
    ("infiniband", True): "scalable unit (its rail-optimized\n# InfiniBand leaves, each reaching every node of the "
                          "SU) -> pod (the SUs sharing its spine groups) ->\n# cluster (the cores).  "
                          f"{_NAMES}",
}


def gpu_type(device: Device) -> str:
    """'h100' for 'H100-80GB-HBM3': Slurm's GRES type of the host's GPUs."""
    model = str(device.attrs.get("gpu_model", "gpu"))
    return (model.split("-", 1)[0].lower() or "gpu").replace(" ", "")


def _frontend_address(device: Device) -> str | None:
    for i in device.interfaces:
        if i.kind == "host-fersw":
            for cidr in (i.ipv4, i.ipv6):
                if cidr:
                    return cidr.split("/", 1)[0]
    return None


def _cores(socket: int, per_socket: int) -> str:
    first = socket * per_socket
    return f"{first}-{first + per_socket - 1}" if per_socket > 1 else str(first)


def _node(device: Device, cores_per_socket: int) -> dict[str, Any]:
    gpus = int(device.attrs.get("gpus", 0))
    conf = "slurm.conf/gres.conf"
    for field, value in (("name", device.name), ("gpu_model", gpu_type(device)), ("rack", device.rack or "x")):
        token(value, device.name, field, conf)
    plan = device.host
    numa = {n.gpu: n.numa for n in plan.nics} if isinstance(plan, GpuHostPlan) else {}
    return {"name": device.name, "addr": _frontend_address(device), "gpus": gpus, "gpu_type": gpu_type(device),
            "features": ",".join(x for x in (f"z{device.zone:02d}" if device.zone else "", device.rack) if x),
            "gres": [{"gpu": g, "cores": _cores(numa.get(g, 0), cores_per_socket)} for g in range(gpus)]}


def topology(fabric: Fabric) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    """(leaf switches with their nodes, zones with their leaf switches, the top switch's name): RoCE RTSWs in their
    zones; for InfiniBand, one leaf per SU (its rail leaves, which all reach the same nodes) in its pod when the fabric
    has three levels."""
    racks: list[dict[str, Any]] = []
    zone_list: list[dict[str, Any]] = []
    if fabric.backend == "infiniband":
        sus: dict[int, list[str]] = {}
        for d in fabric.by_role("host"):
            sus.setdefault(d.zone or 0, []).append(d.name)
        racks = [{"name": f"z{z:02d}", "nodes": nodes} for z, nodes in sorted(sus.items())]
        pods: dict[int, dict[str, None]] = {}
        if fabric.by_role("core"):       # three levels: the SUs of a pod share its spine groups
            for leaf in fabric.by_role("leaf"):
                if leaf.zone in sus:
                    pods.setdefault(int(leaf.attrs.get("pod", 1)), {})[f"z{leaf.zone:02d}"] = None
        zone_list = [{"name": f"p{p:02d}", "switches": sorted(names)} for p, names in sorted(pods.items())]
    else:
        zones: dict[int, list[str]] = {}
        for sw in fabric.by_role("rtsw"):
            nodes = list(dict.fromkeys(i.peer for i in sw.interfaces if i.kind == "host-rtsw"))
            if not nodes:
                continue
            racks.append({"name": sw.name, "nodes": nodes})
            zones.setdefault(sw.zone or 0, []).append(sw.name)
        zone_list = [{"name": f"z{z:02d}", "switches": names} for z, names in sorted(zones.items())]
    taken = {z["name"] for z in zone_list} | {r["name"] for r in racks} | set(fabric.devices)
    top = fabric.name if fabric.name not in taken else f"{fabric.name}-cluster"
    return racks, zone_list, top


def partitions(fabric: Fabric, default_name: str) -> list[dict[str, Any]]:
    """The Slurm partitions, one per P_Key GPU hosts run jobs in ([]: one partition of every node): the default
    partition's as `default_name`, each tenant's by its name; the first with nodes is the default.  A tenant with no
    GPU host has none (a comment)."""
    pkeys = pkey_partitions(fabric)
    if not any(p.tenant for p in pkeys):
        return []
    out: list[dict[str, Any]] = []
    for p in pkeys:
        name = default_name if not p.tenant else token(p.name, f"partition {p.name!r}", "name", "slurm.conf")
        if p.tenant and name == default_name:
            raise SpecError([Finding("slurm.conf", f"partition {p.name!r}.name", f"tenant partition {p.name!r} has "
                                     "the name of the scheduler's partition of the hosts of no tenant "
                                     "(scheduler.partition): each P_Key needs a Slurm partition of its own",
                                     rule="render")])
        what = (f"the default partition: the {len(p.hosts)} GPU hosts of no tenant" if not p.tenant else
                f"InfiniBand partition {p.name}: its {len(p.hosts)} GPU hosts" if p.hosts else
                f"InfiniBand partition {p.name}: no GPU host, so no Slurm partition")
        out.append({"name": name, "pkey": p.spelled, "what": what, "nodes": list(p.hosts),
                    "default": bool(p.hosts) and not any(q["default"] for q in out)})
    return out


class SlurmTarget(Target):
    name = "slurm"
    cost_per_device = 0.00003
    summary = "slurm/slurm.conf, gres.conf, topology.conf: nodes, GPUs and the tree rack switch -> zone -> cluster"

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        settings = fabric.hosts
        hosts = fabric.by_role("host")
        if settings is None or not hosts:
            return {}
        s = settings.scheduler
        for field in ("controller", "partition", "cluster"):
            token(getattr(s, field), "scheduler", field, "slurm.conf")
        nodes = [_node(d, s.cores_per_socket) for d in hosts]
        racks, zones, top = topology(fabric)
        return {
            f"{DIR}/slurm.conf": TEMPLATES.render("slurm.conf.j2", s=s, nodes=nodes,
                                                  partitions=partitions(fabric, s.partition)),
            f"{DIR}/gres.conf": TEMPLATES.render("gres.conf.j2", cluster=s.cluster, nodes=nodes),
            f"{DIR}/topology.conf": TEMPLATES.render("topology.conf.j2", cluster=s.cluster, racks=racks,
                                                    zones=zones, top=top, tree=TREES[fabric.backend, bool(zones)]),
            f"{DIR}/topology.yaml": topology_yaml(fabric, s.cluster, racks, zones, top),
        }


TARGET = SlurmTarget()
