"""SONiC's live transport over SSH (`teton.targets.ssh`, key-based): config_db.json by `config replace`, frr.conf
by frr-reload in the bgp container; and what a switch shows, read for `teton verify live` (`Reader`): FRR's
Established peers and the installed next hops of a route (vtysh's JSON), LLDP from lldpd in the lldp container
(`lldpctl -f json`).  Registered by the package for deploy mode `live` (`teton.targets.transports`);
secret `ssh_user` (admin).  Not exercised against a switch here (no SONiC runs on this machine): the twin runs the
same frr.conf, and tests/targets/test_ssh_transports.py runs it against a stand-in `ssh`."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping
from typing import Any

from teton.buildfolder import device_path
from teton.findings import TetonError
from teton.frr import vtysh
from teton.frr.vty import established_peers, route_nexthops
from teton.secrets import mask
from teton.targets.ssh import Ssh
from teton.targets.transports import Device, TransportSettings, live_check, resolve_files

RUNNING_FRR = "sudo vtysh -c 'show running-config'"
BGP_SUMMARY = "sudo vtysh -c 'show bgp summary json'"
LLDP = "docker exec lldp lldpctl -f json"


def route_command(prefix: str) -> str:
    """vtysh's JSON of the route to `prefix` (`ipaddress` spells it: no quoting needed)."""
    return f"sudo vtysh -c 'show {'ipv6' if ':' in prefix else 'ip'} route {ipaddress.ip_network(prefix)} json'"


class SonicSshTransport:
    """SONiC over SSH: what a switch runs is its config_db and its FRR running config."""

    def __init__(self, secrets: Mapping[str, str], user: str = "admin", ssh: tuple[str, ...] = ("ssh",)):
        self.secrets = dict(secrets)
        self.ssh = Ssh(user, self.secrets, ssh)

    def _run(self, device: Device, command: str, stdin: str | None = None) -> str:
        return self.ssh.run(device.management_host(), command, stdin, who=device.name)

    def snapshot(self, device: Device) -> tuple[str, str]:
        return (self._run(device, "sudo show runningconfiguration all"),
                vtysh.strip_header(self._run(device, RUNNING_FRR)))

    def _apply(self, device: Device, config_db: str, frr_conf: str) -> None:
        self._run(device, "umask 077 && cat > /tmp/teton-config_db.json", config_db)
        self._run(device, "sudo config replace /tmp/teton-config_db.json && rm -f /tmp/teton-config_db.json")
        self._run(device, "sudo tee /etc/sonic/frr/frr.conf >/dev/null", frr_conf)
        self._run(device, "docker exec bgp /usr/lib/frr/frr-reload.py --reload /etc/frr/frr.conf")

    def push(self, device: Device) -> None:
        files = resolve_files(device.nos, device.build_files(), self.secrets)
        self._apply(device, files[device_path(device.name, "config_db.json")],
                    files[device_path(device.name, "frr.conf")])

    def restore(self, device: Device, snapshot: Any) -> None:
        config_db, frr_conf = snapshot
        self._apply(device, config_db, frr_conf)

    def check(self, device: Device, timeout: float) -> list[str]:
        return live_check(device, lambda: len(self.established_peers(device)), timeout)

    def established_peers(self, device: Device) -> frozenset[str]:
        return frozenset(established_peers(self._json(device, BGP_SUMMARY)))

    def nexthops(self, device: Device, prefix: str) -> int:
        return route_nexthops(self._json(device, route_command(prefix)), str(ipaddress.ip_network(prefix)))

    def lldp(self, device: Device) -> Any:
        return self._json(device, LLDP)

    def _json(self, device: Device, command: str) -> dict[str, Any]:
        try:
            answer = json.loads(self._run(device, command) or "{}")
        except ValueError:
            raise TetonError(f"{device.name}: `{command}` did not answer JSON") from None
        if not isinstance(answer, dict):
            raise TetonError(f"{device.name}: `{command}` did not answer a JSON object")
        return answer

    def drift(self, device: Device) -> list[str]:
        files = resolve_files(device.nos, device.build_files(), self.secrets)
        running = vtysh.strip_header(self._run(device, RUNNING_FRR))
        d = vtysh.delta(running, files[device_path(device.name, "frr.conf")], hostname=device.name)
        return [mask(x, self.secrets.items()) for x in d.lines()]


def live_transport(s: TransportSettings) -> SonicSshTransport:
    """The `live` factory: the SSH user from the secrets."""
    return SonicSshTransport(s.secrets, user=s.secrets.get("ssh_user", "admin"))
