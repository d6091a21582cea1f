"""A server's live transport, for `teton verify live` only (`Pinger`): a ping run on the server over SSH
(`teton.targets.ssh`, key-based), from one of its addresses to another server's (a same-rail pair's NICs, a GPU
host's front end to a storage server).  A host is reached at its first front-end address, as Ansible reaches it
(`ansible_host`).  Registered by the package for deploy mode `live` under the name `host` (servers run no NOS teton
renders); secret `ssh_user` (admin).

Not exercised against a server here: tests/targets/test_host_transport.py runs it against the SSH transports'
stand-in `ssh`; the twin's servers are pinged in their namespaces (`teton.deploy.transports.TwinTransport`).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping

from teton.findings import TetonError
from teton.targets.ssh import Ssh
from teton.targets.transports import Device, TransportSettings

PING = "ping -c 1 -W 1 -I {src} {dst} >/dev/null 2>&1; echo $?"    # iputils: 0 answered, 1 no answer, 2 an error


class HostSsh:
    """Servers over SSH: pings."""

    def __init__(self, secrets: Mapping[str, str], user: str = "admin", ssh: tuple[str, ...] = ("ssh",)):
        self.ssh = Ssh(user, dict(secrets), ssh)

    def reaches(self, host: Device, src: str, dst: str) -> bool:
        command = PING.format(src=ipaddress.ip_address(src), dst=ipaddress.ip_address(dst))
        status = self.ssh.run(host.management_host(), command, timeout=30, who=host.name, what="ping").strip()
        if status not in ("0", "1"):
            raise TetonError(f"{host.name}: ping from {src} to {dst} could not run (ping's status {status or '?'})")
        return status == "0"


def live_transport(s: TransportSettings) -> HostSsh:
    """The `live` factory: the SSH user from the secrets."""
    return HostSsh(s.secrets, user=s.secrets.get("ssh_user", "admin"))
