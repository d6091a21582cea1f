"""Scheduler partitions follow the InfiniBand partitions (issue 20): one Slurm partition per P_Key the GPU hosts run
jobs in, and NCCL's P_Key index per host, from one decision (teton.fabric.pkeys).

A job's queue pairs connect only within one P_Key, so `PartitionName=gpu Nodes=ALL` on lab-ib let a job span SU 1
(0x7fff) and SU 2 (tenant-a, 0x0a01) and hang.  tests/hosts/test_slurm.py has slurmctld read these files.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
import yaml

from tests.helpers import INVENTORY
from teton.checks import check_spec
from teton.design import design
from teton.fabric.model import Fabric
from teton.fabric.pkeys import pkey_partitions
from teton.findings import SpecError
from teton.spec.model import Cluster
from teton.targets import RenderContext, get
from teton.targets.ansible import build_documents, check_documents
from teton.targets.opensm.partitions import memberships, parse

CTX = RenderContext(validate=False)


def _lab_ib(partitions: list[dict] | None = None) -> Fabric:
    data = yaml.safe_load((INVENTORY / "lab-ib.yaml").read_text())
    if partitions is not None:
        data["backend"]["partitions"] = partitions
    return design(Cluster.model_validate(data))


def every_su_a_tenant() -> Fabric:
    return _lab_ib([{"name": "tenant-a", "pkey": 0x0A01, "zones": [2]},
                    {"name": "tenant-b", "pkey": 0x0A02, "zones": [1]}])


def _partition_lines(fabric: Fabric) -> list[dict[str, str]]:
    text = get("slurm").render(fabric, CTX)["slurm/slurm.conf"]
    return [dict(re.findall(r"(\w+)=(\S+)", line)) for line in text.splitlines() if line.startswith("PartitionName=")]


def _hosts(fabric: Fabric, zone: int) -> list[str]:
    return [d.name for d in fabric.by_role("host") if d.zone == zone]


def test_one_slurm_partition_per_p_key_with_exactly_its_members(lab_ib_fabric):
    text = get("slurm").render(lab_ib_fabric, CTX)["slurm/slurm.conf"]
    parts = _partition_lines(lab_ib_fabric)
    assert [(p["PartitionName"], p["Nodes"].split(","), p.get("Default")) for p in parts] == [
        ("gpu", _hosts(lab_ib_fabric, 1), "YES"), ("tenant-a", _hosts(lab_ib_fabric, 2), None)]
    assert "# P_Key 0x7fff, the default partition: the 4 GPU hosts of no tenant" in text
    assert "# P_Key 0x0a01, InfiniBand partition tenant-a: its 4 GPU hosts" in text
    assert "Nodes=ALL" not in text


def test_every_su_a_tenant_has_no_empty_default_partition():
    fabric = every_su_a_tenant()
    parts = _partition_lines(fabric)
    assert [(p["PartitionName"], p["Nodes"].split(","), p.get("Default")) for p in parts] == [
        ("tenant-a", _hosts(fabric, 2), "YES"), ("tenant-b", _hosts(fabric, 1), None)]
    env = get("opensm").render(fabric, CTX)["ib/nccl.env"]
    assert "Default 0x7fff" not in env and "NCCL_IB_PKEY=0" in env.splitlines()


def test_a_tenant_with_no_gpu_host_gets_a_comment_not_an_empty_partition():
    fabric = _lab_ib([{"name": "tenant-a", "pkey": 0x0A01, "zones": [2]}, {"name": "idle", "pkey": 0x0A03}])
    text = get("slurm").render(fabric, CTX)["slurm/slurm.conf"]
    assert [p["PartitionName"] for p in _partition_lines(fabric)] == ["gpu", "tenant-a"]
    assert "# P_Key 0x0a03, InfiniBand partition idle: no GPU host, so no Slurm partition" in text


def test_without_tenants_the_one_partition_of_every_node_stays(lab_fabric):
    for fabric in (lab_fabric, _lab_ib([])):
        assert [(p["PartitionName"], p["Nodes"], p["Default"]) for p in _partition_lines(fabric)] == [
            ("gpu", "ALL", "YES")]


def test_nccl_ib_pkey_per_host_is_the_index_of_its_p_key_as_opensm_fills_the_table(lab_ib_fabric):
    """Each GPU host's teton_nccl names its partition, the P_Key its tables hold and its index (NCCL_IB_PKEY); the
    index agrees with partitions.conf read as OpenSM reads it, and with ib/nccl.env."""
    docs = build_documents(lab_ib_fabric)
    assert check_documents(docs) == []
    assert "teton_nccl" not in docs.files["ansible/group_vars/gpu.yml"]     # it differs by partition
    files = get("opensm").render(lab_ib_fabric, CTX)
    sm = lab_ib_fabric.subnet_manager
    ports = {h: lab_ib_fabric.devices[h].attrs["port_guids"] for h in (d.name for d in lab_ib_fabric.by_role("host"))}
    master = sm.instances[0]
    found = memberships(parse(files["ib/partitions.conf"]),
                        lab_ib_fabric.devices[master.host].attrs["port_guids"][master.hca],
                        [g for p in ports.values() for g in p.values()])
    seen = {}
    for d in lab_ib_fabric.by_role("host"):
        n = docs.files[f"ansible/host_vars/{d.name}.json"]["teton_nccl"]
        seen[d.name] = (n["partition"], n["pkey"], n["pkey_index"])
        for g in (f"0x{int(g, 16):016x}" for g in ports[d.name].values()):
            have = {k: m[g] for k, m in found.items() if g in m}      # {P_Key: (full, at index 0)}
            if n["partition"] == "Default":                          # 0x7fff alone in the table: index 0
                assert have == {0x7FFF: (True, False)}
            else:                                                    # the tenant's at index 0, limited in 0x7fff
                assert have == {int(n["pkey"], 16) & 0x7FFF: (True, True), 0x7FFF: (False, False)}
    assert seen == {**{h: ("Default", "0xffff", 0) for h in _hosts(lab_ib_fabric, 1)},
                    **{h: ("tenant-a", "0x8a01", 0) for h in _hosts(lab_ib_fabric, 2)}}
    env = files["ib/nccl.env"]
    assert "#   Default 0x7fff: the 4 hosts of no tenant, 0xffff at index 0" in env
    assert "#   tenant-a 0x0a01: its 4 hosts, 0x8a01 at index 0 (indx0; limited members of 0x7fff)" in env
    assert "NCCL_IB_PKEY=0" in env.splitlines()


def test_a_roce_host_has_no_p_key(lab_fabric):
    nccl = build_documents(lab_fabric).files["ansible/group_vars/gpu.yml"]["teton_nccl"]
    assert not {"partition", "pkey", "pkey_index"} & set(nccl) and pkey_partitions(lab_fabric) == []


def test_a_tenant_partition_without_index0_is_refused_rather_than_guessed(lab_ib_fabric):
    sm = lab_ib_fabric.subnet_manager
    broken = replace(lab_ib_fabric, subnet_manager=replace(sm, partitions=(sm.partitions[0]._replace(index0=False),)))
    with pytest.raises(SpecError) as e:
        pkey_partitions(broken)
    (f,) = e.value.findings
    assert (f.file, f.path) == ("fabric.json", "subnet_manager.partitions[0]") and "indx0" in f.message


def test_a_tenant_named_as_the_schedulers_partition_is_a_finding():
    data = yaml.safe_load((INVENTORY / "lab-ib.yaml").read_text())
    data["backend"]["partitions"][0]["name"] = "gpu"
    found = [f for f in check_spec(Cluster.model_validate(data), "lab-ib.yaml") if f.rule == "partition"]
    assert [f.path for f in found] == ["backend.partitions[0].name"] and "scheduler.partition" in found[0].message
