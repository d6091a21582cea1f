"""The inventory target: groups, variables spelled from the Fabric, JSON Schema and role argument specs, and Ansible's
own inventory tools reading it."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.hosts.harness import VENV_BIN, env, variables
from teton.findings import SpecError
from teton.targets import RenderContext, get
from teton.targets.ansible import build_documents, check_documents
from teton.targets.ansible.unsafe import unwrap


def _inventory(*args: str, build) -> str:
    res = subprocess.run([str(VENV_BIN / "ansible-inventory"), "-i", str(build / "ansible/inventory.yml"), *args],
                         capture_output=True, text=True, env={**env(), "HOME": "/root"}, check=False)
    assert res.returncode == 0, res.stderr
    return res.stdout


def test_ansible_inventory_lists_every_host_with_its_groups_and_variables(lab_build, lab_fabric):
    raw = json.loads(_inventory("--list", build=lab_build))
    # Ansible reads every variable as untrusted (never a template) and prints it marked the same way
    assert raw["_meta"]["hostvars"]["z01-r001-h1"]["teton_rack"] == {"__ansible_unsafe": "z01-r001"}
    assert raw["_meta"]["hostvars"]["z01-r001-h1"]["teton_slurm_files"] == "{{ inventory_dir }}/../slurm"
    data = unwrap(raw)
    hostvars = data["_meta"]["hostvars"]
    gpu = sorted(d.name for d in lab_fabric.by_role("host"))
    storage = sorted(d.name for d in lab_fabric.by_role("storage"))
    assert sorted(data["gpu"]["hosts"]) == gpu
    assert sorted(data["storage_tectonic"]["hosts"]) == [s for s in storage if s.startswith("s1-")]
    assert sorted(data["storage_hammerspace"]["hosts"]) == [s for s in storage if s.startswith("s2-")]
    assert sorted(data["zone_01"]["hosts"]) == [h for h in gpu if h.startswith("z01-")]
    assert sorted(data["rack_z02_r001"]["hosts"]) == ["z02-r001-h1", "z02-r001-h2"]
    assert sorted(data["rails"]["children"]) == [f"rail_{n}" for n in range(8)]
    assert sorted(data["rail_7"]["hosts"]) == gpu
    h = hostvars["z01-r001-h1"]
    assert h["ansible_host"] == "10.192.0.1" and h["teton_cluster"] == "lab"
    assert [r["name"] for r in h["teton_rails"]] == [f"be{n}" for n in range(8)]
    assert h["teton_rails"][1]["table"] == 101 and h["teton_rails"][1]["rule_priority"] == 1001
    assert h["teton_nccl"]["ib_tc"] == 104 and h["teton_qos"]["roce_tos"] == 104        # DSCP 26, PFC only: no ECT
    assert h["teton_rails"][1]["main_metric"] == 101                  # rail 1's main-table routes, behind rail 0's
    nccl = h["teton_nccl"]
    assert nccl["gid_index"] is None and (nccl["roce_version"], nccl["addr_family"], nccl["addr_range"]) == (
        2, "AF_INET", "10.64.0.0/24")                                 # NCCL picks the GID by type and address
    assert nccl["fifo_tc"] == 184                                     # the CTS messages on the control class
    exports = [e["pseudo"] for e in hostvars["s2-r01-sp01"]["teton_storage"]["exports"]]
    assert exports == ["/checkpoints", "/datasets"]                     # the shares, exactly what the clients mount
    assert sorted(m["export"] for m in h["teton_storage_mounts"]["nfs"]) == exports
    assert {m["server"] for m in h["teton_storage_mounts"]["nfs"]} == {hostvars["s2-r01-sp01"]["ansible_host"]}
    # every server of the group serves some hosts: rack 1's second host mounts the second server
    second = hostvars["z01-r001-h2"]["teton_storage_mounts"]["nfs"]
    assert {m["server"] for m in second} == {hostvars["s2-r01-sp02"]["ansible_host"]}
    assert h["teton_storage_mounts"]["tectonic"] == []                 # no Tectonic client named (a warning)
    assert [n["name"] for n in h["teton_frontend"]] == ["fe0", "fe1"]
    assert [n["name"] for n in h["teton_nic_links"]] == [f"be{n}" for n in range(8)] + ["fe0", "fe1"]
    ctl = hostvars["slurmctl"]                                          # a real host: rack, port, address
    assert ctl["teton_role"] == "service" and ctl["teton_rack"] == "svc-r01"
    assert ctl["ansible_host"] == ctl["teton_frontend"][0]["addresses"][0].split("/")[0]
    assert h["teton_scheduler"]["controller_address"] == ctl["ansible_host"]
    graph = _inventory("--graph", build=lab_build)
    assert "@storage_hammerspace:" in graph and "|--z02-r002-h2" in graph


def test_every_host_qos_value_is_its_devices_own_qos_intent(lab_build, lab_fabric):
    """The QoS host variables spell the device's `qos` (the object the switches spell), never a copy of the spec."""
    group = variables(lab_build / "ansible/group_vars/gpu.yml")
    for d in lab_fabric.by_role("host"):
        q = d.qos
        assert q is not None and q is lab_fabric.qos
        v = group["teton_qos"]
        assert (v["lossless_priority"], v["pfc_priorities"], v["roce_dscp"], v["cnp_dscp"], v["cnp_priority"]) == (
            q.lossless_priority, list(q.pfc_priorities), q.roce_dscp, q.cnp_dscp, q.cnp_priority)
        assert v["dscp_to_priority"] == list(q.dscp_to_tc) and v["ecn"] == (q.ecn is not None)
        assert v["pfc_watchdog_ms"] == (q.watchdog.detection_ms if q.watchdog else None)


def test_rendering_twice_is_byte_identical(lab_fabric):
    a = get("ansible").render(lab_fabric, RenderContext())
    b = get("ansible").render(lab_fabric, RenderContext())
    assert a == b and "ansible/host_vars/z02-r002-h2.json" in a and "ansible/group_vars/all.yml" in a


def test_a_variable_outside_the_schema_is_a_finding_naming_file_and_path(lab_fabric):
    docs = build_documents(lab_fabric)
    docs.files["ansible/host_vars/z01-r001-h1.json"]["teton_rails"][0]["mtu"] = 99999
    docs.files["ansible/group_vars/gpu.yml"]["teton_qos"]["roce_dscp"] = 64
    found = check_documents(docs)
    where = {(f.file, f.path) for f in found}
    assert ("ansible/host_vars/z01-r001-h1.json", "teton_rails.0.mtu") in where
    assert ("ansible/group_vars/gpu.yml", "teton_qos.roce_dscp") in where


def test_a_variable_a_role_requires_is_checked_against_its_argument_spec(lab_fabric):
    docs = build_documents(lab_fabric)
    del docs.files["ansible/host_vars/z01-r002-h1.json"]["teton_socket_ifnames"]        # nccl requires it
    docs.files["ansible/group_vars/gpu.yml"]["teton_nccl"]["debug"] = "LOUD"              # not in nccl's choices
    found = check_documents(docs)
    text = "\n".join(f"{f.file} {f.path} {f.message}" for f in found)
    assert "z01-r002-h1.json teton_socket_ifnames" in text
    assert "teton_nccl.debug" in text and "nccl" in text


def test_render_refuses_variables_that_break_a_contract(lab_fabric, monkeypatch):
    from teton.targets import ansible as target

    real = target.build_documents

    def broken(fabric):
        docs = real(fabric)
        docs.files["ansible/group_vars/all.yml"]["teton_scheduler"]["slurmctld_port"] = 0
        return docs

    monkeypatch.setattr(target, "build_documents", broken)
    with pytest.raises(SpecError) as e:
        get("ansible").render(lab_fabric, RenderContext())
    assert any(f.path == "teton_scheduler.slurmctld_port" for f in e.value.findings)


def test_validate_rendered_rechecks_the_written_variables(lab_build, tmp_path):
    import shutil

    from teton.validate.rendered import validate_rendered

    build = tmp_path / "lab"
    shutil.copytree(lab_build, build)
    rel = "ansible/host_vars/z01-r001-h2.json"
    (build / rel).write_text((build / rel).read_text().replace('"teton_socket_ifnames":', '"teton_socket_ifnamez":'))
    found = [f for f in validate_rendered(build, vendor=True) if f.rule == "ansible-vars"]
    assert any(f.file == rel for f in found), found


def test_the_subnet_managers_hosts_are_a_group_each_with_its_instance(lab_ib_build, lab_ib_fabric):
    """Group subnet_manager: the hosts of the subnet manager's instances, each told which conf of ib/ is its own (the
    names the opensm target writes), the HCA port it binds and its priority; the build's ib/ folder for the role."""
    from teton.targets.opensm.files import instance_files

    data = unwrap(json.loads(_inventory("--list", build=lab_ib_build)))
    sm = lab_ib_fabric.subnet_manager
    assert data["subnet_manager"]["hosts"] == [i.host for i in sm.instances]        # master first
    for rel, inst in zip(instance_files(sm), sm.instances, strict=True):
        hv = data["_meta"]["hostvars"][inst.host]
        mine = hv["teton_opensm"]
        assert mine["conf"] == rel.split("/")[1] and (lab_ib_build / rel).is_file()
        lines = (lab_ib_build / rel).read_text().splitlines()
        assert f"guid {mine['port_guid']}" in lines and f"sm_priority {mine['priority']}" in lines
        assert (mine["hca"], mine["port"], mine["priority"]) == (inst.hca, 1, inst.priority)
        assert (mine["config_dir"], mine["log_dir"]) == (sm.config_dir, sm.log_dir)
        assert mine["role"] == ("master" if inst is sm.instances[0] else "standby")
        assert hv["teton_opensm_files"] == "{{ inventory_dir }}/../ib"
    others = set(data["_meta"]["hostvars"]) - {i.host for i in sm.instances}
    assert others and not any("teton_opensm" in data["_meta"]["hostvars"][h] for h in others)


def test_two_subnet_manager_instances_on_one_host_are_refused(lab_ib_fabric):
    from dataclasses import replace
    from types import SimpleNamespace

    sm = lab_ib_fabric.subnet_manager
    twice = replace(sm, instances=(sm.instances[0], sm.instances[0]._replace(hca="mlx5_1", priority=14)))
    found = list(get("ansible").check(SimpleNamespace(subnet_manager=twice), "lab-ib.yaml"))
    assert [(f.file, f.path) for f in found] == [("lab-ib.yaml", "backend.subnet_manager")]
    assert f"both on host {sm.instances[0].host!r}" in found[0].message


def test_a_subnet_manager_hosts_variables_are_checked_against_the_schema_and_the_opensm_role(lab_ib_fabric):
    master, standby = (i.host for i in lab_ib_fabric.subnet_manager.instances)
    docs = build_documents(lab_ib_fabric)
    docs.files[f"ansible/host_vars/{master}.json"]["teton_opensm"]["priority"] = 16        # sm_priority is 0..15
    del docs.files[f"ansible/host_vars/{standby}.json"]["teton_opensm"]                    # the opensm role needs it
    text = "\n".join(f"{f.file} {f.path} {f.message}" for f in check_documents(docs))
    assert f"{master}.json teton_opensm.priority" in text
    assert f"{standby}.json teton_opensm {standby} has no variable 'teton_opensm' (needed by a role it runs)" in text
