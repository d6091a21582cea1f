"""Arista EOS target (7800R3 CTSW/ATSW and any switch with `nos: eos`).

Per device: an AVD structured config (`structured-config.json` in its folder, eos_cli_config_gen's schema, spelled
from the device's intents by `structured`), validated with pyavd plus teton's own checks (`avd`, `checks`), then
rendered by pyavd to `startup-config` beside it.  An Arista switch cannot run on this machine: pyavd's schema and
renderer are the closest real thing, and the digital twin runs the FRR spelling of the routing read back from the
structured config (`readback`).  Beside the device folders: an ANTA test catalog per switch, `anta/<switch>.yml`, and
their ANTA inventory (`anta_catalog`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from teton.buildfolder import anta_catalog_path
from teton.catalogue.naming import PortPlace
from teton.fabric.bgpview import BgpView
from teton.fabric.model import Device, Fabric
from teton.findings import Finding
from teton.targets.base import BuildFileError, BuildFiles, DeviceTarget, DeviceView, Files, RenderContext, ZeroTouch
from teton.targets.eos.avd import (
    render_eos_config,
    render_validated,
    validate_and_render,
    validated_structured_config,
    warm_templar,
)
from teton.targets.eos.bgp import read_eos_bgp
from teton.targets.eos.catalogs import CATALOGS, device_catalog_yaml, render_catalogs, warm_catalogs
from teton.targets.eos.checks import plain_json
from teton.targets.eos.jsonout import dump_json  # the structured config as JSON (a YAML subset AVD tooling reads)
from teton.targets.eos.readback import read_eos
from teton.targets.eos.secrets import resolve_structured_config
from teton.targets.eos.structured import STRUCTURED, structured_config
from teton.targets.eos.ztp import eos_zero_touch
from teton.targets.transports import register_transport

STARTUP = "startup-config"


def eos_modular_port_name(p: PortPlace) -> str:
    """EOS on a modular chassis: Ethernet<slot>/<port>/1."""
    return f"Ethernet{p.slot}/{p.position}/1"


def eos_fixed_port_name(p: PortPlace) -> str:
    """EOS on a fixed switch: Ethernet<port>/1."""
    return f"Ethernet{p.index + 1}/1"


class EosTarget(DeviceTarget):
    name = "eos"
    device_cost = 0.003              # a 24k spine (220 interfaces) ~75 ms, a front-end switch (34) ~13
    interface_cost = 0.00033
    summary = "Arista EOS structured config (pyavd-validated) and startup-config per switch"
    nos = "eos"
    port_namings = {"eos-modular": eos_modular_port_name, "eos-fixed": eos_fixed_port_name}
    files = (STRUCTURED, STARTUP)
    version = "2"   # 2: the ANTA catalogs

    def finish(self, fabric: Fabric, ctx: RenderContext, files: Files,
               written: frozenset[str] = frozenset()) -> Files:
        """The device files, then the ANTA catalogs of every EOS switch (fabric-wide files: not in a render of some
        devices' files only, `RenderContext.devices`, which is a diff's of the changed devices).

        A switch's catalog is made with its device files, from the one validation of its structured config
        (`_render_chunk`); `render_catalogs` adds the inventory and any catalog not made so (neither in `files` nor
        `written` by a build's worker)."""
        if ctx.devices:
            return files
        return {**files, **render_catalogs(fabric, ctx, files, written)}

    def _render_chunk(self, fabric: Fabric, ctx: RenderContext, names: Sequence[str]) -> tuple[Files, list[Finding]]:
        """DeviceTarget's, with each switch's ANTA catalog in a whole render (no `RenderContext.devices`): a
        switch whose files are not in the cache is validated once, for its startup-config and its catalog, and each
        is kept in the cache under its own entry (the device's files; the catalog as `CATALOGS`'s), as before."""
        with_catalogs = not ctx.devices
        files: Files = {}
        problems: list[Finding] = []
        for name in names:
            key, cached = ctx.cache.lookup(self, fabric, name, ctx) if ctx.cache is not None else ("", None)
            catalog_key, catalog = ("", None)
            if with_catalogs and ctx.cache is not None:
                catalog_key, catalog = ctx.cache.lookup(CATALOGS, fabric, name, ctx)
            if cached is not None:
                files.update(cached)
                if catalog is None and with_catalogs:   # the device's files cached without the catalog
                    made, p = self._catalog_of_cached(fabric, fabric.devices[name], cached)
                    problems += p
                    if ctx.cache is not None and not p:
                        ctx.cache.store(catalog_key, made)
                    catalog = made
                files.update(catalog or {})
                continue
            f, p, made = self._render_one(fabric, fabric.devices[name], with_catalogs and catalog is None)
            files.update(f)
            files.update(catalog or made)
            problems += p
            if ctx.cache is not None and not p:
                ctx.cache.store(key, f)
                if made:
                    ctx.cache.store(catalog_key, made)
        return files, problems

    def _catalog_of_cached(self, fabric: Fabric, device: Device, cached: Files) -> tuple[Files, list[Finding]]:
        """The ANTA catalog of a switch whose device files came from the cache: from their structured config."""
        path = self.path(device.name, STRUCTURED)
        text = cached.get(path)
        issues, validated = validated_structured_config(
            device.name, json.loads(text) if text is not None else structured_config(fabric, device))
        if issues or validated is None:
            return {}, [Finding(path, i.path, i.message, rule="avd-schema") for i in issues]
        return {anta_catalog_path(device.name): device_catalog_yaml(fabric, device, validated)}, []

    def prepare(self, fabric: Fabric, ctx: RenderContext) -> None:
        """pyavd's templar made and its rewritten templates loaded once, in the parent (`avd.warm_templar`); ANTA
        and pyavd's test index too where every switch's catalog is to be made (`catalogs.warm_catalogs`: a whole
        render without a cache; with one, a worker imports them at its first catalog not in the cache).  Nothing
        where no switch's files are to be rendered (`RenderContext.devices` names none: a diff's render of its
        fabric-wide files, or of changed devices that are not EOS switches): 1.5 s of templates not loaded."""
        switches = fabric.switches("eos")
        if ctx.devices is not None and not any(d.name in ctx.devices for d in switches):
            return
        if switches:
            warm_templar()
            if not ctx.devices and ctx.cache is None:
                warm_catalogs()

    def chunk_state(self, ctx: RenderContext) -> Any:
        return True if ctx.validate else None

    def zero_touch(self, device: Device, url: str, image: str | None) -> ZeroTouch:
        return eos_zero_touch(device, url, image, (STRUCTURED, STARTUP))

    def render_device(self, fabric: Fabric, device: Device, ctx: RenderContext,
                      state: Any) -> tuple[Files, list[Finding]]:
        files, problems, _ = self._render_one(fabric, device, False)
        return files, problems

    def _render_one(self, fabric: Fabric, device: Device, catalog: bool) -> tuple[Files, list[Finding], Files]:
        """(the device's files, findings, with `catalog` its ANTA catalog file else {}): its structured config is
        validated once (pyavd's schema and teton's checks), and pyavd's validated data is both rendered to the
        startup-config and given to the catalog."""
        cfg = structured_config(fabric, device)
        path = self.path(device.name, STRUCTURED)
        shape = plain_json(cfg)   # one shape walk for the JSON and the validation
        files = {path: dump_json(cfg, shape)}
        issues, validated = validated_structured_config(device.name, cfg, shape)
        if issues or validated is None:
            return files, [Finding(path, i.path, i.message, rule="avd-schema") for i in issues], {}
        made = {anta_catalog_path(device.name): device_catalog_yaml(fabric, device, validated)} if catalog else {}
        files[self.path(device.name, STARTUP)] = render_validated(validated)
        return files, [], made

    def read_device(self, source: BuildFiles, device: Device,
                    state: Any) -> tuple[DeviceView | None, list[Finding]]:
        path = self.path(device.name, STRUCTURED)
        cfg = source.json(path)
        findings: list[Finding] = []
        if state is not None:
            issues, startup = validate_and_render(device.name, cfg)
            findings += [Finding(path, i.path, i.message, rule="avd-schema") for i in issues]
            if startup is not None:
                findings += self._startup_matches(source, device, startup)
        if not isinstance(cfg, dict):
            return None, findings + [Finding(path, "", "not a JSON object", rule="io")]
        try:
            view, found = read_eos(device.name, cfg)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            findings.append(Finding(path, "", f"cannot be read back: {type(exc).__name__}: {exc}", rule="io"))
            return None, findings
        return view, findings + found

    def read_bgp(self, source: BuildFiles, device: Device) -> BgpView | None:
        path = self.path(device.name, STRUCTURED)
        cfg = source.json(path)
        if not isinstance(cfg, dict):
            raise BuildFileError(path, "not a JSON object")
        return read_eos_bgp(device.name, cfg)


    def _startup_matches(self, source: BuildFiles, device: Device, expected: str) -> list[Finding]:
        """The startup-config is what pyavd renders from the structured config (else one was edited by hand)."""
        path = self.path(device.name, STARTUP)
        try:
            on_disk = source.text(path)
        except BuildFileError as exc:
            return [Finding(exc.path, "", exc.problem, rule="io")]
        if on_disk == expected:
            return []
        got, want = on_disk.splitlines(), expected.splitlines()
        n = next((k for k, (a, b) in enumerate(zip(got, want, strict=False)) if a != b), min(len(got), len(want)))
        line = got[n] if n < len(got) else "(end of file)"
        return [Finding(path, f"line {n + 1}", f"differs from what {STRUCTURED} renders: {line.strip()!r} where "
                        f"pyavd gives {want[n].strip() if n < len(want) else '(end of file)'!r}",
                        rule="startup-config")]


    def resolve_secrets(self, files: Files, secrets: Mapping[str, str]) -> Files:
        """EOS keeps keys as type-7 ciphertext: each peer group's BGP password is encrypted with that group's name
        as the key (so one secret gives a different ciphertext per group), TACACS+ and RADIUS keys with a salt from
        the device name; the startup-config is then rendered again from the resolved structured config."""
        out: Files = {}
        for path, text in files.items():
            if not path.endswith(STRUCTURED):
                continue
            cfg = resolve_structured_config(json.loads(text), secrets)
            out[path] = dump_json(cfg)
            out[path.removesuffix(STRUCTURED) + STARTUP] = render_eos_config(cfg)
        return {**{p: t for p, t in files.items() if p not in out}, **out}


TARGET = EosTarget()
register_transport("live", "eos", "teton.targets.eos.transport:live_transport")   # imported when a deploy asks
