"""What the ZTP tests share: an inventory made from a build's switches, the CLI run in-process, Kea's own check of
its configuration, a folder's bytes, and a spec variant rendered through the one build path."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from tests.helpers import write_spec
from teton.cli import main

SBIN = "/usr/sbin"      # Debian installs Kea's servers there, which is on root's PATH only


def tool(name: str) -> str:
    """The path of a tool scripts/setup installs; an assertion (never a skip) when it is missing."""
    found = shutil.which(name) or shutil.which(name, path=SBIN)
    assert found, f"{name} is not installed: scripts/setup installs it (Debian's package)"
    return found


def kea_check(config: Path) -> None:
    """`kea-dhcp4 -t` (or kea-dhcp6's) on `config`: ISC Kea's own parser accepts it."""
    server = "kea-dhcp6" if "dhcp6" in config.name else "kea-dhcp4"
    res = subprocess.run([tool(server), "-t", str(config)], capture_output=True, text=True, timeout=60,
                         env={**os.environ, "KEA_LOCKFILE_DIR": "none"})
    assert res.returncode == 0, f"{server} -t {config}: exit {res.returncode}\n{res.stdout[-3000:]}{res.stderr[-3000:]}"


def shellcheck(*scripts: Path) -> None:
    res = subprocess.run([tool("shellcheck"), "--shell=sh", *map(str, scripts)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def cli(*args: object) -> Result:
    """`teton ARGS` in-process; never a traceback: exit 0 or 2, and no exception but the exit."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exit_code in (0, 2), (result.exit_code, result.output, result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output, result.output
    return result


def switches(build: Path) -> list[dict[str, Any]]:
    """The build's switches as fabric.json records them (every device with a NOS), in its order."""
    return [d for d in json.loads((build / "fabric.json").read_text())["devices"] if d.get("nos")]


def mac_of(n: int) -> str:
    """The n-th test MAC, normalised (a locally administered unicast address)."""
    return ":".join(f"{b:02x}" for b in (0x02, 0x7E, 0x70, 0x00, n >> 8 & 0xFF, n & 0xFF))


def spelled(mac: str, n: int) -> str:
    """`mac` in one of the spellings a shipping manifest or a scanner uses, by n."""
    digits = mac.replace(":", "")
    return (mac.upper(), mac.replace(":", "-"), f"{digits[:4]}.{digits[4:8]}.{digits[8:]}", digits.upper())[n % 4]


def inventory_text(names: list[str]) -> tuple[str, dict[str, str]]:
    """A CSV inventory of `names` as a spreadsheet exports one (a header, a comment, a blank line, CRLF, serials on
    every other row, MACs in every spelling) and {name: its MAC, normalised}."""
    lines = ["device,mac,serial", "# shipping manifest, dock 3", ""]
    macs: dict[str, str] = {}
    for n, name in enumerate(names):
        macs[name] = mac_of(n)
        lines.append(f"{name},{spelled(macs[name], n)}" + (f",SN-{n:05d}" if n % 2 == 0 else ""))
    return "\r\n".join(lines) + "\r\n", macs


def tree(folder: Path) -> dict[str, bytes]:
    """{relative path: bytes} of every file under `folder`."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def render(folder: Path, data: dict[str, Any], name: str) -> Path:
    """The spec `data` (plain data) rendered through the one build path (every check) into folder/<name>/build."""
    from teton.pipeline import build

    spec = write_spec(folder, data, f"{name}.yaml")
    return build(spec, folder / name / "build").path
