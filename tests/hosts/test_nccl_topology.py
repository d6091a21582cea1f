"""The NCCL topology XML of a Grand Teton host (playbooks/roles/nccl/templates/topo.xml.j2), rendered from the build's
GPU-NIC pairing without a host: each CPU with its PCIe switches, each switch with its two GPUs and their paired NICs
(GPU n with rail n's NIC, on switch n // 2, switches 0-1 on CPU 0), and nccl.conf's NCCL_TOPO_FILE naming the file
the role writes.  The role itself runs in tests/hosts/test_roles.py (root), which checks the same on the host's
files."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import jinja2
import pytest
import yaml

from tests.hosts.harness import PLAYBOOKS, variables

ROLE = PLAYBOOKS / "roles" / "nccl"
GPU_BUS = {str(n): f"0000:{0x18 + 0x20 * n:02x}:00.0" for n in range(8)}
NIC_BUS = {f"mlx5_{n}": f"0000:{0x19 + 0x20 * n:02x}:00.0" for n in range(8)}


def _topology(host_vars: dict) -> ET.Element:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(ROLE / "templates")), undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    rails = host_vars["teton_rails"]
    text = env.get_template("topo.xml.j2").render(
        ansible_managed="managed", teton_device=host_vars["teton_device"], teton_rails=rails,
        nccl_bus_ids={"gpus": GPU_BUS, "rdma": NIC_BUS},
        nccl_rail_rdma={r["name"]: f"mlx5_{r['rail']}" for r in rails})
    return ET.fromstring(text)


@pytest.mark.parametrize("variant", ["lab_build", "lab_ib_build"])
def test_grand_teton_topology_pairs_each_gpu_with_its_nic_under_one_pcie_switch(variant, request):
    build = request.getfixturevalue(variant)
    host_vars = variables(build / "ansible/host_vars/z01-r001-h1.json")
    rails = host_vars["teton_rails"]
    assert [(r["rail"], r["gpu"], r["pcie_switch"], r["numa"]) for r in rails] == [
        (n, n, n // 2, n // 4) for n in range(8)]                                    # Grand Teton's pairing
    topo = _topology(host_vars)
    assert topo.tag == "system" and [c.get("numaid") for c in topo.findall("cpu")] == ["0", "1"]
    for cpu in topo.findall("cpu"):
        switches = cpu.findall("pci")
        assert len(switches) == 2 and all(s.get("class") == "0x060400" for s in switches)   # 2 PCIe switches a CPU
        for sw in switches:
            n = int(sw.get("busid").split(":")[2].split(".")[0], 16)
            assert n // 2 == int(cpu.get("numaid"))
            assert [(k.get("class"), k.get("busid")) for k in sw] == [
                ("0x030200", GPU_BUS[str(2 * n)]), ("0x020700", NIC_BUS[f"mlx5_{2 * n}"]),
                ("0x030200", GPU_BUS[str(2 * n + 1)]), ("0x020700", NIC_BUS[f"mlx5_{2 * n + 1}"])]


def test_nccl_conf_points_nccl_at_the_topology_the_role_writes():
    defaults = yaml.safe_load((ROLE / "defaults/main.yml").read_text())
    tasks = yaml.safe_load((ROLE / "tasks/main.yml").read_text())
    write = next(t for t in tasks if t.get("ansible.builtin.template", {}).get("src") == "topo.xml.j2")
    assert write["ansible.builtin.template"]["dest"] == "{{ nccl_topo_file }}" and write["when"] == \
        "nccl_topology_ready"
    assert defaults["nccl_topo_file"] == "/etc/nccl/topo.xml"
    conf = (ROLE / "templates/nccl.conf.j2").read_text()
    assert "{% if nccl_topology_ready %}\nNCCL_TOPO_FILE={{ nccl_topo_file }}\n{% endif %}" in conf
