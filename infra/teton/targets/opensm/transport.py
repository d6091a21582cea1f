"""OpenSM's live transport (InfiniBand): the subnet manager's files to each subnet manager host over SSH
(`teton.targets.ssh`; master first), then OpenSM restarted there.  Registered by the package for deploy mode `live`
under the NOS `opensm` (`teton.targets.transports`); the provider's `teton:index:SubnetManager` resource calls
`push(hosts, config_dir, files)` with the files resolved.  Secret `ssh_user` (admin).  Not exercised against a
subnet manager here (tests/ib runs the same files with OpenSM over ibsim; tests/targets/test_ssh_transports.py runs
this against a stand-in `ssh`)."""

from __future__ import annotations

import shlex
from collections.abc import Mapping

from teton.targets.base import Files
from teton.targets.ssh import Ssh
from teton.targets.transports import TransportSettings


class SubnetManagerSsh:
    """The `ib/` files into `config_dir` on each host, in the order given, and OpenSM restarted on each."""

    def __init__(self, secrets: Mapping[str, str], user: str = "admin", ssh: tuple[str, ...] = ("ssh",)):
        self.secrets = dict(secrets)
        self.ssh = Ssh(user, self.secrets, ssh)

    def push(self, hosts: list[str], config_dir: str, files: Files) -> None:
        for host in hosts:
            for rel, text in sorted(files.items()):
                target = shlex.quote(f"{config_dir}/{rel.split('/', 1)[1]}")
                cmd = f"sudo install -d -m 0755 {shlex.quote(config_dir)} && umask 077 && sudo tee {target} >/dev/null"
                self.ssh.run(host, cmd, text, timeout=120, what=f"writing {rel}")
            self.ssh.run(host, "sudo systemctl restart opensm", timeout=120, what="restarting opensm")


def live_transport(s: TransportSettings) -> SubnetManagerSsh:
    """The `live` factory: the SSH user from the secrets."""
    return SubnetManagerSsh(s.secrets, user=s.secrets.get("ssh_user", "admin"))
