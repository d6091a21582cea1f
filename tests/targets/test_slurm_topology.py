"""slurm/topology.yaml (Slurm >= 25.05): it parses as YAML, holds the tree of topology.conf and one block per AI zone,
lists every GPU host exactly once per topology, and its base block size is the zones' node count.  slurmctld itself
reads topology.conf in tests/hosts/test_slurm.py (and topology.yaml there too when the installed Slurm is >= 25.05)."""

from __future__ import annotations

import re
from collections import Counter

import pytest
import yaml

from teton.fabric.model import Fabric
from teton.targets.base import RenderContext
from teton.targets.slurm import TARGET
from teton.targets.slurm.topology_yaml import block_sizes


def _files(fabric: Fabric) -> dict[str, str]:
    return TARGET.render(fabric, RenderContext())


def _conf_tree(text: str) -> dict[str, tuple[str, list[str]]]:
    """topology.conf: {switch: ("nodes" or "switches", its children)}."""
    tree = {}
    for line in text.splitlines():
        m = re.fullmatch(r"SwitchName=(\S+) (Nodes|Switches)=(\S+)", line)
        if m:
            tree[m[1]] = ("nodes" if m[2] == "Nodes" else "children", m[3].split(","))
    return tree


def _check(fabric: Fabric) -> dict:
    files = _files(fabric)
    doc = yaml.safe_load(files["slurm/topology.yaml"])
    hosts = sorted(d.name for d in fabric.by_role("host"))
    assert [t["topology"] for t in doc] == ["tree", "zones"]
    tree, block = doc
    assert tree["cluster_default"] is True and block["cluster_default"] is False
    assert set(tree) == {"topology", "cluster_default", "tree"} and set(block) == {"topology", "cluster_default",
                                                                                  "block"}
    # the tree: topology.conf's, switch for switch
    switches = {s["switch"]: ("nodes" if "nodes" in s else "children", s.get("nodes", s.get("children")).split(","))
                for s in tree["tree"]["switches"]}
    assert len(switches) == len(tree["tree"]["switches"])
    assert switches == _conf_tree(files["slurm/topology.conf"])
    leaves = [n for kind, kids in switches.values() if kind == "nodes" for n in kids]
    assert sorted(leaves) == hosts and len(leaves) == len(set(leaves))             # every host once
    children = Counter(k for kind, kids in switches.values() if kind == "children" for k in kids)
    assert set(children.values()) == {1} and set(children) == set(switches) - {tree["tree"]["switches"][-1]["switch"]}
    # the blocks: one per zone, every host once, the base size the zone's node count
    blocks = block["block"]["blocks"]
    in_blocks = [n for b in blocks for n in b["nodes"].split(",")]
    assert sorted(in_blocks) == hosts and len(in_blocks) == len(set(in_blocks))
    zones: dict[str, list[str]] = {}
    for d in fabric.by_role("host"):
        zones.setdefault(f"z{d.zone:02d}", []).append(d.name)
    assert {b["block"]: b["nodes"].split(",") for b in blocks} == zones
    sizes = block["block"]["block_sizes"]
    assert sizes[0] == min(len(v) for v in zones.values())
    assert all(b == sizes[0] * 2 ** i for i, b in enumerate(sizes))                  # slurmctld: base x 2^k
    assert sizes[-1] >= sizes[0] * len(zones) and (len(sizes) == 1 or sizes[-2] < sizes[0] * len(zones))
    assert "Slurm >= 25.05" in files["slurm/topology.yaml"] and "Slurm >= 25.05" in files["slurm/topology.conf"]
    return doc


def test_roce_lab_topology_yaml_is_the_tree_and_one_block_per_zone(lab_fabric):
    doc = _check(lab_fabric)
    assert doc[1]["block"]["block_sizes"] == [4, 8]                                   # 2 racks x 2 hosts, 2 zones
    assert [s["switch"] for s in doc[0]["tree"]["switches"]][-3:] == ["z01", "z02", "lab"]


def test_infiniband_lab_blocks_are_its_scalable_units(lab_ib_fabric):
    doc = _check(lab_ib_fabric)
    su = Counter(d.zone for d in lab_ib_fabric.by_role("host"))
    assert doc[1]["block"]["block_sizes"][0] == min(su.values())


def test_three_level_infiniband_tree_goes_through_the_pods():
    from tests.design.test_infiniband import _three_levels
    from teton.design import design

    fabric = design(_three_levels())
    doc = _check(fabric)
    assert any(s["switch"].startswith("p") for s in doc[0]["tree"]["switches"])
    assert doc[1]["block"]["block_sizes"] == [2, 4, 8, 16]                             # 6 SUs of 2 hosts


def test_block_sizes_end_at_the_first_power_of_two_covering_every_zone():
    def blocks(*counts: int) -> list[dict]:
        return [{"name": f"z{i:02d}", "nodes": [f"n{i}-{j}" for j in range(c)]} for i, c in enumerate(counts)]

    assert block_sizes([]) == []
    assert block_sizes(blocks(384)) == [384]
    assert block_sizes(blocks(*[384] * 8)) == [384, 768, 1536, 3072]
    assert block_sizes(blocks(4, 4, 4)) == [4, 8, 16]
    assert block_sizes(blocks(4, 3)) == [3, 6]                  # a smaller zone sets the base (slurmctld's rule)


def test_a_name_that_is_no_token_is_refused(lab_fabric):
    from teton.findings import SpecError
    from teton.targets.slurm.topology_yaml import topology_yaml

    with pytest.raises(SpecError, match="topology.yaml"):
        topology_yaml(lab_fabric, "lab", [{"name": 'r"1', "nodes": ["h1"]}], [], "lab")


@pytest.mark.scale24k
def test_the_24k_reference_has_eight_zones_of_384_nodes(roce24k):

    doc = _check(roce24k.fabric)
    assert doc[1]["block"]["block_sizes"] == [384, 768, 1536, 3072]
    assert len(doc[1]["block"]["blocks"]) == 8
