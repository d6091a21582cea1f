"""`slurm/topology.yaml`: the cluster's named topologies for Slurm >= 25.05, beside `topology.conf` for older ones.

Slurm 25.05 reads `topology.yaml` when it sits beside slurm.conf and then ignores `topology.conf` (and slurm.conf's
`TopologyPlugin`); older Slurm never reads it and goes on with `topology.conf`.  So one folder serves both, and the
tree is the same in each:

- `tree` (`topology/tree`, the cluster's default): the switches of `topology.conf`, each switch and node once.
- `zones` (`topology/block`): one block per AI zone (RoCE) or scalable unit (InfiniBand), the nodes of the zone, so a
  partition with `Topology=zones` packs a job into as few zones as it fits in.  The base block size
  (`block_sizes[0]`) is the zone's node count (the smallest zone's, when zones differ: slurmctld refuses a block with
  fewer nodes than the base size); the larger sizes are the zone count's powers of two (2, 4 ... zones), the first at
  or above the cluster's zone count ending the list, as slurmctld requires each size to be the base times a power of
  two.

Every name is a token (`teton.targets.tokens`) and written double-quoted, so YAML never reads one as a number or a
boolean.  Slurm's own topology.yaml(5) is the format: `topology`, `cluster_default`, then `tree.switches[]`
(`switch`, `children` or `nodes`) or `block.block_sizes` and `block.blocks[]` (`block`, `nodes`).
"""

from __future__ import annotations

from typing import Any

from teton.fabric.model import Fabric
from teton.targets.templates import Templates
from teton.targets.tokens import token

TEMPLATES = Templates.beside(__file__)
TREE = "tree"        # the topology names a partition's Topology= takes
BLOCK = "zones"


def zone_blocks(fabric: Fabric) -> list[dict[str, Any]]:
    """One block per zone with a GPU host: its name (`zNN`, as topology.conf's zone switches) and its nodes."""
    zones: dict[int, list[str]] = {}
    for d in fabric.by_role("host"):
        zones.setdefault(d.zone or 0, []).append(d.name)
    return [{"name": f"z{z:02d}", "nodes": nodes} for z, nodes in sorted(zones.items())]


def block_sizes(blocks: list[dict[str, Any]]) -> list[int]:
    """The base block size (the smallest zone's node count) and its power-of-two multiples up to the zone count."""
    if not blocks:
        return []
    base = min(len(b["nodes"]) for b in blocks)
    sizes = [base]
    while sizes[-1] < base * len(blocks):
        sizes.append(sizes[-1] * 2)
    return sizes


def topology_yaml(fabric: Fabric, cluster: str, racks: list[dict[str, Any]], zones: list[dict[str, Any]],
                  top: str) -> str:
    """The text of topology.yaml from topology.conf's tree (`teton.targets.slurm.topology`) and the fabric's zones."""
    switches: list[dict[str, Any]] = [{"switch": r["name"], "nodes": r["nodes"]} for r in racks]
    switches += [{"switch": z["name"], "children": z["switches"]} for z in zones]
    switches.append({"switch": top, "children": [x["name"] for x in (zones or racks)]})
    for s in switches:
        for name in (s["switch"], *s.get("nodes", ()), *s.get("children", ())):
            token(name, s["switch"], "name", "topology.yaml")
    blocks = zone_blocks(fabric)
    sizes = block_sizes(blocks)
    uneven = len({len(b["nodes"]) for b in blocks}) > 1
    return TEMPLATES.render("topology.yaml.j2", cluster=cluster, switches=switches, blocks=blocks, sizes=sizes,
                            uneven=uneven, tree=TREE, block=BLOCK, backend=fabric.backend)
