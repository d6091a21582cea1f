"""`teton verify live BUILD [--twin NAME]`: the running devices of a build asked what its design promises
(`teton.verify.live`), each through the transport a deploy would push it through.

- On the twin (`twin`): the twin transport (`teton.deploy.transports.TwinTransport`) reads every switch whatever its
  NOS (bgpd over its vty socket, the kernel's routes, lldpd) and pings from the servers' namespaces.  The twin must
  run BUILD's switches (its snapshot of the build it was started with).
- Live: each switch through its NOS's live transport from the registry (`teton.targets.transports`: EOS over eAPI,
  SONiC and FBOSS over SSH) at its management address, and each server through the `host` transport (pings over SSH
  at its first front-end address, as Ansible reaches it).  `config` is what the stack config gives a deploy
  (`eapiPort`, `eapiVerify`, `fbossBgpSummary` ...), the secrets its credentials (`eapi_user`, `eapi_password`,
  `ssh_user`), from `TETON_SECRET_<name>`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from teton.buildfolder import BuildFolder
from teton.deploy.transport_pool import TransportPool
from teton.deploy.transports import TwinTransport
from teton.fabric.model import Fabric
from teton.fabric.neighbours import NEIGHBOURS_FILE, Neighbour, load_neighbours
from teton.findings import TetonError
from teton.targets.ansible.variables import ansible_host
from teton.targets.transports import Device, Pinger, Reader, TransportSettings
from teton.twin.lldp import SETTLE_TIMEOUT_S
from teton.verify.live import Fleet, Progress, switches_of, verify_live
from teton.verify.live_report import LiveReport


def _device(fabric: Fabric, name: str, nos: str, address: str | None) -> Device:
    return Device(name, nos, {}, address, fabric)


def twin_fleet(fabric: Fabric, twin: str, secrets: Mapping[str, str]) -> Fleet:
    """Every device of the twin `twin`, read through the twin transport; TetonError when it is not up or runs
    other switches than `fabric` has."""
    transport = TwinTransport(twin, secrets)
    running, designed = set(transport.twin.switches), set(switches_of(fabric))
    if running != designed:
        odd = sorted(running ^ designed)
        raise TetonError(f"twin {twin!r} does not run this build's switches ({len(odd)} differ: "
                         f"{', '.join(odd[:4])}); give the build it was started with (/run/teton/twin/{twin}/build)")

    def reader(name: str) -> tuple[Reader, Device]:
        return transport, _device(fabric, name, str(fabric.devices[name].nos), None)

    def pinger(name: str) -> tuple[Pinger, Device]:
        return transport, _device(fabric, name, "host", None)

    def remarks() -> tuple[str, ...]:
        if transport.lldp_settled is False:
            return (f"the LLDP lldpd shows in twin {twin!r} did not settle to its cables as they lie within "
                    f"{SETTLE_TIMEOUT_S:.0f} s: a neighbour may be stale or missing",)
        return ()

    return Fleet(f"twin {twin}", reader, pinger, remarks)


def live_fleet(fabric: Fabric, secrets: Mapping[str, str], config: Mapping[str, Any]) -> Fleet:
    """Every device of `fabric` through its live transport, opened once per NOS."""
    pool = TransportPool()
    settings = TransportSettings(dict(secrets), dict(config))

    def reader(name: str) -> tuple[Reader, Device]:
        d = fabric.devices[name]
        transport = pool.get("live", str(d.nos), "", lambda: settings)
        if not isinstance(transport, Reader):
            raise TetonError(f"{name}: the live transport of {d.nos} reads nothing from a switch")
        return transport, _device(fabric, name, str(d.nos), d.mgmt)

    def pinger(name: str) -> tuple[Pinger, Device]:
        transport = pool.get("live", "host", "", lambda: settings)
        if not isinstance(transport, Pinger):
            raise TetonError("the live transport of servers does not ping")
        return transport, _device(fabric, name, "host", ansible_host(fabric.devices[name]))

    return Fleet("live", reader, pinger)


def build_neighbours(folder: BuildFolder) -> dict[str, dict[str, Neighbour]]:
    """The build's expected LLDP neighbours (`cabling/neighbours.json`)."""
    text = folder.text(NEIGHBOURS_FILE)
    try:
        return load_neighbours(text)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TetonError(f"{NEIGHBOURS_FILE} of the build: not what teton writes ({exc}); render the spec "
                         "again") from None


def verify_build_live(build: Path, twin: str | None = None, only: str | None = None, *,
                      secrets: Mapping[str, str] | None = None, config: Mapping[str, Any] | None = None,
                      progress: Progress | None = None) -> LiveReport:
    """What BUILD's running devices show against its design: on the twin `twin`, else live."""
    from teton.deploy.drift import secrets_from_env

    folder = BuildFolder.open(build)
    fabric = folder.fabric()
    switches_of(fabric, only)                           # an unknown role is bad input before anything is asked
    neighbours = build_neighbours(folder)
    secrets = secrets_from_env() if secrets is None else secrets
    fleet = twin_fleet(fabric, twin, secrets) if twin is not None else live_fleet(fabric, secrets, config or {})
    return verify_live(fabric, neighbours, fleet, only, progress=progress)
