"""InfiniBand backend design: a rail-optimized Quantum-2 fat tree (Meta's second 24k cluster, NVIDIA's SuperPOD).

A zone is a scalable unit (SU) of racks_per_zone x hosts_per_rack nodes.  Rail-optimized: HCA i of every node of an SU
goes to leaf i of the SU, on the leaf's port n for node n of the SU (rack order, then host order); the leaf's uplinks
follow its downlinks (docs/sources.md section 3).

- Two levels while one spine layer can join every leaf: each leaf has k parallel links to each of up/k spines, with k
  as large as fits (as few spines as possible, SuperPOD style) unless the spec sets it.
- Three levels beyond that.  Spines come in groups, one per (pod, rail): a pod is as many SUs as a spine's downlinks
  hold, balanced across pods, and every leaf of the group reaches every spine of it, so rail-local traffic (what NCCL
  sends between nodes) stays below the cores within a pod.  Spine j of every group uplinks into core plane j, spread
  round robin over the plane's cores: every core fills its ports, every spine reaches every core of its plane (a spec
  rule refuses a cluster where it would not), and each spine-core pair carries 2 or 3 parallel links when the
  numbers do not divide evenly (OpenSM's ftree handles that with a root GUID file).
- Full bisection unless a tier's blocking factor says otherwise.  IB links carry no addresses: the subnet manager
  assigns LIDs.  GUIDs come from the spec's GUID map or are synthetic (`teton.design.guids`).
- Subnet managers on service hosts (`services:` of role `subnet-manager`): each has one HCA, cabled to a free port of
  a leaf after its nodes and uplinks (NVIDIA's SuperPOD gives an SU port to its UFM the same way): instance i on the
  leaf of rail i of the i-th SU spread across the cluster, so no leaf or SU holds two of them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from teton.design.builder import Ports, wire
from teton.design.draft import Draft, DraftFabric
from teton.design.guids import guid_text, hca_node_name, read_guid_map, resolve, synthetic
from teton.design.naming import core_name, host_name, leaf_name, net_rack_name, rack_name, spine_name
from teton.design.subnet import sm_services, subnet_manager
from teton.fabric.subnet import SubnetManager
from teton.findings import TetonError
from teton.spec.model import Bgp, Cluster, InfinibandBackend, SwitchModel

NOS = "opensm"            # what configures an InfiniBand switch: the subnet manager (its tables, P_Keys, SL2VL)
PER_NETWORK_RACK = 32     # 1 RU switches placed in a network rack
FRONTEND_BGP = Bgp()      # the front end's sessions: the default timers (an InfiniBand spec has no BGP section)


class IbShapeError(TetonError):
    """The spec cannot make a fat tree: `path` is the spec path to change."""

    def __init__(self, path: str, message: str):
        super().__init__(message)
        self.path, self.message = path, message


@dataclass(frozen=True)
class IbShape:
    """Counts that follow from the spec alone; shared by the designer and the spec rules."""

    sus: int
    nodes: int                      # per SU
    rails: int                      # HCAs per node = leaves per SU
    leaf_up: int
    levels: int                     # 2 or 3
    k: int                          # parallel links between a leaf and each spine it reaches
    spines_per_group: int           # two levels: every spine
    pod_sizes: tuple[int, ...]      # SUs per pod (three levels); two levels: (sus,)
    spine_blocking: float
    cores_per_plane: int            # 0 for two levels

    @property
    def leaves(self) -> int:
        return self.sus * self.rails

    @property
    def groups(self) -> int:
        return self.rails * len(self.pod_sizes) if self.levels == 3 else 1

    @property
    def spines(self) -> int:
        return self.spines_per_group * self.groups

    @property
    def cores(self) -> int:
        return self.spines_per_group * self.cores_per_plane

    def spine_up(self, pod_size: int) -> int:
        """Uplinks of a spine of a pod of `pod_size` SUs (0 on two levels)."""
        return 0 if self.levels == 2 else round(pod_size * self.k / self.spine_blocking)

    @property
    def host_links(self) -> int:
        return self.sus * self.nodes * self.rails

    @property
    def leaf_spine_links(self) -> int:
        return self.leaves * self.leaf_up

    @property
    def spine_core_links(self) -> int:
        return self.rails * self.spines_per_group * sum(self.spine_up(g) for g in self.pod_sizes)

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores


def radix(model: SwitchModel, speed: int) -> int:
    """Ports of `model` that run at `speed` (or faster)."""
    return sum(g.count for g in model.port_groups if g.speed_gbps >= speed)


def _whole(x: float) -> int | None:
    n = round(x)
    return n if abs(x - n) < 1e-9 and n >= 1 else None


def ib_shape(c: Cluster, models: dict[str, SwitchModel]) -> IbShape:
    """The fat tree of spec `c` (its models known); IbShapeError naming the spec path that prevents one."""
    be = c.backend
    assert isinstance(be, InfinibandBackend)
    speed = be.link_speed_gbps
    nodes, sus, rails = c.racks_per_zone * c.hosts_per_rack, c.zones, c.host.backend_nics
    leaf_model, spine_model = models[be.leaf.model], models[be.spine.model]
    up = _whole(nodes / be.leaf.blocking_factor)
    if up is None:
        raise IbShapeError("backend.leaf.blocking_factor", f"an SU of {nodes} nodes at {be.leaf.blocking_factor:g}:1 "
                           f"would need {nodes / be.leaf.blocking_factor:g} uplinks per leaf: not a whole number")
    r_leaf = radix(leaf_model, speed)
    if nodes + up > r_leaf:
        b = be.leaf.blocking_factor
        most = math.floor(r_leaf * b / (1 + b) + 1e-9)
        raise IbShapeError("racks_per_zone", f"an SU of {nodes} nodes (racks_per_zone x hosts_per_rack) needs {nodes} "
                           f"down and {up} up ports on each leaf, but {leaf_model.name} has {r_leaf} ports of "
                           f"{speed}G: an SU has at most {most} nodes at {b:g}:1")
    leaves, r_spine = sus * rails, radix(spine_model, speed)
    k = be.spine.links_per_leaf
    if k is not None and up % k:
        raise IbShapeError("backend.spine.links_per_leaf", f"a leaf's {up} uplinks do not split evenly into groups "
                           f"of {k} parallel links")
    if k is None:
        k = max((d for d in range(1, up + 1) if up % d == 0 and leaves * d <= r_spine), default=None)
    if k is not None and leaves * k <= r_spine:
        return IbShape(sus, nodes, rails, up, 2, k, up // k, (sus,), 1.0, 0)
    k = k or 1
    b = be.spine.blocking_factor
    pod_max = math.floor(r_spine / (k * (1 + 1 / b)) + 1e-9)
    if pod_max < 1:
        raise IbShapeError("backend.spine.links_per_leaf", f"a spine of {spine_model.name} ({r_spine} ports) cannot "
                           f"hold {k} links from a leaf and their uplinks")
    pods = -(-sus // pod_max)
    sizes = tuple(sus // pods + (1 if p < sus % pods else 0) for p in range(pods))
    for g in sorted(set(sizes)):
        if _whole(g * k / b) is None:
            raise IbShapeError("backend.spine.blocking_factor", f"a spine of a pod of {g} SUs has {g * k} downlinks: "
                               f"at {b:g}:1 that is {g * k / b:g} uplinks, not a whole number")
    core_model = models[be.core.model]
    r_core = radix(core_model, speed)
    plane_links = rails * sum(round(g * k / b) for g in sizes)
    cores = -(-plane_links // r_core)
    fewest_up = min(round(g * k / b) for g in sizes)
    if cores > fewest_up:
        raise IbShapeError("zones", f"{sus} SUs of {nodes} nodes need {cores} cores per plane, more than the "
                           f"{fewest_up} uplinks of a spine reach: beyond a three-level fat tree of these models "
                           "(fewer SUs, or fewer rails)")
    return IbShape(sus, nodes, rails, up, 3, k, up // k, sizes, b, cores)


def hca_names(c: Cluster) -> list[str]:
    be = c.backend
    assert isinstance(be, InfinibandBackend)
    return list(be.hca_names) or [f"mlx5_{i}" for i in range(c.host.backend_nics)]


def root_names(shape: IbShape) -> list[str]:
    """The top tier: the cores, or the spines of a two-level tree."""
    if shape.levels == 2:
        return [spine_name(None, None, j) for j in range(1, shape.spines_per_group + 1)]
    return [core_name(j, i) for j in range(1, shape.spines_per_group + 1) for i in range(1, shape.cores_per_plane + 1)]


def switch_names(shape: IbShape) -> list[str]:
    """Every switch of the fat tree, in design order."""
    out = [leaf_name(z, r) for z in range(1, shape.sus + 1) for r in range(shape.rails)]
    if shape.levels == 3:
        out += [spine_name(p, r, j) for p in range(1, len(shape.pod_sizes) + 1) for r in range(shape.rails)
                for j in range(1, shape.spines_per_group + 1)]
    return out + root_names(shape)


def node_names(c: Cluster, shape: IbShape) -> list[str]:
    """Every node of the subnet: switches, then every host's HCAs (their node descriptions)."""
    hcas = hca_names(c)
    hosts = [host_name(z, r, h) for z in range(1, c.zones + 1) for r in range(1, c.racks_per_zone + 1)
             for h in range(1, c.hosts_per_rack + 1)]
    return (switch_names(shape) + [hca_node_name(h, a) for h in hosts for a in hcas]
            + [hca_node_name(s.name, hcas[0]) for s in sm_services(c)])


def design_infiniband(cluster: Cluster, draft: DraftFabric, models: dict[str, SwitchModel],
                      spec_dir: Path | None) -> IbWiring:
    """Wire an InfiniBand cluster's fat tree into `draft`; its subnet manager (what configures the switches).  The
    front end, management and the freeze are the shared steps of `teton.design.design`."""
    be = cluster.backend
    assert isinstance(be, InfinibandBackend)
    shape = ib_shape(cluster, models)
    guids = _guids(be, spec_dir)
    leaves = _wire(cluster, shape, draft, models, guids)
    return IbWiring(subnet_manager(cluster, root_names(shape), hca_names(cluster), synthetic_guids=not guids),
                    leaves, guids)


@dataclass
class IbWiring:
    """What the fat tree's design hands on: the subnet manager, and the leaves with their ports still to give."""

    sm: SubnetManager
    leaves: dict[tuple[int, int], tuple[Draft, Ports]]    # (SU, rail) -> the leaf and its ports
    guids: dict[str, tuple[int, int | None]]


def sm_leaf(cluster: Cluster, i: int) -> tuple[int, int]:
    """(SU, rail) of the leaf the i-th subnet manager service host is cabled to: SUs spread across the cluster
    (first and last for an HA pair), rail i, so no leaf or SU holds two of them."""
    n = len(sm_services(cluster))
    return 1 + (i * (cluster.zones - 1)) // max(1, n - 1), i % cluster.host.backend_nics


def attach_subnet_managers(cluster: Cluster, draft: DraftFabric, ib: IbWiring) -> None:
    """Give each subnet manager service host (designed with the front end, in the service rack) its HCA, cabled to
    a free port of its leaf (`sm_leaf`); GUIDs from the map or synthetic, as the GPU hosts'.  The spec rule
    `subnet-manager` refuses a leaf with no free port first."""
    be = cluster.backend
    assert isinstance(be, InfinibandBackend)
    hca = hca_names(cluster)[0]
    for i, svc in enumerate(sm_services(cluster)):
        host = draft.devices[svc.name]
        node, port = ib.guids.get(hca_node_name(svc.name, hca), (synthetic(hca_node_name(svc.name, hca)), None))
        host.attrs["hca_guids"] = {hca: guid_text(node)}
        host.attrs["port_guids"] = {hca: guid_text(_port_guid(node, port, ib.guids))}
        leaf, ports = ib.leaves[sm_leaf(cluster, i)]
        wire(draft, "service-leaf", host, (hca, 0), leaf, ports.take(be.link_speed_gbps), speed=be.link_speed_gbps,
             medium=be.leaf.medium_down, mtu=be.mtu, nets=None, net_index=0, rack=host.rack or leaf.rack, zone=None)


def _guids(be: InfinibandBackend, spec_dir: Path | None) -> dict[str, tuple[int, int | None]]:
    return {} if be.guid_map is None else read_guid_map(resolve(spec_dir, be.guid_map), root=spec_dir).nodes


def _wire(cluster: Cluster, shape: IbShape, draft: DraftFabric, models: dict[str, SwitchModel],
          guids: dict[str, tuple[int, int | None]]) -> dict[tuple[int, int], tuple[Draft, Ports]]:
    be = cluster.backend
    assert isinstance(be, InfinibandBackend)
    speed, mtu, host = be.link_speed_gbps, be.mtu, cluster.host
    lm, sm, cm = models[be.leaf.model], models[be.spine.model], models[be.core.model]
    hcas = hca_names(cluster)
    ports: dict[str, Ports] = {}
    for m in (lm, sm, cm) if shape.levels == 3 else (lm, sm):
        draft.models[m.name] = m

    def switch(name: str, role: str, model: SwitchModel, zone: int | None, place: tuple[str, int],
               **attrs: int | None) -> Draft:
        node, _ = guids.get(name, (synthetic(name), None))
        d = Draft(name, role, model.name, NOS, zone, place[0], place[1], model.height_ru, power_w=model.power_w,
                  attrs={"guid": guid_text(node), **{k: v for k, v in attrs.items() if v is not None}})
        draft.add(d)
        ports[name] = Ports(name, model)
        return d

    def link(kind: str, south: Draft, north: Draft, medium: str, rack: str, zone: int | None) -> None:
        wire(draft, kind, south, ports[south.name].take(speed), north, ports[north.name].take(speed), speed=speed,
             medium=medium, mtu=mtu, nets=None, net_index=0, rack=rack, zone=zone)

    leaves: dict[tuple[int, int], Draft] = {}
    for z in range(1, shape.sus + 1):
        for r in range(shape.rails):
            leaves[(z, r)] = switch(leaf_name(z, r), "leaf", lm, z, _place(net_rack_name(z, 1 + r // PER_NETWORK_RACK),
                                                                      r, lm), rail=r, su=z)
        for rk in range(1, cluster.racks_per_zone + 1):
            rack = rack_name(z, rk)
            for h in range(1, cluster.hosts_per_rack + 1):
                name = host_name(z, rk, h)
                node = {a: guids.get(hca_node_name(name, a), (synthetic(hca_node_name(name, a)), None)) for a in hcas}
                hd = Draft(name, "host", host.platform, None, z, rack, 1 + (h - 1) * host.height_ru, host.height_ru,
                           power_w=host.power_w,
                           attrs={"gpus": host.gpus, "gpu_model": host.gpu_model, "rack_index": rk,
                                  "hca_guids": {a: guid_text(n) for a, (n, _) in node.items()},
                                  "port_guids": {a: guid_text(_port_guid(n, p, guids)) for a, (n, p) in node.items()}})
                draft.add(hd)
                ports[name] = Ports(name, None, [(a, speed) for a in hcas])
                for r in range(shape.rails):
                    link("host-leaf", hd, leaves[(z, r)], be.leaf.medium_down, rack, z)
    if shape.levels == 2:
        spines = [switch(spine_name(None, None, j), "spine", sm, None, _place("spine-n", j - 1, sm))
                  for j in range(1, shape.spines_per_group + 1)]
        for (z, _), leaf in leaves.items():
            for spine in spines:
                for _ in range(shape.k):
                    link("leaf-spine", leaf, spine, be.spine.medium_down, leaf.rack, z)
        return {zr: (leaf, ports[leaf.name]) for zr, leaf in leaves.items()}
    planes: dict[int, list[Draft]] = {j: [] for j in range(1, shape.spines_per_group + 1)}
    first = 1
    for p, size in enumerate(shape.pod_sizes, start=1):
        for r in range(shape.rails):
            group = [switch(spine_name(p, r, j), "spine", sm, None,
                            _place(f"p{p:02d}-n", r * shape.spines_per_group + j - 1, sm), rail=r, pod=p, plane=j)
                     for j in range(1, shape.spines_per_group + 1)]
            for z in range(first, first + size):
                leaf = leaves[(z, r)]
                leaf.attrs["pod"] = p
                for spine in group:
                    for _ in range(shape.k):
                        link("leaf-spine", leaf, spine, be.spine.medium_down, leaf.rack, z)
            for j, spine in enumerate(group, start=1):
                planes[j].append(spine)
        first += size
    for j, spines in planes.items():
        cores = [switch(core_name(j, i), "core", cm, None,
                        _place("core-n", (j - 1) * shape.cores_per_plane + i - 1, cm), plane=j)
                 for i in range(1, shape.cores_per_plane + 1)]
        turn = 0
        for spine in spines:
            for _ in range(shape.spine_up(shape.pod_sizes[int(spine.attrs["pod"]) - 1])):
                link("spine-core", spine, cores[turn % len(cores)], be.core.medium_down, spine.rack, None)
                turn += 1
    return {zr: (leaf, ports[leaf.name]) for zr, leaf in leaves.items()}


def _port_guid(node: int, port: int | None, guids: dict[str, tuple[int, int | None]]) -> int:
    """Port 1's GUID: the map's, else the node GUID (mapped: ConnectX) or node + 1 (synthetic: as ibsim numbers)."""
    if port is not None:
        return port
    return node if guids else node + 1


def _place(rack: str, index: int, model: SwitchModel) -> tuple[str, int]:
    """Rack and lowest RU of the index-th switch of a row of network racks (`rack` is a name or a prefix)."""
    if rack.endswith("-n"):
        rack = f"{rack}{index // PER_NETWORK_RACK + 1:02d}"
    return rack, 1 + (index % PER_NETWORK_RACK) * model.height_ru
