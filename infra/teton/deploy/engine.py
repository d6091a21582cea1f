"""Running the real Pulumi engine (the CLI `scripts/setup` builds) on a project, with nothing leaving the machine.

- The engine: `$TETON_PULUMI`, else `pulumi` on PATH, else the cache scripts/build-pulumi-engine fills
  (~/.cache/teton/pulumi/<version>/bin/pulumi).
- The plugins are the project's own, in scripts/: `pulumi-language-python` (the language host), `pulumi-resource-teton`
  (teton's provider) and `pulumi-resource-pulumi-python` (the dynamic-provider launcher); they go first on PATH.
- A local file backend (`file://<folder>`) and the passphrase secrets provider; no update check, no plugin download.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from teton import environment
from teton.findings import TetonError

ENGINE_VERSION = "v3.274.1"
REPO = Path(__file__).resolve().parents[3]
SCRIPTS = REPO / "scripts"


def engine_path() -> Path:
    if env := environment.get("TETON_PULUMI"):
        return Path(env)
    root = Path(environment.get("TETON_PULUMI_CACHE") or Path.home() / ".cache/teton/pulumi")
    cached = root / ENGINE_VERSION / "bin" / "pulumi"
    if cached.is_file():
        return cached
    found = shutil.which("pulumi")
    if found:
        return Path(found)
    raise TetonError(f"no Pulumi engine: run scripts/setup (it builds {ENGINE_VERSION} into {cached})")


@dataclass
class Engine:
    """The engine on one project folder, with a file backend in `state` and one passphrase."""

    project: Path
    state: Path
    passphrase: str
    extra_env: dict[str, str] = field(default_factory=dict)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "PATH": f"{SCRIPTS}:{engine_path().parent}:{env.get('PATH', '/usr/bin:/bin')}",
            "PULUMI_BACKEND_URL": f"file://{self.state}",
            "PULUMI_CONFIG_PASSPHRASE": self.passphrase,
            "PULUMI_HOME": str(self.state / ".pulumi-home"),
            "PULUMI_SKIP_UPDATE_CHECK": "true",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
            "PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK": "true",
        })
        env.pop("PULUMI_ACCESS_TOKEN", None)
        env.update(self.extra_env)
        return env

    def run(self, *args: str, check: bool = True, timeout: float = 1800,
            stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        self.state.mkdir(parents=True, exist_ok=True)
        res = subprocess.run([str(engine_path()), "--non-interactive", *args], cwd=self.project, env=self.env(),
                             capture_output=True, text=True, timeout=timeout, input=stdin, check=False)
        if check and res.returncode != 0:
            raise TetonError(f"pulumi {' '.join(args)} failed (rc {res.returncode}):\n{res.stdout[-3000:]}\n"
                             f"{res.stderr[-3000:]}")
        return res

    def config_set(self, stack: str, key: str, value: str, *, secret: bool = False, path: bool = False) -> None:
        """`pulumi config set` (a secret's value goes through stdin, never the command line)."""
        args = ["config", "set", key, "--stack", stack] + (["--path"] if path else [])
        if secret:
            self.run(*args, "--secret", stdin=value)
        else:
            self.run(*args, "--", value)
