"""Transports: how a switch's rendered files reach it, behind one interface, per target and NOS.

A transport takes a `Device` (its name, NOS, management address and its files as rendered, with secret references)
and the secrets, and knows how to
  - `snapshot` what the device runs now (to roll back to),
  - `push` the files, resolved as its NOS expects (`teton.deploy.push.resolve_files`),
  - `check` its health after a push (sessions up, routes present): a list of problems, empty when healthy,
  - `restore` a snapshot,
  - `drift`: what the device runs that differs from its files (lines; secret values masked).

| target | NOS | transport |
| --- | --- | --- |
| twin | sonic | the switch's frr.conf into its twin FRR with frr-reload (`teton.frr.vtysh`) |
| twin | eos | the FRR spelling of the routing read back from its structured config (what the twin runs for EOS) |
| live | eos | eAPI JSON-RPC over HTTPS: a configure session replaced with the startup-config, then commit or abort |
| live | sonic | SSH: `config replace` of config_db.json and frr-reload of frr.conf in the bgp container |
| live | opensm | SSH: the subnet manager's files to its hosts, OpenSM restarted (InfiniBand) |

Snapshots hold resolved text and live only in the provider's memory.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from teton import targets
from teton.buildfolder import device_path
from teton.deploy.push import resolve_files
from teton.expect import NO_FAILURES, PingProbe, Promise, Sampling, promise, wait_until_kept
from teton.fabric.model import Fabric
from teton.findings import TetonError
from teton.frr import vtysh as frr_push
from teton.frr.vty import established_peers
from teton.secrets import resolve
from teton.targets import BuildFiles, Files


@dataclass(frozen=True)
class Device:
    name: str
    nos: str
    files: Files                        # relative to the device's folder ("frr.conf"), with secret references
    mgmt: str | None = None             # management address (live transports)
    fabric: Fabric | None = field(default=None, compare=False)   # the build's Fabric (expectations, EOS on the twin)

    def build_files(self) -> Files:
        return {device_path(self.name, k): v for k, v in self.files.items()}


class Transport(Protocol):
    def snapshot(self, device: Device) -> Any: ...
    def push(self, device: Device) -> None: ...
    def check(self, device: Device, timeout: float) -> list[str]: ...
    def restore(self, device: Device, snapshot: Any) -> None: ...
    def drift(self, device: Device) -> list[str]: ...


# ------------------------------------------------------------------------------------------------------ the twin

def twin_frr_conf(device: Device) -> str:
    """What the twin runs for `device` (secret references unresolved): a SONiC switch's own frr.conf; for a NOS
    that cannot run here, the FRR spelling of the routing its files read back into (as `teton twin up` does)."""
    from teton.twin.artifacts import switch_frr_conf

    target = targets.nos_target(device.nos)
    if target is None or device.fabric is None:
        raise TetonError(f"{device.name}: no target for NOS {device.nos!r} or no fabric")
    view, findings = target.read_device(BuildFiles(files=device.build_files()),      # type: ignore[attr-defined]
                                        device.fabric.devices[device.name], None)
    if view is None:
        raise TetonError(f"{device.name}: its files cannot be read back: {'; '.join(map(str, findings))}")
    return switch_frr_conf(view, device.fabric)


class TwinTransport:
    """The digital twin named `twin` (`teton twin up`): one FRR per switch in a network namespace."""

    def __init__(self, twin: str, secrets: Mapping[str, str]):
        from teton.twin.service import load_twin

        self.name = twin
        self.secrets = dict(secrets)
        self.twin = load_twin(twin)

    def _dir(self, device: Device) -> Path:
        if device.name not in set(self.twin.switches):
            raise TetonError(f"{device.name} is not a switch of twin {self.name!r}")
        return self.twin.node_dir(device.name)

    def _config(self, device: Device) -> str:
        try:
            return resolve(twin_frr_conf(device), self.secrets)
        except KeyError as exc:
            raise TetonError(f"{device.name}: {exc.args[0]}") from None

    def snapshot(self, device: Device) -> str:
        return frr_push.running_config(self._dir(device))

    def push(self, device: Device) -> None:
        try:
            frr_push.reload(self._dir(device), self._config(device))
        except frr_push.PushError as exc:
            raise TetonError(f"{device.name}: {exc}: {self.masked(exc.output)[-600:]}") from None

    def restore(self, device: Device, snapshot: Any) -> None:
        try:
            frr_push.reload(self._dir(device), str(snapshot))
        except frr_push.PushError as exc:
            raise TetonError(f"{device.name}: rollback failed: {exc}: {self.masked(exc.output)[-600:]}") from None

    def masked(self, text: str) -> str:
        return frr_push.mask(text, self.secrets.items())

    def check(self, device: Device, timeout: float) -> list[str]:
        """What the design promises this switch shows (`teton.expect`): its sessions Established, and the kernel's
        ECMP width towards a sample of the other racks; waits up to `timeout` seconds for both."""
        from teton.twin.service import TwinObserver

        report = wait_until_kept(_promise(device, Sampling(ecmp=TWIN_CHECK_ECMP, pings=0, ecmp_from=(device.name,))),
                                 TwinObserver(self.twin), timeout)
        return report.problems(named=False)

    def drift(self, device: Device) -> list[str]:
        running = frr_push.running_config(self._dir(device))
        return [self.masked(x) for x in frr_push.delta(running, self._config(device), hostname=device.name).lines()]


TWIN_CHECK_ECMP = 64   # ECMP widths a switch's health check on the twin probes (towards other racks)
LIVE_CHECK = Sampling(ecmp=0, pings=0)   # a live switch is asked for its sessions only


def _promise(device: Device, sampling: Sampling) -> Promise:
    """What the design promises `device` shows, without failures (`teton.expect.promise`)."""
    if device.fabric is None or device.name not in device.fabric.devices:
        raise TetonError(f"{device.name}: no fabric to check it against")
    return promise(device.fabric, [device.name], NO_FAILURES, sampling)


@dataclass(frozen=True)
class _SessionsOnly:
    """An `teton.expect.Observer` of one live switch that answers only how many sessions are Established."""

    count: Callable[[], int]

    def established(self, switch: str) -> int:
        return self.count()

    def nexthops(self, switch: str, prefix: str) -> int:
        raise TetonError(f"{switch}: next hops are not read from a live switch")

    def reaches(self, probe: PingProbe) -> bool:
        raise TetonError(f"{probe.host}: pings are not run on a live fabric")


def _live_check(device: Device, count: Callable[[], int], timeout: float) -> list[str]:
    """At least the sessions the design promises the switch (it may have peers of its own beside them)."""
    report = wait_until_kept(_promise(device, LIVE_CHECK), _SessionsOnly(count), timeout, interval=1.0,
                             sessions_at_least=True)
    return report.problems(named=False)


# ------------------------------------------------------------------------------------------------------ live

class EosTransport:
    """Arista EOS over eAPI (`teton.deploy.eapi`): the whole startup-config in a configure session, committed."""

    def __init__(self, secrets: Mapping[str, str], credentials: tuple[str, str], verify: str | bool = True,
                 port: int = 443):
        from teton.deploy.eapi import EapiClient

        self.secrets = dict(secrets)
        self._client = lambda host: EapiClient(host, credentials, verify=verify, port=port)

    def _startup(self, device: Device) -> str:
        return resolve_files(device.nos, device.build_files(), self.secrets)[
            device_path(device.name, "startup-config")]

    def snapshot(self, device: Device) -> str:
        return self._client(self._host(device)).running_config()

    def push(self, device: Device) -> None:
        self._client(self._host(device)).replace_config(self._startup(device), session=f"teton-{device.name}")

    def restore(self, device: Device, snapshot: Any) -> None:
        self._client(self._host(device)).replace_config(str(snapshot), session=f"teton-rollback-{device.name}")

    def check(self, device: Device, timeout: float) -> list[str]:
        return _live_check(device, self._client(self._host(device)).established_peers, timeout)

    def drift(self, device: Device) -> list[str]:
        return self._client(self._host(device)).session_diff(self._startup(device), masked=self.secrets)

    @staticmethod
    def _host(device: Device) -> str:
        if not device.mgmt:
            raise TetonError(f"{device.name} has no management address")
        return device.mgmt.split("/")[0]


class SonicSshTransport:
    """SONiC over SSH (OpenSSH's client, key-based): config_db.json by `config replace`, frr.conf by frr-reload in
    the bgp container.  Not exercised here (no SONiC runs on this machine): the twin runs the same frr.conf."""

    def __init__(self, secrets: Mapping[str, str], user: str = "admin", ssh: tuple[str, ...] = ("ssh",)):
        self.secrets = dict(secrets)
        self.user = user
        self.ssh = ssh

    def _run(self, device: Device, command: str, stdin: str | None = None) -> str:
        import subprocess

        host = EosTransport._host(device)
        res = subprocess.run([*self.ssh, "-o", "BatchMode=yes", f"{self.user}@{host}", command], input=stdin,
                             capture_output=True, text=True, timeout=300, check=False)
        if res.returncode != 0:
            raise TetonError(f"{device.name}: `{command.split()[0]} ...` failed (rc {res.returncode}): "
                             f"{frr_push.mask(res.stderr, self.secrets.items())[-400:]}")
        return res.stdout

    def snapshot(self, device: Device) -> tuple[str, str]:
        return (self._run(device, "sudo show runningconfiguration all"),
                frr_push.strip_header(self._run(device, "sudo vtysh -c 'show running-config'")))

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
        def count() -> int:
            summary = json.loads(self._run(device, "sudo vtysh -c 'show bgp summary json'") or "{}")
            return len(established_peers(summary))

        return _live_check(device, count, timeout)

    def drift(self, device: Device) -> list[str]:
        files = resolve_files(device.nos, device.build_files(), self.secrets)
        running = frr_push.strip_header(self._run(device, "sudo vtysh -c 'show running-config'"))
        d = frr_push.delta(running, files[device_path(device.name, "frr.conf")], hostname=device.name)
        return [frr_push.mask(x, self.secrets.items()) for x in d.lines()]


class SubnetManagerSsh:
    """InfiniBand: the subnet manager's files to each subnet manager host over SSH (master first), then OpenSM
    restarted there.  Not exercised here (tests/ib runs the same files with OpenSM over ibsim)."""

    def __init__(self, secrets: Mapping[str, str], user: str = "admin", ssh: tuple[str, ...] = ("ssh",)):
        self.secrets = dict(secrets)
        self.user = user
        self.ssh = ssh

    def push(self, hosts: list[str], config_dir: str, files: Files) -> None:
        import shlex
        import subprocess

        for host in hosts:
            for rel, text in sorted(files.items()):
                target = shlex.quote(f"{config_dir}/{rel.split('/', 1)[1]}")
                cmd = f"sudo install -d -m 0755 {shlex.quote(config_dir)} && umask 077 && sudo tee {target} >/dev/null"
                res = subprocess.run([*self.ssh, "-o", "BatchMode=yes", f"{self.user}@{host}", cmd], input=text,
                                     capture_output=True, text=True, timeout=120, check=False)
                if res.returncode != 0:
                    raise TetonError(f"{host}: writing {rel} failed (rc {res.returncode}): "
                                     f"{frr_push.mask(res.stderr, self.secrets.items())[-300:]}")
            res = subprocess.run([*self.ssh, "-o", "BatchMode=yes", f"{self.user}@{host}",
                                  "sudo systemctl restart opensm"], capture_output=True, text=True, timeout=120,
                                 check=False)
            if res.returncode != 0:
                raise TetonError(f"{host}: restarting opensm failed (rc {res.returncode}): "
                                 f"{frr_push.mask(res.stderr, self.secrets.items())[-300:]}")

