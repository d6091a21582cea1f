"""SONiC target: `devices/<name>/config_db.json` and `devices/<name>/frr.conf` for every switch with `nos: sonic`.

- render: the Config DB (`config_db`), YANG-validated with SONiC's own models through libyang (`validate`, `yang`),
  and the FRR spelling of the routing intent (`teton.targets.frr`) for SONiC's bgpd;
- read-back (`readback`): both files into the NOS-neutral view; the frr.conf is handed to the twin unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from teton.fabric.model import Device, Fabric
from teton.findings import Finding
from teton.targets.base import BuildFiles, DeviceTarget, DeviceView, Files, RenderContext
from teton.targets.frr import render_frr
from teton.targets.sonic.config_db import MGMT_VRF, config_db, dump_config_db
from teton.targets.sonic.readback import read_sonic
from teton.targets.sonic.validate import SplitValidator, yang_findings


class SonicTarget(DeviceTarget):
    name = "sonic"
    summary = "SONiC config_db.json (YANG-validated) and frr.conf per switch"
    nos = "sonic"
    files = ("config_db.json", "frr.conf")

    def check(self, fabric: Fabric, file: str) -> Iterator[Finding]:
        m = fabric.management
        if m is not None and m.vrf != MGMT_VRF and self.devices(fabric):
            yield Finding(file, "management.vrf", f"SONiC's management VRF is always named {MGMT_VRF!r} "
                          f"(MGMT_VRF_CONFIG); {m.vrf!r} cannot be spelled on the SONiC switches", rule="sonic")

    def chunk_state(self, ctx: RenderContext) -> Any:
        return SplitValidator(ctx.yang_dir) if ctx.validate else None

    def render_device(self, fabric: Fabric, device: Device, ctx: RenderContext,
                      state: Any) -> tuple[Files, list[Finding]]:
        assert device.routing is not None
        db = config_db(device, fabric.models[device.model])
        path = self.path(device.name, "config_db.json")
        problems = yang_findings(path, state.validate(device.name, db)) if state is not None else []
        return {path: dump_config_db(db),
                self.path(device.name, "frr.conf"): render_frr(device.name, device.routing)}, problems

    def read_device(self, source: BuildFiles, device: Device,
                    state: Any) -> tuple[DeviceView | None, list[Finding]]:
        path = self.path(device.name, "config_db.json")
        db = source.json(path)
        findings = yang_findings(path, state.validate(device.name, db)) if state is not None else []
        if not isinstance(db, dict):
            return None, findings
        try:
            view, found = read_sonic(device.name, db, source.text(self.path(device.name, "frr.conf")))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            findings.append(Finding(path, "", f"cannot be read back: {type(exc).__name__}: {exc}", rule="io"))
            return None, findings
        return view, findings + found


TARGET = SonicTarget()
