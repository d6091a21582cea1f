"""How a build reaches a NOS's devices: transports by deploy mode and NOS, a registry the deploy layer resolves from,
and what every transport shares.

A deploy mode is how the Pulumi provider pushes a switch's rendered files: `twin` (the digital twin, for any NOS) or
`live` (the real switches, one transport per NOS).  A NOS package registers its factories here when it is imported (a
lookup loads the target packages first), so the provider needs no list of NOS: a new NOS gets a live transport by
calling `register_transport("live", "<nos>", factory)` in its own package.  A factory gets the deploy's settings
(`TransportSettings`) and returns a `Transport`; a fabric-wide target with no switches of its own registers under its
target's name and returns what its resource needs (OpenSM: `push(hosts, config_dir, files)`).

| mode | NOS | transport (module) |
| --- | --- | --- |
| twin | any | frr.conf (else the FRR spelling of the read-back) into its twin FRR (`teton.deploy.transports`) |
| live | eos | eAPI: a configure session replaced with the startup-config, committed (`targets.eos.transport`) |
| live | sonic | SSH: `config replace` of config_db.json, frr-reload of frr.conf (`targets.sonic.transport`) |
| live | opensm | SSH: the subnet manager's files to its hosts, OpenSM restarted (`targets.opensm.transport`) |
| live | fboss | SSH: agent.conf, bgpcpp.conf placed atomically, agent and BGP++ reloaded (`targets.fboss.transport`) |
| live | host | SSH: a server pings (`targets.hosts.transport`; `teton verify live` only) |

What they share is here: the `Device` a transport is handed, the `Transport` interface, `resolve_files` (a device's
files with its secrets spelled as its NOS expects) and the live health check (`live_check`: the sessions the design
promises, `teton.expect`).  `teton verify live` reads running switches through the same transports: a switch's
transport is also a `Reader` (its Established peers, its next hops to a prefix, its LLDP neighbours), a server's a
`Pinger`; a read one cannot make raises `NotObserved`.  The SSH client both SSH transports use is
`teton.targets.ssh`; secret values are masked with `teton.secrets.mask`.  Snapshots hold resolved text and live only in
the provider's memory.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from teton.buildfolder import device_of, device_path
from teton.fabric.model import Fabric
from teton.findings import TetonError
from teton.targets.base import Files

if TYPE_CHECKING:   # teton.expect is imported by a check only: a render registers transports without it
    from teton.expect import PingProbe, Promise, Sampling

ANY_NOS = "*"   # a factory registered for every NOS of a mode (the twin runs them all)


@dataclass(frozen=True)
class TransportSettings:
    """What a transport factory gets from the deploy."""

    secrets: Mapping[str, str]   # resolved secrets (credentials, keys)
    config: Mapping[str, Any]    # the provider's stack configuration (e.g. eapiPort, eapiVerify)
    twin: str = ""               # the twin's name, in mode `twin`


@dataclass(frozen=True)
class Device:
    """One switch as a transport gets it: its name, NOS, files as rendered and how to reach it."""

    name: str
    nos: str
    files: Files                        # relative to the device's folder ("frr.conf"), with secret references
    mgmt: str | None = None             # management address (live transports)
    fabric: Fabric | None = field(default=None, compare=False)   # the build's Fabric (expectations, EOS on the twin)

    def build_files(self) -> Files:
        return {device_path(self.name, k): v for k, v in self.files.items()}

    def management_host(self) -> str:
        """The management address without its prefix length (what a live transport connects to)."""
        if not self.mgmt:
            raise TetonError(f"{self.name} has no management address")
        return self.mgmt.split("/")[0]


class Transport(Protocol):
    """How one deploy mode reaches a switch of one NOS."""

    def snapshot(self, device: Device) -> Any:
        """What the device runs now (to roll back to)."""

    def push(self, device: Device) -> None:
        """The device's files, resolved as its NOS expects (`resolve_files`), made what it runs."""

    def check(self, device: Device, timeout: float) -> list[str]:
        """Its health after a push (sessions up, routes present): problems, empty when healthy."""

    def restore(self, device: Device, snapshot: Any) -> None:
        """A snapshot made what it runs again."""

    def drift(self, device: Device) -> list[str]:
        """What the device runs that differs from its files (lines; secret values masked)."""


class NotObserved(TetonError):
    """A read a transport does not make (FBOSS's routes and LLDP): reported as not observed, neither kept nor
    broken."""


@runtime_checkable
class Reader(Protocol):
    """What a running switch shows, read through its transport (`teton verify live`)."""

    def established_peers(self, device: Device) -> frozenset[str]:
        """The addresses of its Established BGP peers, every family; TetonError when it does not answer."""
        ...

    def nexthops(self, device: Device, prefix: str) -> int:
        """The next hops of its route to exactly `prefix` (0: none); NotObserved when its transport cannot say."""
        ...

    def lldp(self, device: Device) -> Any:
        """What its ports see over LLDP, as its NOS prints it as JSON (`lldpctl -f json`, EOS `show lldp neighbors`),
        which `teton.targets.cabling.lldp` reads; NotObserved when its transport cannot say."""
        ...


@runtime_checkable
class Pinger(Protocol):
    """How a server is asked to ping (`teton verify live`'s same-rail and front-end probes)."""

    def reaches(self, host: Device, src: str, dst: str) -> bool:
        """True if `dst` answers a ping from `host`'s address `src`; TetonError when the host does not answer."""
        ...


TransportFactory = Callable[[TransportSettings], Any]

_FACTORIES: dict[tuple[str, str], TransportFactory | str] = {}


def register_transport(mode: str, nos: str, factory: TransportFactory | str) -> None:
    """Add (or replace) how deploy mode `mode` reaches switches running `nos` (`ANY_NOS`: every NOS).  `factory` is
    the factory, or "module:function" naming it, imported on the first lookup (a NOS package registers its transport
    without importing its client libraries when it is only rendered)."""
    _FACTORIES[(mode, nos)] = factory


def unregister_transport(mode: str, nos: str) -> None:
    _FACTORIES.pop((mode, nos), None)


def modes() -> list[str]:
    """The deploy modes with a transport, in the order they were registered."""
    return list(dict.fromkeys(mode for mode, _ in _FACTORIES))


def transport_factory(mode: str, nos: str) -> TransportFactory:
    """The factory for (mode, nos), else the mode's factory for every NOS; LookupError says which is missing."""
    from teton.targets import targets

    targets()   # every target package imported: each has registered its transports
    if mode not in modes():
        raise LookupError(f"transport {mode!r}: use {' or '.join(repr(m) for m in modes())}")
    key = (mode, nos) if (mode, nos) in _FACTORIES else (mode, ANY_NOS)
    found = _FACTORIES.get(key)
    if found is None:
        raise LookupError(f"no {mode} transport for NOS {nos!r}")
    if isinstance(found, str):
        module, _, name = found.partition(":")
        found = _FACTORIES[key] = getattr(importlib.import_module(module), name)
    return found


# ------------------------------------------------------------------------------------------------ what a push sends

def resolve_files(nos: str, files: Files, secrets: Mapping[str, str]) -> Files:
    """`files` ({path: text} of one device, paths as in the build folder) resolved as `nos` expects, without
    reading the build's Fabric (what a deploy of thousands of devices calls, once per device)."""
    from teton.targets import nos_target

    target = nos_target(nos)
    if target is None:
        raise TetonError(f"no target renders {nos!r}")
    try:
        return target.resolve_secrets(files, secrets)
    except KeyError as exc:
        device = (device_of(next(iter(files))) if files else None) or "?"
        raise TetonError(f"{device}: {exc.args[0]}") from None


# ------------------------------------------------------------------------------------------------ health checks

def device_promise(device: Device, sampling: Sampling) -> Promise:
    """What the design promises `device` shows, without failures (`teton.expect.promise`)."""
    from teton.expect import NO_FAILURES, promise

    if device.fabric is None or device.name not in device.fabric.devices:
        raise TetonError(f"{device.name}: no fabric to check it against")
    return promise(device.fabric, [device.name], NO_FAILURES, sampling)


@dataclass(frozen=True)
class SessionsOnly:
    """An `teton.expect.Observer` of one live switch that answers only how many sessions are Established."""

    count: Callable[[], int]

    def established(self, switch: str) -> int:
        return self.count()

    def nexthops(self, switch: str, prefix: str) -> int:
        raise TetonError(f"{switch}: next hops are not read from a live switch")

    def reaches(self, probe: PingProbe) -> bool:
        raise TetonError(f"{probe.host}: pings are not run on a live fabric")


def live_check(device: Device, count: Callable[[], int], timeout: float) -> list[str]:
    """At least the sessions the design promises the switch (it may have peers of its own beside them); `count`
    asks the switch how many are Established; a live switch is asked for its sessions only."""
    from teton.expect import Sampling, wait_until_kept

    report = wait_until_kept(device_promise(device, Sampling(ecmp=0, pings=0, reach=0)), SessionsOnly(count), timeout,
                             interval=1.0, sessions_at_least=True)
    return report.problems(named=False)
