"""The playbooks pass Ansible's own syntax check and ansible-lint's production profile (offline)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.hosts.harness import PLAYBOOKS, VENV_BIN, env
from teton.targets.ansible.unsafe import unwrap


@pytest.mark.parametrize("build", ["lab_build", "lab_ib_build"])
def test_site_playbook_passes_the_syntax_check(build, request):
    inventory = str(request.getfixturevalue(build) / "ansible/inventory.yml")
    res = subprocess.run([str(VENV_BIN / "ansible-playbook"), "--syntax-check", "-i", inventory,
                          str(PLAYBOOKS / "site.yml")],
                         capture_output=True, text=True, env={**env(), "HOME": "/root"}, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def test_ansible_sees_an_infiniband_clusters_hosts_by_backend(lab_ib_build, lab_ib_fabric):
    res = subprocess.run([str(VENV_BIN / "ansible-inventory"), "-i", str(lab_ib_build / "ansible/inventory.yml"),
                          "--list"], capture_output=True, text=True, env={**env(), "HOME": "/root"}, check=True)
    inv = unwrap(json.loads(res.stdout))
    gpus = sorted(d.name for d in lab_ib_fabric.by_role("host"))
    assert sorted(inv["backend_infiniband"]["hosts"]) == gpus and "backend_roce" not in inv
    host = inv["_meta"]["hostvars"][gpus[0]]
    assert host["teton_backend"] == "infiniband" and host["teton_nccl"]["service_level"] == 0
    assert all("addresses" not in r for r in host["teton_rails"])
    assert sorted(inv["storage_tectonic"]["hosts"]) == sorted(d.name for d in lab_ib_fabric.by_role("storage"))


def test_playbooks_pass_ansible_lint_production_profile():
    res = subprocess.run([str(VENV_BIN / "ansible-lint"), "--offline", "--profile", "production", "--nocolor",
                          "site.yml", "roles", "collections"], cwd=PLAYBOOKS, capture_output=True, text=True,
                         env={**env(), "HOME": "/root"}, check=False, timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "Profile 'production' was required, and it passed" in out
