"""FBOSS target (Meta's switch software on Minipack2 and Wedge400: any switch with `nos: fboss`).

Per switch, in its folder: `agent.conf`, the agent's `AgentConfig` (`agent`, `qos`), and `bgpcpp.conf`, BGP++'s
`BgpConfig` (`bgp`), both thrift SimpleJSON as FBOSS reads them, with the real port names, logical ids and speed
profiles of FBOSS's platform mapping of the box (`platform`).  FBOSS's agent ignores what it does not know, so every
render runs the strict check (`strict`): the schema walk against the pinned IDL loaded with thriftpy2 (`idl`,
`walk`), then the cross-references the IDL cannot say (`crossref`).  The read-back (`readback`) gives the NOS-neutral
view, routing included (BGP++'s policies as route maps): `teton verify` models the switch with its `bgp` as it does
any NOS's (`DeviceTarget.read_bgp`), and since FBOSS cannot run here the twin runs the FRR spelling of that routing, as
for EOS.

The reference files (IDL, platform mappings, base configs) are found as `teton.targets.fboss.data` says; the catalogue
port table and its spec rule are `catalogue`; the live transport (SSH) is `transport`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Any

from teton.catalogue import builtin_models
from teton.fabric.model import Device, Fabric
from teton.findings import Finding
from teton.targets.base import BuildFileError, BuildFiles, DeviceTarget, DeviceView, Files, RenderContext, ZeroTouch
from teton.targets.fboss.agent import agent_config, dump_json
from teton.targets.fboss.bgp import bgp_config
from teton.targets.fboss.catalogue import check_ports, tier_path
from teton.targets.fboss.data import FBOSS_FILES
from teton.targets.fboss.platform import NAMINGS
from teton.targets.fboss.readback import AGENT, BGP, read_fboss
from teton.targets.fboss.strict import State, check_files, load_state
from teton.targets.fboss.ztp import fboss_zero_touch
from teton.targets.parallel import map_chunks
from teton.targets.transports import register_transport

NOS = "fboss"


class FbossTarget(DeviceTarget):
    name = "fboss"
    device_cost = 0.002
    interface_cost = 0.0001
    summary = "FBOSS agent.conf and BGP++ bgpcpp.conf per switch (strict-checked against FBOSS's IDL and platform map)"
    nos = NOS
    port_namings = NAMINGS
    files = (AGENT, BGP)
    reference = (FBOSS_FILES,)

    def zero_touch(self, device: Device, url: str, image: str | None) -> ZeroTouch:
        return fboss_zero_touch(device, url, image, (AGENT, BGP))

    def check(self, fabric: Fabric, file: str) -> Iterator[Finding]:
        devices = self.devices(fabric)
        if not devices:
            return
        yield from check_ports(fabric, self.nos, file)
        tiers: dict[str, list[Device]] = {}
        for d in devices:
            tiers.setdefault(tier_path(d.role), []).append(d)
        for tier, ds in sorted(tiers.items()):
            plane = tier.split(".")[0]
            bgp = "backend.bgp" if plane == "backend" else plane      # where the spec sets the plane's BGP
            r = [d.routing for d in ds if d.routing is not None]
            hops = {x.ttl_security_hops for x in r if x.ttl_security_hops}
            if hops:
                yield Finding(file, f"{bgp}.password_secret", f"the {tier} switches run FBOSS, whose BGP++ config "
                              "(BgpConfig) has no session password: every session of the " + plane + " is "
                              f"protected by GTSM (TTL security, hops {min(hops)}) and signed by no password, so both "
                              "ends agree", rule="fboss", severity="warning")
            if any(x.bfd for x in r):
                yield Finding(file, f"{bgp}.bfd" if plane == "backend" else plane, f"the {tier} switches run FBOSS, "
                              "whose BGP++ config has no BFD: their sessions fail over on the hold timer only",
                              rule="fboss", severity="warning")
            if any(x.default_originate for x in r):
                yield Finding(file, tier, f"the {tier} switches would originate a default route, which teton does "
                              "not spell for BGP++ yet", rule="fboss")
        if fabric.management is not None:
            yield Finding(file, "management", "FBOSS's agent config has no management plane: NTP, syslog, AAA and "
                          "telemetry of the FBOSS switches are their Linux hosts' (not rendered by teton)",
                          rule="fboss", severity="warning")

    def chunk_state(self, ctx: RenderContext) -> Any:
        return load_state(ctx.validate, ctx.folder(FBOSS_FILES))

    def prepare(self, fabric: Fabric, ctx: RenderContext) -> None:
        if self.devices(fabric):
            # the IDL parsed once here, before the render forks its workers
            load_state(ctx.validate, ctx.folder(FBOSS_FILES))

    def render_device(self, fabric: Fabric, device: Device, ctx: RenderContext,
                      state: Any) -> tuple[Files, list[Finding]]:
        assert isinstance(state, State) and device.routing is not None
        agent_path, bgp_path = self.path(device.name, AGENT), self.path(device.name, BGP)
        platform = fabric.models[device.model].platform.get(self.nos)
        if platform is None:
            return {}, [Finding(agent_path, "", f"model {device.model} has no FBOSS platform (platform.fboss)",
                                rule="fboss")]
        pm = state.platform(platform)
        agent, problems = agent_config(fabric, device, pm, state.base(platform), state.schema.deprecated, agent_path)
        port_ids = {p["name"]: p["logicalID"] for p in agent["sw"]["ports"]}
        bgp = bgp_config(device.routing, port_ids)
        if state.strict:
            problems += check_files(state, platform, agent_path, agent, bgp_path, bgp)
        return {agent_path: dump_json(agent), bgp_path: dump_json(bgp)}, problems

    def read_back(self, source: BuildFiles, fabric: Fabric, ctx: RenderContext,
                  vendor: bool = True) -> tuple[list[DeviceView], list[Finding]]:
        """As every device target's, with each model's FBOSS platform at hand (the strict check needs the box's
        platform mapping)."""
        names = [d.name for d in self.devices(fabric)]
        folder = ctx.folder(FBOSS_FILES)
        if vendor and names:
            load_state(True, folder)
        platforms = {n: m.platform.get(self.nos) for n, m in fabric.models.items()}
        views: list[DeviceView] = []
        findings: list[Finding] = []
        for v, f in map_chunks(partial(self._read_fboss, source, fabric, vendor, folder, platforms), names):
            views += v
            findings += f
        return views, findings

    def _read_fboss(self, source: BuildFiles, fabric: Fabric, vendor: bool, folder: Path | None,
                    platforms: dict[str, str | None],
                    names: Sequence[str]) -> tuple[list[DeviceView], list[Finding]]:
        state = load_state(True, folder) if vendor else None
        views: list[DeviceView] = []
        findings: list[Finding] = []
        for name in names:
            device = fabric.devices[name]
            try:
                view, found = self.read_one(source, device, state, platforms.get(device.model))
            except BuildFileError as exc:
                findings.append(Finding(exc.path, "", exc.problem, rule="io"))
                continue
            if view is not None:
                views.append(view)
            findings += found
        return views, findings

    def read_device(self, source: BuildFiles, device: Device,
                    state: Any) -> tuple[DeviceView | None, list[Finding]]:
        model = builtin_models().get(device.model)
        return self.read_one(source, device, state, model.platform.get(self.nos) if model is not None else None)

    def read_one(self, source: BuildFiles, device: Device, state: State | None,
                 platform: str | None) -> tuple[DeviceView | None, list[Finding]]:
        """The view of one switch; with `state`, the strict check's findings of its files too."""
        agent_path, bgp_path = self.path(device.name, AGENT), self.path(device.name, BGP)
        agent, bgp = source.json(agent_path), source.json(bgp_path)
        findings: list[Finding] = []
        if state is not None and platform is not None:
            findings += check_files(state, platform, agent_path, agent, bgp_path, bgp)
        if not isinstance(agent, dict) or not isinstance(bgp, dict):
            bad = agent_path if not isinstance(agent, dict) else bgp_path
            return None, findings + [Finding(bad, "", "not a JSON object", rule="io")]
        restart = device.routing.maximum_prefix_restart_min if device.routing is not None else 0
        try:
            view, found = read_fboss(device.name, agent, bgp, restart)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            findings.append(Finding(agent_path, "", f"cannot be read back: {type(exc).__name__}: {exc}", rule="io"))
            return None, findings
        return view, findings + found


TARGET = FbossTarget()
register_transport("live", NOS, "teton.targets.fboss.transport:live_transport")   # imported when a deploy asks
