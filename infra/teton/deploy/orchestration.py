"""What the provider does for a resource: push a switch and roll it back if it is unhealthy, run a wave's gate and
roll the wave back if it fails, push a rack of hosts or the subnet manager, read a switch's drift.

One `Orchestrator` lives for one engine run (the provider's life): it keeps the transports it opened
(`teton.deploy.transport_pool`), each build folder's Fabric (read once), and, per wave, the snapshots of the switches
this run pushed, until that wave's gate has run.  The gRPC servicer (`teton.deploy.provider`) decodes the requests
into typed inputs (`teton.deploy.inputs`) and calls it; a gate on the twin asks `teton.deploy.twin_client`.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, cast

from teton.buildfolder import BuildFolder
from teton.deploy import settings as stack_settings
from teton.deploy.hosts import HostRack, host_transport
from teton.deploy.inputs import (
    GATE,
    HOST_RACK,
    SUBNET_MANAGER,
    SWITCH,
    GateInputs,
    HostRackInputs,
    SubnetManagerInputs,
    SwitchInputs,
)
from teton.deploy.program import PLAYBOOKS
from teton.deploy.transport_pool import TransportPool
from teton.deploy.twin_client import verify_problems
from teton.fabric.model import Fabric
from teton.findings import TetonError
from teton.targets.transports import Device, Transport, TransportSettings, resolve_files, transport_factory


def digest(files: dict[str, str]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return h.hexdigest()


class SubnetManagerPush(Protocol):
    """What the live transport registered for NOS `opensm` does: the resolved files to the subnet manager hosts."""

    def push(self, hosts: list[str], config_dir: str, files: dict[str, str], hcas: Sequence[str] = ()) -> None: ...


class Orchestrator:
    def __init__(self) -> None:
        self.config: dict[str, Any] = {}     # the provider's configuration (stack config `teton:*`)
        self._folders: dict[Path, BuildFolder] = {}
        self._lock = threading.Lock()
        self.transports = TransportPool()
        self.pushed: dict[int, list[tuple[Device, Transport, Any]]] = defaultdict(list)   # wave -> this run

    # ------------------------------------------------------------------ settings

    def secrets(self) -> dict[str, str]:
        raw = self.config.get("secrets") or {}
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raise TetonError("config teton:secrets must be an object {name: value}") from None
        if not isinstance(raw, dict):
            raise TetonError("config teton:secrets must be an object {name: value}")
        return {str(k): str(v) for k, v in raw.items()}

    def timeout(self) -> float:
        return stack_settings.check_timeout(self.config.get("checkTimeout"))

    def adopting(self) -> bool:
        """`teton:adopt true`: record the build as what the devices run, touching none (a cluster configured before
        teton managed it); `pulumi refresh` then reports any drift."""
        return stack_settings.adopt(self.config.get("adopt"))

    def build(self, cluster: str) -> Path:
        """The build folder: `teton:build`, else build/<cluster> (relative to the project folder, the engine runs its
        plugins there), as the program reads it."""
        return Path(self.config.get("build") or Path("build") / cluster).resolve()

    def fabric(self, build: str | Path) -> Fabric:
        """The Fabric of the build folder `build`, read once for the life of the provider (one engine run)."""
        with self._lock:
            folder = self._folders.setdefault(Path(build), BuildFolder(build))
            return folder.fabric()

    def transport(self, how: str, nos: str, twin: str = "") -> Transport:
        """The transport registered for (deploy mode `how`, NOS), opened once per run."""
        return self.transports.get(how, nos, twin, lambda: TransportSettings(self.secrets(), self.config, twin))

    def device(self, inputs: SwitchInputs) -> Device:
        return Device(inputs.device, inputs.nos, dict(inputs.files), inputs.mgmt,
                      self.fabric(self.build(inputs.deployment.cluster)))

    # ------------------------------------------------------------------ the resources

    def apply(self, kind: str, props: dict[str, Any]) -> dict[str, Any]:
        """Create or update the resource of type `kind` with the inputs `props` (as decoded): its outputs."""
        if self.adopting():
            return {"digest": digest({str(k): str(v) for k, v in (props.get("files") or {}).items()})} | (
                {"drift": []} if kind == SWITCH else {})
        if kind == SWITCH:
            return self.push_switch(SwitchInputs.from_props(props))
        if kind == HOST_RACK:
            return self.push_hosts(HostRackInputs.from_props(props))
        if kind == GATE:
            return self.gate(GateInputs.from_props(props))
        if kind == SUBNET_MANAGER:
            return self.push_subnet_manager(SubnetManagerInputs.from_props(props))
        raise TetonError(f"unknown resource type {kind}")

    def push_switch(self, inputs: SwitchInputs) -> dict[str, Any]:
        """Snapshot, push, check; an unhealthy switch is rolled back and the update fails (later waves untouched)."""
        device = self.device(inputs)
        transport = self.transport(inputs.deployment.transport, device.nos, inputs.deployment.twin)
        snapshot = transport.snapshot(device)
        try:
            transport.push(device)
        except TetonError as exc:
            rollback(transport, device, snapshot)
            raise TetonError(f"{exc}; rolled back to its previous config") from None
        problems = transport.check(device, self.timeout())
        if problems:
            rollback(transport, device, snapshot)
            after = transport.check(device, self.timeout())
            state = "healthy again" if not after else "still unhealthy: " + "; ".join(after[:3])
            raise TetonError(f"{device.name} (wave {inputs.wave}): unhealthy after the push: "
                             f"{'; '.join(problems[:5])}; rolled back to its previous config ({state}); the "
                             "rollout stops here, later waves are untouched")
        with self._lock:
            self.pushed[inputs.wave].append((device, transport, snapshot))
        return {"digest": digest(device.files), "drift": []}

    def gate(self, inputs: GateInputs) -> dict[str, Any]:
        """The twin's whole verify, or every device of the wave checked; a failure rolls back what this run pushed in
        the wave, in reverse order, and fails the update."""
        with self._lock:    # the wave's snapshots (resolved configs): needed only until its gate has run
            pushed = list(reversed(self.pushed.pop(inputs.wave, [])))
        problems: list[str] = []
        where = inputs.deployment
        if where.transport == "twin":
            problems += verify_problems(where.twin)
        else:
            for name in inputs.devices:
                fabric = self.fabric(self.build(where.cluster))
                d = Device(name, inputs.nos_of[name], {}, inputs.mgmt_of.get(name), fabric)
                transport = self.transport(where.transport, d.nos, where.twin)
                problems += [f"{name}: {p}" for p in transport.check(d, self.timeout())]
        if problems:
            for device, transport, snapshot in pushed:
                rollback(transport, device, snapshot)
            names = ", ".join(d.name for d, _, _ in pushed) or "none"
            raise TetonError(f"gate after wave {inputs.name} failed: {'; '.join(problems[:5])}; rolled "
                             f"back what this run pushed in that wave ({names}); the stack still records them as "
                             "updated: run `pulumi refresh` (or `pulumi up --refresh`) before the next update")
        return {"checked": len(inputs.devices)}

    def push_hosts(self, inputs: HostRackInputs) -> dict[str, Any]:
        rack = HostRack(inputs.rack, list(inputs.hosts), dict(inputs.files), str(self.build(inputs.deployment.cluster)),
                        str(self.config.get("playbooks") or PLAYBOOKS))
        host_transport(inputs.deployment.transport, inputs.deployment.twin, self.secrets()).apply(rack)
        return {"digest": digest(rack.files)}

    def push_subnet_manager(self, inputs: SubnetManagerInputs) -> dict[str, Any]:
        if inputs.deployment.transport != "live":
            raise TetonError("the twin has no InfiniBand fabric (tests/ib runs OpenSM over ibsim): use mode live")
        secrets = self.secrets()
        files = resolve_files("opensm", dict(inputs.files), secrets)
        try:     # teton.targets.opensm.transport: not a switch's transport, so not from the pool
            factory = transport_factory("live", "opensm")
        except LookupError as exc:
            raise TetonError(str(exc)) from None
        cast(SubnetManagerPush, factory(TransportSettings(secrets, self.config, ""))).push(
            list(inputs.hosts), inputs.config_dir, files, inputs.hcas)
        return {"digest": digest(dict(inputs.files))}

    def drift(self, props: dict[str, Any]) -> list[str]:
        """`pulumi refresh` of a switch: the lines it runs that differ from its files."""
        inputs = SwitchInputs.from_props(props)
        device = self.device(inputs)
        return list(self.transport(inputs.deployment.transport, device.nos, inputs.deployment.twin).drift(device))


def rollback(transport: Transport, device: Device, snapshot: Any) -> None:
    try:
        transport.restore(device, snapshot)
    except TetonError as exc:
        raise TetonError(f"{device.name}: the push failed and so did the rollback: {exc}") from None
