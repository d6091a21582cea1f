"""A rack of hosts: its hosts' variables from the build, applied by the host playbooks, one rack at a time.

- live: ansible-runner runs `playbooks/site.yml` over the build's inventory (`ansible/inventory.yml`), limited to
  the rack's group (`rack_z01_r001`); secrets reach the roles as `TETON_SECRET_<name>` environment variables of that
  run only (`suppress_env_files`, so nothing is written to the runner's folder).  A failed host fails the rack.
- twin: the twin's hosts are network namespaces without a root file system for the playbooks to configure; their
  rails and front-end NICs were set from the build at `teton twin up`.  The rack resource checks that every rail and
  front-end address of its hosts' variables is on the host's namespace, and fails when one is missing (a build whose
  host addressing changed needs a new twin).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from teton.findings import TetonError
from teton.secrets import PREFIX
from teton.targets.ansible.unsafe import unwrap


@dataclass(frozen=True)
class HostRack:
    rack: str
    hosts: list[str]
    files: dict[str, str]        # "ansible/host_vars/<host>.json" -> text
    build: str
    playbooks: str               # folder holding site.yml

    @property
    def group(self) -> str:
        return "rack_" + self.rack.replace("-", "_")


class TwinHosts:
    def __init__(self, twin: str):
        from teton.twin.service import load_twin

        self.twin = load_twin(twin)

    def apply(self, rack: HostRack) -> None:
        problems = []
        for host in rack.hosts:
            rel = f"ansible/host_vars/{host}.json"
            variables = unwrap(json.loads(rack.files.get(rel, "{}")))
            want = {a for nic in (*variables.get("teton_rails", []), *variables.get("teton_frontend", []))
                    for a in nic.get("addresses", [])}
            try:
                ns = self.twin.netns(host)
            except Exception:   # noqa: BLE001
                problems.append(f"{host} is not a host of the twin")
                continue
            out = subprocess.run(["ip", "-n", ns, "-j", "addr", "show"], capture_output=True, text=True, check=False)
            have = {f"{a['local']}/{a['prefixlen']}" for link in json.loads(out.stdout or "[]")
                    for a in link.get("addr_info", [])}
            if missing := sorted(want - have):
                problems.append(f"{host}: addresses not on the twin host: {', '.join(missing[:4])}")
        if problems:
            raise TetonError(f"rack {rack.rack}: " + "; ".join(problems[:6]))


class AnsibleHosts:
    def __init__(self, secrets: Mapping[str, str]):
        self.secrets = dict(secrets)

    def apply(self, rack: HostRack) -> None:
        import ansible_runner

        inventory = Path(rack.build) / "ansible" / "inventory.yml"
        playbook = Path(rack.playbooks) / "site.yml"
        if not inventory.is_file() or not playbook.is_file():
            raise TetonError(f"rack {rack.rack}: needs {inventory} and {playbook}")
        venv_bin = str(Path(sys.executable).parent)
        env = {"PATH": f"{venv_bin}:{os.environ.get('PATH', '/usr/bin:/bin')}",
               "ANSIBLE_COLLECTIONS_PATH": f"{Path(rack.playbooks) / 'collections'}:"
                                           f"{Path.home() / '.cache/teton/ansible/collections'}",
               **{PREFIX + k: v for k, v in self.secrets.items()}}
        work = tempfile.mkdtemp(prefix="teton-ansible-")
        try:
            r = ansible_runner.run(private_data_dir=work, playbook=str(playbook), inventory=str(inventory),
                                   limit=rack.group, envvars=env, suppress_env_files=True, quiet=True,
                                   project_dir=str(Path(rack.playbooks)))
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if r.rc != 0:
            failed = sorted((r.stats or {}).get("failures", {}) | (r.stats or {}).get("dark", {}))
            raise TetonError(f"rack {rack.rack}: playbooks failed (rc {r.rc}, status {r.status}) on "
                             f"{', '.join(failed) or 'no host reported'}")


def host_transport(how: str, twin: str, secrets: Mapping[str, str]) -> TwinHosts | AnsibleHosts:
    if how == "twin":
        return TwinHosts(twin)
    if how == "live":
        return AnsibleHosts(secrets)
    raise TetonError(f"transport {how!r}: use 'twin' or 'live'")
