"""OpenSM's live transport (InfiniBand): the subnet manager's files to each subnet manager host over SSH
(`teton.targets.ssh`; master first), then its OpenSM restarted there.  Registered by the package for deploy mode `live`
under the NOS `opensm` (`teton.targets.transports`); the provider's `teton:index:SubnetManager` resource calls
`push(hosts, config_dir, files, hcas)` with the files resolved.  Secret `ssh_user` (admin).

It installs what the `opensm` role installs (playbooks/roles/opensm), so a deploy and a playbook run leave a host the
same: the shared files (partitions, root GUIDs, node names), the host's own instance file as `opensm.conf` (instance
k of `hosts` runs `opensm-standby<k>.conf`), mode 0600 as it holds the keys, then a restart of the role's unit on
the host's HCA port, `opensm-<hca>-1.service`.  Not exercised against a subnet manager here (tests/ib runs the same
files with OpenSM over ibsim; tests/targets/test_ssh_transports.py runs this against a stand-in `ssh`)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence

from teton.targets.base import Files
from teton.targets.opensm.files import instance_file
from teton.targets.ssh import Ssh
from teton.targets.transports import TransportSettings

SHARED = ("ib/partitions.conf", "ib/root_guids.conf", "ib/node-name-map")


class SubnetManagerSsh:
    """Each host's files into `config_dir`, in the order given, and its OpenSM restarted."""

    def __init__(self, secrets: Mapping[str, str], user: str = "admin", ssh: tuple[str, ...] = ("ssh",)):
        self.secrets = dict(secrets)
        self.ssh = Ssh(user, self.secrets, ssh)

    def push(self, hosts: list[str], config_dir: str, files: Files, hcas: Sequence[str] = ()) -> None:
        for k, host in enumerate(hosts):
            own = instance_file(k)
            if own not in files:
                raise ValueError(f"{host}: no {own} among the subnet manager's files")
            for rel, name, mode in [(r, r.split("/", 1)[1], "0644") for r in SHARED if r in files] + [
                    (own, "opensm.conf", "0600")]:
                target = shlex.quote(f"{config_dir}/{name}")
                cmd = (f"sudo install -d -m 0755 {shlex.quote(config_dir)} && sudo install -m {mode} /dev/null "
                       f"{target} && sudo tee {target} >/dev/null")
                self.ssh.run(host, cmd, files[rel], timeout=120, what=f"writing {name}")
            unit = f"opensm-{hcas[k] if k < len(hcas) else 'mlx5_0'}-1.service"
            self.ssh.run(host, f"sudo systemctl restart {shlex.quote(unit)}", timeout=120,
                         what=f"restarting {unit}")


def live_transport(s: TransportSettings) -> SubnetManagerSsh:
    """The `live` factory: the SSH user from the secrets."""
    return SubnetManagerSsh(s.secrets, user=s.secrets.get("ssh_user", "admin"))
