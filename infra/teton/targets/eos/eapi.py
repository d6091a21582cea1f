"""An Arista eAPI client: JSON-RPC 2.0 `runCmds` over HTTPS (`POST /command-api`, HTTP basic auth).

What a deploy uses, and nothing more:
- `replace_config(text, session)`: ``configure session S``, ``rollback clean-config`` (the session starts empty, so
  the commit *replaces* the running config), every line of the startup-config, then ``commit``; when any command
  fails, ``configure session S`` + ``abort`` so the running config is untouched, and EapiError says which line.
- `running_config()`: ``show running-config`` as text (what a rollback pushes back).
- `session_diff(text)`: the same session without a commit: ``show session-config diffs``, then abort (drift).
- `established_peers()`: ``show ip bgp summary`` and ``show ipv6 bgp summary`` (JSON), Established peers counted;
  `peers()` the same peers' addresses.
- `route_vias(prefix)`: ``show ip route PREFIX`` (``show ipv6 route`` for IPv6) as JSON, the vias of the route to
  exactly that prefix (EOS answers the longest match; another prefix's route counts as none).
- `lldp_neighbors()`: ``show lldp neighbors`` as JSON (`{"lldpNeighbors": [...]}`, as `teton verify cabling` reads it).

No EOS runs on this machine: tests/targets/test_eos_eapi.py runs this client against a local HTTPS endpoint that
implements these calls (tests/targets/eapi_endpoint.py), not against a switch.
"""

from __future__ import annotations

import base64
import itertools
import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any

from teton.findings import TetonError
from teton.secrets import mask

_IDS = itertools.count(1)


class EapiError(TetonError):
    """A call failed; the message names the command (never a secret: config lines are not repeated)."""


def config_lines(text: str) -> list[str]:
    """The commands of an EOS config text in order: comments, blank lines and `end` dropped; indentation kept off
    (eAPI takes commands, and EOS's parser enters and leaves modes from the command itself)."""
    out = []
    for raw in text.splitlines():
        s = raw.strip()
        if not s or s.startswith("!") or s == "end":
            continue
        out.append(s)
    return out


class EapiClient:
    def __init__(self, host: str, credentials: tuple[str, str], *, verify: str | bool = True, port: int = 443,
                 timeout: float = 60.0):
        self.url = f"https://{host}:{port}/command-api"
        user, password = credentials
        self._auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        if verify is False:
            ctx = ssl.create_default_context()
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        elif isinstance(verify, str):
            ctx = ssl.create_default_context(cafile=verify)
        else:
            ctx = ssl.create_default_context()
        self._ctx = ctx
        self.timeout = timeout

    def run(self, cmds: list[str], fmt: str = "json") -> list[Any]:
        """runCmds; the result of every command, or EapiError naming the one that failed (by its index)."""
        body = json.dumps({"jsonrpc": "2.0", "method": "runCmds", "id": next(_IDS),
                           "params": {"version": 1, "cmds": cmds, "format": fmt}}).encode()
        req = urllib.request.Request(self.url, data=body, method="POST",
                                     headers={"Content-Type": "application/json", "Authorization": self._auth})
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self._ctx) as resp:
                answer = json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            raise EapiError(f"{self.url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise EapiError(f"{self.url}: {exc}") from None
        if "error" in answer:
            err = answer["error"]
            data = err.get("data") or []
            failed = next((i for i, d in enumerate(data) if isinstance(d, dict) and d.get("errors")), None)
            where = f" at command {failed + 1} of {len(cmds)}" if failed is not None else ""
            said = "; ".join(data[failed]["errors"]) if failed is not None else ""
            # EOS's message repeats the failed command, which may hold a key: only its index and the errors
            raise EapiError(f"{self.url}: eAPI error {err.get('code')}{where}: {said or 'failed'}")
        return list(answer.get("result", []))

    def _session(self, text: str, session: str, finish: list[str], fmt: str = "json") -> list[Any]:
        cmds = ["enable", f"configure session {session}", "rollback clean-config", *config_lines(text), *finish]
        try:
            return self.run(cmds, fmt)
        except EapiError:
            try:
                self.run(["enable", f"configure session {session}", "abort"])
            except EapiError:
                pass
            raise

    def replace_config(self, text: str, session: str) -> None:
        """The running config becomes `text`, in one committed session, or stays as it was."""
        self._session(text, session, ["commit"])

    def session_diff(self, text: str, session: str = "teton-drift", masked: Mapping[str, str] = {}) -> list[str]:
        """Lines `text` would change on the device (a session diffed, then aborted); secret values masked."""
        result = self._session(text, session, ["show session-config diffs", "abort"], fmt="text")
        diff = result[-2].get("output", "") if isinstance(result[-2], dict) else str(result[-2])
        return [mask(line, masked.items()) for line in diff.splitlines()
                if line.startswith(("+", "-")) and not line.startswith(("+++", "---"))]

    def running_config(self) -> str:
        result = self.run(["enable", "show running-config"], fmt="text")
        return str(result[-1].get("output", ""))

    def established_peers(self) -> int:
        return len(self.peers())

    def peers(self) -> frozenset[str]:
        """The addresses of the Established BGP peers, IPv4 and IPv6, in every VRF."""
        result = self.run(["enable", "show ip bgp summary", "show ipv6 bgp summary"])
        return frozenset(address for summary in result[1:] for vrf in (summary.get("vrfs") or {}).values()
                         for address, p in (vrf.get("peers") or {}).items() if p.get("peerState") == "Established")

    def route_vias(self, prefix: str) -> int:
        """The vias (next hops) of the default VRF's route to exactly `prefix`; 0 when it has none."""
        family = "ipv6" if ":" in prefix else "ip"
        answer = self.run(["enable", f"show {family} route {prefix}"])[-1]
        routes = ((answer.get("vrfs") or {}).get("default") or answer).get("routes") or {}
        route = routes.get(prefix) or {}
        return len(route.get("vias") or [])

    def lldp_neighbors(self) -> Any:
        """``show lldp neighbors`` as EOS's JSON."""
        return self.run(["enable", "show lldp neighbors"])[-1]
