"""The InfiniBand design: the 24k reference's figures, rail-optimized wiring, GUIDs, fabric.json, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import INVENTORY, ROOT
from teton.cli import main
from teton.design import design
from teton.fabric.serialize import dump_fabric, load_fabric
from teton.pipeline import build, load_and_design
from teton.spec.load import load_spec

LAB_IB = INVENTORY / "lab-ib.yaml"
REF_IB = INVENTORY / "reference-ib-24k.yaml"


@pytest.fixture(scope="module")
def lab_ib():
    return design(load_spec(LAB_IB))


@pytest.fixture(scope="module")
def ref_plan():
    result = CliRunner().invoke(main, ["plan", str(REF_IB), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.scale24k
def test_the_24k_reference_plans_as_published(ref_plan):
    p = ref_plan
    assert (p["backend"], p["gpus"], p["hosts"], p["zones"]) == ("infiniband", 24_576, 3_072, 96)
    assert p["switches"] == {"leaf": 768, "spine": 768, "core": 384} and sum(p["switches"].values()) == 1_920
    assert p["links"]["host-leaf"] == p["links"]["leaf-spine"] == p["links"]["spine-core"] == 24_576  # 73,728 [9]
    assert p["fat_tree"] == {"levels": 3, "full_bisection": True}
    assert p["oversubscription"] == {"leaf": 1.0, "spine": 1.0}
    assert p["injection_tbps"] == 9_830.4 and p["bisection_tbps"] == 4_915.2      # 9.83 / 4.92 Pb/s [section 9]
    assert p["switch_models"]["core"] == {"nvidia-qm9700": 384}


def test_rail_optimized_leaves_and_full_bisection(lab_ib):
    f = lab_ib
    leaf = f.devices["z01-leaf3"]
    down = [i for i in leaf.interfaces if i.direction == "down"]
    up = [i for i in leaf.interfaces if i.direction == "up"]
    # HCA 3 (rail 3) of every node of SU 1, on ports 1-4 in node order, then one link to each of the 4 spines
    assert [(i.name, i.peer, i.peer_port) for i in down] == [
        ("1/1/1", "z01-r001-h1", "mlx5_3"), ("1/1/2", "z01-r001-h2", "mlx5_3"),
        ("1/2/1", "z01-r002-h1", "mlx5_3"), ("1/2/2", "z01-r002-h2", "mlx5_3")]
    assert [i.peer for i in up] == ["spine01", "spine02", "spine03", "spine04"]
    assert leaf.nos == "opensm" and len(leaf.ports) == 64 and leaf.attrs["rail"] == 3
    host = f.devices["z02-r001-h1"]
    assert [(i.name, i.peer) for i in host.interfaces if i.kind == "host-leaf"] == [
        (f"mlx5_{r}", f"z02-leaf{r}") for r in range(8)]
    assert {link.kind for link in f.links} >= {"host-leaf", "leaf-spine"}
    assert all(link.a.ipv4 is None and link.b.ipv6 is None for link in f.links if link.kind == "leaf-spine")


@pytest.mark.scale24k
def test_three_levels_spread_every_spine_over_every_core_of_its_plane():
    f = load_and_design(REF_IB).fabric
    cores = [d for d in f.devices.values() if d.role == "core"]
    assert {len(d.interfaces) for d in cores} == {64}                     # every core fills its ports
    spine = f.devices["p02-rail5-spine07"]
    per_core = Counter(i.peer for i in spine.interfaces if i.direction == "up")
    assert set(per_core) == {f"core07-{c:02d}" for c in range(1, 13)} and set(per_core.values()) == {2, 3}
    leaf = f.devices["z40-leaf5"]                                          # SU 40 is in pod 2
    assert {i.peer for i in leaf.interfaces if i.direction == "up"} == {
        f"p02-rail5-spine{j:02d}" for j in range(1, 33)}
    sm = f.subnet_manager
    assert sm is not None and len(sm.roots) == 384 and sm.roots[0] == "core01-01"
    assert [i.host for i in sm.instances] == ["z01-r001-h1", "z96-r001-h1"]   # an HA pair far apart


def test_guids_are_synthetic_and_stable(lab_ib):
    leaf = lab_ib.devices["z01-leaf0"].attrs["guid"]
    assert leaf.startswith("0x02") and len(leaf) == 18
    again = design(load_spec(LAB_IB))
    assert again.devices["z01-leaf0"].attrs["guid"] == leaf
    hca = lab_ib.devices["z01-r001-h1"].attrs
    assert int(hca["port_guids"]["mlx5_0"], 16) == int(hca["hca_guids"]["mlx5_0"], 16) + 1   # as ibsim numbers


def test_a_guid_map_gives_the_hardware_guids(tmp_path, lab_ib):
    """A node-name-map of real GUIDs: switches and HCAs take them, an HCA's port 1 the node GUID (ConnectX) unless
    the map gives a port GUID."""
    lines = []
    for n, (name, _) in enumerate(sorted(_nodes(lab_ib)), start=1):
        port = " 0x0c42a10300ffff01" if name == "ib-sm1 mlx5_0" else ""        # the master's HCA
        lines.append(f'0x0c42a103{n:08x} "{name}"{port}')
    (tmp_path / "guids.map").write_text("# from the vendor's manifest\n" + "\n".join(lines) + "\n")
    data = yaml.safe_load(LAB_IB.read_text())
    data["backend"]["guid_map"] = "guids.map"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    f = load_and_design(spec).fabric
    assert f.devices["spine01"].attrs["guid"].startswith("0x0c42a103")
    host = f.devices["z01-r002-h1"].attrs
    assert host["port_guids"]["mlx5_2"] == host["hca_guids"]["mlx5_2"]
    assert f.devices["ib-sm1"].attrs["port_guids"]["mlx5_0"] == "0x0c42a10300ffff01"
    assert not f.subnet_manager.synthetic_guids
    out = build(spec, tmp_path / "b").path
    roots = (out / "ib" / "root_guids.conf").read_text()
    assert f.devices["spine03"].attrs["guid"] in roots and "0x02" not in roots.split("\n", 1)[1]
    conf = (out / "ib" / "opensm.conf").read_text()
    assert "guid 0x0c42a10300ffff01" in conf and "SIMULATION BUILD" not in conf


def _nodes(f):
    for d in f.devices.values():
        if "guid" in d.attrs and d.nos == "opensm":
            yield d.name, d.attrs["guid"]
        for hca, g in d.attrs.get("hca_guids", {}).items():
            yield f"{d.name} {hca}", g


def test_fabric_json_reads_back_identically(lab_ib):
    text = dump_fabric(lab_ib)
    assert load_fabric(text) == lab_ib
    assert json.loads(text)["fabric"]["subnet_manager"]["routing_engines"] == ["ftree"]


def test_the_subnet_manager_intent(lab_ib):
    sm = lab_ib.subnet_manager
    assert sm.roots == ("spine01", "spine02", "spine03", "spine04")
    # on the spec's two service hosts of role subnet-manager, each with one HCA on a leaf port of its own
    assert [(i.host, i.hca, i.priority) for i in sm.instances] == [("ib-sm1", "mlx5_0", 15), ("ib-sm2", "mlx5_0", 14)]
    cabled = [(lk.a.device, lk.a.port, lk.b.device, lk.b.port) for lk in lab_ib.links if lk.kind == "service-leaf"]
    assert cabled == [("ib-sm1", "mlx5_0", "z01-leaf0", "1/5/1"), ("ib-sm2", "mlx5_0", "z02-leaf1", "1/5/1")]
    assert (sm.m_key_secret, sm.m_key_protection_level, sm.m_key_lease_period_s) == ("ib_m_key", 2, 60)
    assert sm.synthetic_guids
    (p,) = sm.partitions
    assert (p.name, p.pkey, p.index0) == ("tenant-a", 0x0A01, True) and len(p.members) == 4
    assert sm.default_limited == p.members
    assert sm.qos.sl2vl[:3] == (0, 1, 0) and sm.qos.vlarb_high == ((1, 255),)


def test_ar_ftree_falls_back_to_ftree_and_asks_nccl_for_adaptive_routing(tmp_path):
    data = yaml.safe_load(LAB_IB.read_text())
    data["backend"]["subnet_manager"]["routing_engine"] = "ar_ftree"
    spec = tmp_path / "spec.yaml"
    spec.write_text(yaml.safe_dump(data))
    designed = load_and_design(spec)
    assert [f.rule for f in designed.warnings] == ["routing-engine"]
    assert designed.fabric.subnet_manager.routing_engines == ("ar_ftree", "ftree")
    out = build(spec, tmp_path / "b").path
    assert "routing_engine ar_ftree,ftree\n" in (out / "ib" / "opensm.conf").read_text()
    assert "NCCL_IB_ADAPTIVE_ROUTING=1\n" in (out / "ib" / "nccl.env").read_text()


def test_the_lab_renders_every_file_of_the_subnet_manager(tmp_path):
    out = build(LAB_IB, tmp_path / "b").path
    ib = sorted(p.name for p in (out / "ib").iterdir())
    assert ib == ["nccl.env", "node-name-map", "opensm-standby1.conf", "opensm.conf", "partitions.conf",
                  "root_guids.conf", "topology.net"]
    conf = (out / "ib" / "opensm.conf").read_text()
    assert "sm_key TETON_SECRET_ib_sm_key\n" in conf and "root_guid_file /etc/opensm/root_guids.conf\n" in conf
    assert "NCCL_IB_HCA==mlx5_0:1,mlx5_1:1," in (out / "ib" / "nccl.env").read_text()
    assert max(len(line) for line in (out / "ib" / "partitions.conf").read_text().splitlines()) < 1000
    cabling = (out / "cabling.csv").read_text()
    assert ",z01-r001-h1,mlx5_0,,OSFP,OSFP 4x100G,400G OSFP SR4," in cabling
    assert ",z01-leaf0,1/3/1,3,OSFP,OSFP 4x100G,800G OSFP twin-port 2xDR4," in cabling
    # the front end works as for RoCE: its switches are rendered by their NOS targets
    assert (out / "devices" / "z01-r001-frsw" / "config_db.json").is_file()
    assert not (out / "hosts" / "backend.json").exists()                 # RoCE NIC settings: not for InfiniBand


def _tree(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_rendering_is_byte_identical_across_hash_seeds(tmp_path):
    trees = []
    for seed in ("1", "4242"):
        out = tmp_path / f"seed{seed}"
        run = subprocess.run([sys.executable, "-m", "teton.cli", "render", str(LAB_IB), "-o", str(out)], cwd=ROOT,
                             env={**os.environ, "PYTHONHASHSEED": seed}, capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        trees.append(_tree(out))
    assert trees[0] == trees[1] and any(k.startswith("ib/") for k in trees[0])


def test_the_size_guard_counts_what_the_design_makes(lab_ib):
    from teton.checks.spec_rules import size_terms

    for cluster in (load_spec(LAB_IB), _three_levels()):
        f = lab_ib if cluster.name == "lab-ib" else design(cluster)
        devices, links = size_terms(cluster)
        assert sum(n for _, n, _ in devices) == len(f.devices)
        assert sum(n for _, n, _ in links) == len(f.links)


def _three_levels():
    from teton.spec.model import Cluster

    data = yaml.safe_load(LAB_IB.read_text())
    data.update(name="lab-ib3", zones=6, racks_per_zone=1, hosts_per_rack=2, frontend=None, storage=[])
    data["host"].update(gpus=2, backend_nics=2)
    data["switch_models"] = [{"name": "ib-8", "vendor": "test", "asic": "radix 8", "asic_tbps": 6.4,
                              "port_naming": "ib", "port_groups": [{"count": 8, "speed_gbps": 400, "lanes": 4,
                                                                    "form_factor": "OSFP"}]}]
    data["backend"].update(leaf={"model": "ib-8"}, spine={"model": "ib-8"}, core={"model": "ib-8"}, partitions=[])
    return Cluster.model_validate(data)
