"""FBOSS's live transport over SSH (`teton.targets.ssh`, key-based): each file placed atomically beside the one it
replaces (written as `<file>.teton-new`, the running one kept as `<file>.teton-prev`, then renamed over it), then
the agent told to apply its config and BGP++ restarted.  Registered by the package for deploy mode `live`
(`teton.targets.transports`).

Stack config (every key optional; the defaults are FBOSS's paths, the commands a switch image may differ in):
`fbossAgentConf` (/etc/coop/agent.conf), `fbossBgpConf` (/etc/coop/bgpcpp/bgpcpp.conf), `fbossAgentReload` (SIGHUP to
wedge_agent: it reads its config again without a restart), `fbossBgpReload` (restart bgpd), `fbossBgpSummary` (a
command printing BGP++'s peers as JSON: the health check counts those Established).  Secret `ssh_user` (admin).

For `teton verify live` (`Reader`) it reads only BGP++'s Established peers, from the same summary (each peer's address
under a key such as `peer_addr`, or the key the peer is listed under); the next hops of a route and LLDP (the agent's,
`fboss2 show lldp`) are not read: they are reported as not observed (`NotObserved`).

Not exercised against a switch (FBOSS does not run here): tests/targets/test_fboss_transport.py runs it against the
stand-in `ssh` of the SSH transports' tests, which keeps the switch's files in a folder; the summary's JSON there is
the stand-in's shape, not one taken from a running BGP++.
"""

from __future__ import annotations

import difflib
import json
import shlex
from collections.abc import Mapping
from typing import Any

from teton.buildfolder import device_path
from teton.findings import TetonError
from teton.secrets import mask
from teton.targets.ssh import Ssh
from teton.targets.transports import Device, NotObserved, TransportSettings, live_check, resolve_files

AGENT_CONF, BGP_CONF = "/etc/coop/agent.conf", "/etc/coop/bgpcpp/bgpcpp.conf"
AGENT_RELOAD = "sudo systemctl kill --signal=HUP wedge_agent"
BGP_RELOAD = "sudo systemctl restart bgpd"
BGP_SUMMARY = "sudo fboss2 show bgp summary --fmt json"
NEW, PREV = ".teton-new", ".teton-prev"
ADDRESS_KEYS = ("peer_addr", "peer_address", "peeraddr", "peer_ip", "remote_addr", "address", "peer")


def established(summary: Any) -> int:
    """Peers whose state says Established, wherever the summary's JSON holds them."""
    if isinstance(summary, list):
        return sum(established(x) for x in summary)
    if isinstance(summary, dict):
        state = next((v for k, v in summary.items() if k.lower() in ("state", "peer_state", "session_state")), None)
        if isinstance(state, str):
            return int(state.lower() == "established")
        return sum(established(v) for v in summary.values())
    return 0


def established_addresses(summary: Any, key: str = "") -> list[str]:
    """The addresses of the peers `established` counts: each peer's address field, else the key it is listed under
    ("" when neither names it)."""
    if isinstance(summary, list):
        return [a for x in summary for a in established_addresses(x, key)]
    if isinstance(summary, dict):
        if established(summary) and any(k.lower() in ("state", "peer_state", "session_state") for k in summary):
            return [next((str(v) for k, v in summary.items() if k.lower() in ADDRESS_KEYS and isinstance(v, str)),
                         key)]
        return [a for k, v in summary.items() for a in established_addresses(v, str(k))]
    return []


class FbossSshTransport:
    """FBOSS over SSH: what a switch runs is its agent.conf and its bgpcpp.conf."""

    def __init__(self, secrets: Mapping[str, str], user: str = "admin", ssh: tuple[str, ...] = ("ssh",),
                 config: Mapping[str, Any] | None = None):
        c = dict(config or {})
        self.secrets = dict(secrets)
        self.ssh = Ssh(user, self.secrets, ssh)
        self.paths = {"agent.conf": str(c.get("fbossAgentConf", AGENT_CONF)),
                      "bgpcpp.conf": str(c.get("fbossBgpConf", BGP_CONF))}
        self.reload = {"agent.conf": str(c.get("fbossAgentReload", AGENT_RELOAD)),
                       "bgpcpp.conf": str(c.get("fbossBgpReload", BGP_RELOAD))}
        self.summary = str(c.get("fbossBgpSummary", BGP_SUMMARY))

    def _run(self, device: Device, command: str, stdin: str | None = None) -> str:
        return self.ssh.run(device.management_host(), command, stdin, who=device.name)

    def snapshot(self, device: Device) -> dict[str, str]:
        return {name: self._run(device, f"sudo cat {shlex.quote(path)} 2>/dev/null || true")
                for name, path in self.paths.items()}

    def _place(self, device: Device, name: str, text: str) -> None:
        path = shlex.quote(self.paths[name])
        new, prev = shlex.quote(self.paths[name] + NEW), shlex.quote(self.paths[name] + PREV)
        self._run(device, f"sudo sh -c 'umask 077 && cat > {new}'", text)
        self._run(device, f"sudo sh -c 'if [ -f {path} ]; then cp -p {path} {prev}; fi && mv -f {new} {path}'")

    def _apply(self, device: Device, files: Mapping[str, str]) -> None:
        for name in self.paths:          # agent first: BGP++ programs routes through it
            if name in files:
                self._place(device, name, files[name])
                self._run(device, self.reload[name])

    def push(self, device: Device) -> None:
        files = resolve_files(device.nos, device.build_files(), self.secrets)
        self._apply(device, {name: files[device_path(device.name, name)] for name in self.paths
                             if device_path(device.name, name) in files})

    def restore(self, device: Device, snapshot: Any) -> None:
        self._apply(device, {k: v for k, v in dict(snapshot).items() if v})

    def check(self, device: Device, timeout: float) -> list[str]:
        def count() -> int:
            return established(json.loads(self._run(device, self.summary) or "[]"))

        return live_check(device, count, timeout)

    def established_peers(self, device: Device) -> frozenset[str]:
        try:
            summary = json.loads(self._run(device, self.summary) or "[]")
        except ValueError:
            raise TetonError(f"{device.name}: `{self.summary}` did not answer JSON") from None
        found = established_addresses(summary)
        return frozenset(a or f"(unnamed peer {i})" for i, a in enumerate(found))

    def nexthops(self, device: Device, prefix: str) -> int:
        raise NotObserved(f"{device.name}: FBOSS's routes are not read (no route read call)")

    def lldp(self, device: Device) -> Any:
        raise NotObserved(f"{device.name}: FBOSS's LLDP is not read (no LLDP read call)")

    def drift(self, device: Device) -> list[str]:
        """Lines of a diff of what runs against the rendered files (both read as JSON, so formatting is no drift)."""
        files = resolve_files(device.nos, device.build_files(), self.secrets)
        running = self.snapshot(device)
        out: list[str] = []
        for name in self.paths:
            want = files.get(device_path(device.name, name))
            if want is None:
                continue
            a, b = _canonical(running.get(name, "")), _canonical(want)
            out += [line.rstrip("\n") for line in difflib.unified_diff(
                a, b, f"running {self.paths[name]}", f"rendered {name}", n=0) if not line.startswith(("---", "+++"))]
        return [mask(x, self.secrets.items()) for x in out]


def _canonical(text: str) -> list[str]:
    try:
        return (json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n").splitlines(keepends=True)
    except ValueError:
        return text.splitlines(keepends=True)


def live_transport(s: TransportSettings) -> FbossSshTransport:
    """The `live` factory: the SSH user from the secrets, paths and commands from the stack config."""
    return FbossSshTransport(s.secrets, user=s.secrets.get("ssh_user", "admin"), config=s.config)
