"""The EOS target's fabric-wide files: an ANTA test catalog per switch, `anta/<switch>.yml` (`anta_catalog`), and
`anta/inventory.yml`, ANTA's inventory of the switches (`anta nrfu -i anta/inventory.yml -c anta/<switch>.yml`).

A catalog is a function of its switch's slice, so each is kept in the render cache with the slice digest (as a
device's files are, under the name `eos-anta`).  It is made from pyavd's validated data of the switch's structured
config, with the device's files (`EosTarget._render_chunk`: one validation per switch gives both the startup-config
and the catalog, on all cores); `render_catalogs` writes the inventory and makes any catalog not made so (it
validates the structured config again for those).  24k reference, CPU per switch (bench/eos_avd_render.py): a
second validation (pyavd and teton's checks, ~35 ms) no more, the YAML 52 -> 10 ms (`anta_catalog.dump_yaml`), the
catalog's data 55 -> 22 ms (`anta_catalog.device_catalog_data`: teton's tests without ANTA's models, pyavd's
factories given only what they read).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import partial
from typing import Any

import yaml

from teton.buildfolder import ANTA_INVENTORY, anta_catalog_path, device_of
from teton.fabric.model import Device, Fabric
from teton.findings import Finding, SpecError
from teton.targets.base import DeviceTarget, Files, RenderContext
from teton.targets.eos.avd import validated_structured_config
from teton.targets.eos.structured import STRUCTURED, structured_config
from teton.targets.parallel import map_chunks

YAML_WIDTH = 1 << 16


def inventory_yaml(fabric: Fabric) -> str:
    """ANTA's inventory of the EOS switches: each by its management address (its name where it has none, for DNS),
    tagged with its role."""
    hosts = [{"host": d.mgmt.split("/")[0] if d.mgmt else d.name, "name": d.name, "tags": [d.role]}
             for d in fabric.switches("eos")]
    return ("# ANTA inventory of the EOS switches, rendered by teton (docs/artifacts.md)\n"
            + yaml.dump({"anta_inventory": {"hosts": hosts}}, Dumper=yaml.CSafeDumper, sort_keys=True,
                        default_flow_style=False, width=YAML_WIDTH))


def device_catalog_yaml(fabric: Fabric, d: Device, validated: dict[str, Any]) -> str:
    """`anta/<switch>.yml` of switch `d` from pyavd's validated data of its structured config (ANTA and pyavd's test
    index are imported at the first call: 0.6 s)."""
    from teton.targets.eos.anta_catalog import catalog_yaml, device_catalog_data

    return catalog_yaml(d.name, device_catalog_data(fabric, d, validated))


def warm_catalogs() -> None:
    """ANTA, pyavd's test index and its structured-config model imported now, by one catalog of a bare switch through
    pyavd's public API (`EosTarget.prepare`: in the parent, before the render's workers fork, as `avd.warm_templar`).
    A worker would otherwise pay it at its first catalog (~0.4 s of CPU each, ~0.25 s of it imports); the parent's
    copy runs beside the render's aside (`pipeline.fabric_findings`, ~0.6 s)."""
    import pyavd
    from pyavd.api.anta import AVDFabricData

    from teton.targets.eos.anta_catalog import SETTINGS

    bare = {"hostname": "teton-warm"}
    pyavd.get_device_test_catalog("teton-warm", bare, AVDFabricData.from_structured_configs({"teton-warm": bare}),
                                  SETTINGS)


class _Catalogs(DeviceTarget):
    """The render cache's name for the catalogs (it keys a device's files by target, version, the class's source and
    the device's slice digest); not a registered target."""

    name = "eos-anta"
    summary = "ANTA test catalog per EOS switch"
    nos = "eos"
    version = "1"
    files = ()


CATALOGS = _Catalogs()


def render_catalogs(fabric: Fabric, ctx: RenderContext, rendered: Files, written: frozenset[str] = frozenset(),
                    ) -> Files:
    """`anta/<switch>.yml` of every EOS switch and `anta/inventory.yml`; `rendered`: the switches' files just rendered
    (their structured configs are read from there when present); `written`: paths a build's workers wrote themselves
    (a catalog there is made, and not returned).  SpecError if pyavd refuses a structured config."""
    names = [d.name for d in fabric.switches("eos")]
    if not names:
        return {}
    files: Files = {ANTA_INVENTORY: inventory_yaml(fabric)}
    missing = []
    for name in names:
        made = rendered.get(anta_catalog_path(name))
        if made is not None:   # made with the device's files, or from the cache (EosTarget._render_chunk)
            files[anta_catalog_path(name)] = made
        elif anta_catalog_path(name) not in written:
            missing.append(name)
    files.update(_made(fabric, ctx, rendered, missing))
    return dict(sorted(files.items()))


def _made(fabric: Fabric, ctx: RenderContext, rendered: Files, names: list[str]) -> Files:
    """The catalogs of `names`: from the cache, else made on all cores (and stored).

    The two sides of a `teton diff` make their fabric-wide files at once, each in one process, and a switch whose
    slice is the same on both sides has the same catalog (the same cache entry): the side that takes the cache's
    `one_at_a_time` lock makes the catalogs it misses from the first switch on, the other from the last one back,
    and each takes from the cache what the other stored before making one (`_chunk`), so they meet halfway instead
    of each validating every switch (a cold diff of the 24k reference validated its 192 EOS switches twice)."""
    files: Files = {}
    keys: dict[str, str] = {}
    for name in names:
        key, cached = ctx.cache.lookup(CATALOGS, fabric, name, ctx) if ctx.cache is not None else ("", None)
        if cached is not None:
            files.update(cached)
        else:
            keys[name] = key
    if not keys:
        return files
    import teton.targets.eos.anta_catalog  # noqa: F401 - once, before the workers fork

    if ctx.cache is None:
        return {**files, **_make(fabric, ctx, rendered, keys, list(keys))}
    with ctx.cache.one_at_a_time(CATALOGS.name, wait=False) as first:
        return {**files, **_make(fabric, ctx, rendered, keys, list(keys) if first else list(keys)[::-1])}


def _make(fabric: Fabric, ctx: RenderContext, rendered: Files, keys: dict[str, str], order: list[str]) -> Files:
    """The catalogs of `keys`' switches made in `order`; SpecError with their findings in `keys`' order (the same
    error whichever way they were made)."""
    files: Files = {}
    problems: list[Finding] = []
    for f, p in map_chunks(partial(_chunk, fabric, ctx, rendered, keys), order):
        files.update(f)
        problems += p
    if problems:
        rank = {name: i for i, name in enumerate(keys)}
        raise SpecError(sorted(problems, key=lambda f: rank.get(device_of(f.file) or "", len(rank))))
    return files


def _chunk(fabric: Fabric, ctx: RenderContext, rendered: Files, keys: dict[str, str],
           names: Sequence[str]) -> tuple[Files, list[Finding]]:
    """The catalogs of `names`, none of which was in the cache when looked up (`keys`: each one's cache key)."""
    files: Files = {}
    problems: list[Finding] = []
    for name in names:
        stored = ctx.cache.read_entry(keys[name]) if ctx.cache is not None else None
        if stored is not None:      # stored by another process meanwhile (`_made`)
            files.update(stored)
            continue
        d = fabric.devices[name]
        path = DeviceTarget.path(name, STRUCTURED)
        text = rendered.get(path)
        issues, validated = validated_structured_config(name, json.loads(text) if text is not None
                                                        else structured_config(fabric, d))
        if validated is None or issues:
            problems += [Finding(path, i.path, i.message, rule="avd-schema") for i in issues]
            continue
        mine = {anta_catalog_path(name): device_catalog_yaml(fabric, d, validated)}
        files.update(mine)
        if ctx.cache is not None:
            ctx.cache.store(keys[name], mine)
    return files, problems
