"""The SSH client the live transports share: OpenSSH's `ssh`, key-based and non-interactive (`BatchMode=yes`).

A command runs on `user@host`, optionally fed `stdin` (a config file: never on the command line, where `ps` shows
it); a failure is a `TetonError` that names the host (or device) and what failed, with the tail of the remote
stderr, every secret value masked (`teton.secrets.mask`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field

from teton.findings import TetonError
from teton.secrets import mask

STDERR_TAIL = 400   # characters of a failed command's stderr an error shows


@dataclass(frozen=True)
class Ssh:
    """`ssh` as `user`; `command` is the client and its options (a test puts a stand-in there)."""

    user: str = "admin"
    secrets: Mapping[str, str] = field(default_factory=dict)
    command: tuple[str, ...] = ("ssh",)

    def run(self, host: str, command: str, stdin: str | None = None, *, timeout: float = 300.0,
            who: str = "", what: str = "") -> str:
        """The stdout of `command` on `host`; TetonError "<who>: <what> failed (rc N): <stderr>" when it fails
        (`who` defaults to the host, `what` to the command's first word)."""
        res = subprocess.run([*self.command, "-o", "BatchMode=yes", f"{self.user}@{host}", command], input=stdin,
                             capture_output=True, text=True, timeout=timeout, check=False)
        if res.returncode != 0:
            what = what or f"`{command.split()[0]} ...`"
            raise TetonError(f"{who or host}: {what} failed (rc {res.returncode}): "
                             f"{mask(res.stderr, self.secrets.items())[-STDERR_TAIL:]}")
        return res.stdout
