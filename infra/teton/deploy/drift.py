"""`teton drift BUILD`: what each switch of the twin runs that differs from the build, device by device.

For every switch the twin runs, its running config (``show running-config`` over its vty sockets) is compared with
what the build says it should run (its frr.conf, or for EOS the FRR spelling of its read-back routing) by FRR's own
frr-reload in test mode: the lines a reload would delete and add.  Secrets come from `TETON_SECRET_<name>`
environment variables; when one is missing, BGP passwords are not compared (both sides' password values are
hidden, and the report says so).  No secret value is ever printed: values are masked back to their references.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from teton import environment
from teton.buildfolder import BuildFolder
from teton.deploy.transports import Device, TwinTransport, twin_frr_conf
from teton.findings import TetonError
from teton.frr import vtysh as frr_push
from teton.secrets import referenced_secrets, resolve
from teton.twin.artifacts import plan_name

_PASSWORD = re.compile(r"^(\s*neighbor \S+ password) \S+", re.MULTILINE)


def secrets_from_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """{name: value} of every `TETON_SECRET_<name>` environment variable (teton.environment.secrets)."""
    return environment.secrets(environ)


def hide_passwords(text: str) -> str:
    return _PASSWORD.sub(r"\1 TETON_NOT_COMPARED", text)


def twin_drift(build: Path, twin: str | None = None, secrets: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Per switch of the twin: the lines that differ from the build (empty: in sync)."""
    folder = BuildFolder.open(build)
    fabric = folder.fabric()
    name = twin or plan_name(fabric.name)
    secrets = dict(secrets_from_env() if secrets is None else secrets)
    transport = TwinTransport(name, secrets)
    switches = sorted(transport.twin.switches)
    unknown = [s for s in switches if s not in fabric.devices]
    if unknown:
        raise TetonError(f"the twin {name!r} runs switches the build does not have: {', '.join(unknown[:5])}")
    compared = True

    def one(sw: str) -> list[str]:
        nonlocal compared
        d = fabric.devices[sw]
        device = Device(sw, str(d.nos), folder.device_files(sw), d.mgmt, fabric)
        intended = twin_frr_conf(device)
        running = frr_push.running_config(transport.twin.node_dir(sw))
        if referenced_secrets(intended) <= set(secrets):
            intended = resolve(intended, secrets)
        else:
            compared = False
            intended, running = hide_passwords(intended), hide_passwords(running)
        return [transport.masked(x) for x in frr_push.delta(running, intended, hostname=sw).lines()]

    with ThreadPoolExecutor(4) as pool:
        found = dict(zip(switches, pool.map(one, switches), strict=True))
    return {"twin": name, "build": str(build), "switches": len(switches),
            "drifted": sorted(s for s, lines in found.items() if lines),
            "devices": {s: lines for s, lines in found.items() if lines}, "passwords_compared": compared}
