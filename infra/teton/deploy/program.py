"""The Pulumi program's body: a build folder -> components Cluster -> Zone -> Rack, one `Switch` per switch, one
`HostRack` per rack of hosts, and a `Gate` after every wave (`teton.deploy.rollout`).

The program reads the build folder (`teton render SPEC` wrote it); it never designs.  A switch's inputs are its
rendered files as they are in the build (secret references, never values), so `pulumi preview --diff` shows that
device's changed lines, and a spec change previews exactly the devices whose files changed.  Waves chain through
dependencies: every switch of wave k depends on the gate of wave k-1, and the gate of wave k on the switches of
wave k, so the engine pushes a wave only after the previous one passed its gate, and stops at the first failure.

Stack config (namespace `teton`): `spec` (required: names the cluster), `build` (default build/<cluster>),
`mode` (`twin` or `live`; `target` is its older spelling), `twin` (the twin's name, default the cluster's),
`secrets` (a secret object), `rolloutFraction`, `rolloutMaxWave`, `canary` (a list of switch names).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teton.buildfolder import SUBNET_MANAGER_DIR, BuildFolder, Placement
from teton.deploy.inputs import (
    CLUSTER,
    GATE,
    HOST_RACK,
    RACK,
    SUBNET_MANAGER,
    SWITCH,
    ZONE,
    Deployment,
    GateInputs,
    HostRackInputs,
    SubnetManagerInputs,
    SwitchInputs,
)
from teton.deploy.registrar import Registrar, StepFailed
from teton.deploy.rollout import RolloutPolicy, Wave, plan_waves
from teton.expect import TIER
from teton.fabric.roles import server_roles
from teton.findings import TetonError
from teton.secrets import SecretError, SecretKind, references, secret_value
from teton.twin.artifacts import plan_name

SUBNET_MANAGED = "opensm"      # the NOS of an InfiniBand switch: its subnet manager configures it
PLAYBOOKS = Path(__file__).resolve().parents[3] / "playbooks"


@dataclass(frozen=True)
class Settings:
    build: Path
    mode: str = "twin"                                   # the deploy mode: twin or live
    twin: str | None = None
    policy: RolloutPolicy = RolloutPolicy()
    playbooks: Path = PLAYBOOKS


def playbooks_digest(folder: Path) -> str:
    """One hash of every file of the playbooks (a role change re-runs every rack, in waves of the engine's)."""
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file() and "collections" not in p.relative_to(folder).parts:
            h.update(p.relative_to(folder).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def on_twin(d: Placement) -> bool:
    """What the twin runs: the switches of the routed networks (RoCE backend, front end) and every server."""
    return d.role in TIER or d.role in server_roles()


def zone_name(d: Placement) -> str:
    return f"z{d.zone:02d}" if d.zone is not None else "core"


@dataclass
class StackPlan:
    """Every resource the program registers, decided before the first registration."""

    cluster: str
    zones: list[str]                                     # "z01" ..., "core"
    racks: dict[str, str]                                # rack -> zone
    waves: list[tuple[Wave, list[SwitchInputs], GateInputs]]   # (wave, its switches' inputs, its gate's)
    host_racks: list[HostRackInputs]
    summary: dict[str, Any]
    subnet_manager: SubnetManagerInputs | None = None    # InfiniBand: the OpenSM files, one resource


def plan_stack(settings: Settings) -> StackPlan:
    """The resources of the build in `settings`: inputs read from the build folder, waves decided (no engine)."""
    build = BuildFolder.open(settings.build.resolve())
    cluster_name, placed = build.cluster(), build.placements()
    devices = {d.name: d for d in placed}
    twin = settings.twin or plan_name(cluster_name)
    live = settings.mode == "live"
    if settings.mode not in ("twin", "live"):
        raise TetonError(f"config teton:mode is {settings.mode!r}: use 'twin' or 'live'")
    managed = [d for d in placed if live or on_twin(d)]
    switches = [d for d in managed if d.nos is not None and d.nos != SUBNET_MANAGED]
    # no path in the inputs: moving the build folder or the checkout must not look like a change of every device
    common = Deployment(transport=settings.mode, twin=twin, cluster=cluster_name)
    ib = [d.name for d in placed if d.nos == SUBNET_MANAGED]
    subnet = subnet_manager_inputs(build, common) if ib and live else None
    racks: dict[str, str] = {}
    waves = []
    for w in plan_waves(switches, settings.policy):
        files = {name: build.device_files(name) for name in w.devices}
        members = []
        for name in w.devices:
            d = devices[name]
            racks.setdefault(d.rack, zone_name(d))
            assert d.nos is not None
            members.append(SwitchInputs(device=d.name, nos=d.nos, files=files[name], deployment=common, role=d.role,
                                        wave=w.index, mgmt=d.mgmt, rack=d.rack))
        waves.append((w, members, _gate(w, devices, files, common)))
    hosts_by_rack: dict[str, list[str]] = defaultdict(list)
    for d in managed:
        if d.nos is None and d.role in server_roles():
            hosts_by_rack[d.rack].append(d.name)
            racks.setdefault(d.rack, zone_name(d))
    playbooks = playbooks_digest(settings.playbooks) if live and settings.playbooks.is_dir() else ""
    host_racks = []
    for rack, hosts in sorted(hosts_by_rack.items()):
        host_racks.append(HostRackInputs(rack=rack, hosts=tuple(sorted(hosts)), files=build.host_vars(hosts),
                                         deployment=common, playbooks=playbooks))
    deployed = {d.name for d in switches} | (set(ib) if subnet is not None else set())
    summary = {"cluster": cluster_name, "target": settings.mode, "switches": len(switches),
               "host_racks": len(host_racks),
               "waves": [{"name": w.name, "devices": len(w.devices)} for w, _, _ in waves],
               "not_on_twin": sorted(d.name for d in placed if d.nos is not None and d.name not in deployed)}
    return StackPlan(cluster=cluster_name, zones=sorted(set(racks.values())), racks=dict(sorted(racks.items())),
                     waves=waves, host_racks=host_racks, summary=summary, subnet_manager=subnet)


def check_secrets(plan: StackPlan, secrets: Mapping[str, str]) -> None:
    """Every secret the files of the plan's resources reference is given and a value of its kind (the field it
    stands in), before anything is registered: TetonError, one line naming the secret and a device that uses it,
    never the value.  (Resolution at push time checks the same again; this makes a bad secret stop the program
    before the first canary instead of after it.)"""
    where: dict[tuple[str, SecretKind], str] = {}
    resources = [(m.device, m.files) for _, members, _ in plan.waves for m in members]
    if plan.subnet_manager is not None:
        resources.append(("the subnet manager", plan.subnet_manager.files))
    for name, files in resources:
        for text in files.values():
            for ref in references(text):
                where.setdefault(ref, name)
    for (secret, kind), device in sorted(where.items(), key=lambda r: (r[0][0], r[0][1].name)):
        try:
            secret_value(secret, secrets, kind)
        except SecretError as exc:
            raise TetonError(f"config teton:secrets: {exc.args[0]} (used by {device})") from None


def subnet_manager_inputs(build: BuildFolder, common: Deployment) -> SubnetManagerInputs:
    """An InfiniBand backend's switches are configured by its subnet manager: one resource holds the OpenSM target's
    files, pushed to the subnet manager hosts the design named (master first)."""
    sm = build.subnet_manager()
    if sm.synthetic_guids:
        raise TetonError(f"{build.root}: its InfiniBand GUIDs are synthetic (the spec has no backend.guid_map), a "
                         "build for OpenSM over ibsim only: on the fabric OpenSM could not bind and every partition "
                         "would be empty; give the hardware GUIDs in backend.guid_map and render with --live")
    files = build.folder_texts(SUBNET_MANAGER_DIR)
    if not files:
        raise TetonError(f"{build.root}/{SUBNET_MANAGER_DIR} is missing: render the spec with the opensm target")
    return SubnetManagerInputs(files=files, hosts=tuple(sm.hosts), deployment=common, config_dir=sm.config_dir,
                               hcas=sm.hcas)


async def deploy(plan: StackPlan, registrar: Registrar, stack_urn: str) -> dict[str, Any]:
    """Register the plan: components, then wave after wave (each wave's switches depend on the previous gate, the
    gate on its switches), then the racks of hosts after the last gate.  In an update a registration returns once
    the resource is deployed, so a failed switch or gate stops the rollout here: nothing after it is registered."""
    cluster = await registrar.component(CLUSTER, plan.cluster, stack_urn)
    zone_urns = dict(zip(plan.zones, await asyncio.gather(
        *(registrar.component(ZONE, z, cluster) for z in plan.zones)), strict=True))
    rack_urns = dict(zip(plan.racks, await asyncio.gather(
        *(registrar.component(RACK, r, zone_urns[z]) for r, z in plan.racks.items())), strict=True))
    gate: list[str] = []
    try:
        if plan.subnet_manager is not None:      # the InfiniBand fabric first: its switches are the SM's to set
            gate = [await registrar.register(SUBNET_MANAGER, "opensm", cluster, custom=True,
                                             props=plan.subnet_manager.to_props())]
        for w, members, gate_props in plan.waves:
            urns = await asyncio.gather(*(
                registrar.register(SWITCH, m.device, rack_urns[m.rack], custom=True, props=m.to_props(),
                                   depends_on=gate)
                for m in members))
            gate = [await registrar.register(GATE, f"gate-{w.index:02d}-{w.name}", cluster, custom=True,
                                             props=gate_props.to_props(), depends_on=urns)]
        await asyncio.gather(*(registrar.register(HOST_RACK, f"{h.rack}-hosts", rack_urns[h.rack], custom=True,
                                                  props=h.to_props(), depends_on=gate) for h in plan.host_racks))
    except StepFailed as exc:
        raise TetonError(f"the rollout stopped at {exc}: later waves were not deployed") from None
    return plan.summary


def _gate(w: Wave, devices: dict[str, Placement], files: dict[str, dict[str, str]],
          common: Deployment) -> GateInputs:
    """The gate of wave `w`: its inputs change exactly when a file of one of its switches does."""
    h = hashlib.sha256()
    for name in w.devices:
        for fname, text in sorted(files[name].items()):
            h.update(f"{name}/{fname}\0".encode() + hashlib.sha256(text.encode()).digest())
    return GateInputs(wave=w.index, name=w.name, devices=tuple(w.devices), digest=h.hexdigest(), deployment=common,
                      nos_of={n: str(devices[n].nos) for n in w.devices},
                      mgmt_of={n: devices[n].mgmt for n in w.devices})
