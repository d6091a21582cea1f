"""The playbooks pass Ansible's own syntax check and ansible-lint's production profile (offline)."""

from __future__ import annotations

import subprocess

from tests.hosts.harness import PLAYBOOKS, VENV_BIN, env


def test_site_playbook_passes_the_syntax_check(lab_build):
    res = subprocess.run([str(VENV_BIN / "ansible-playbook"), "--syntax-check", "-i",
                          str(lab_build / "ansible/inventory.yml"), str(PLAYBOOKS / "site.yml")],
                         capture_output=True, text=True, env={**env(), "HOME": "/root"}, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def test_playbooks_pass_ansible_lint_production_profile():
    res = subprocess.run([str(VENV_BIN / "ansible-lint"), "--offline", "--profile", "production", "--nocolor",
                          "site.yml", "roles", "collections"], cwd=PLAYBOOKS, capture_output=True, text=True,
                         env={**env(), "HOME": "/root"}, check=False, timeout=600)
    out = res.stdout + res.stderr
    assert res.returncode == 0, out
    assert "Profile 'production' was required, and it passed" in out
