"""Print CPU ms per device of the EOS target's render on a sample of the 24k RoCE reference's EOS switches, whole and
by part, and of validating and rendering a 220-link CTSW structured config with pyavd.

Run from the repository root:  python bench/eos_avd_render.py [every-nth-switch] [repeats]

The whole figure is what a cold render (`TETON_CACHE=off`) spends per switch: `EosTarget._render_chunk` (structured
config, its JSON, one pyavd validation with teton's checks, the ANTA catalog, the startup-config), plus a catalog
render for any switch whose catalog the device render did not make (none since the catalog is made from the device
render's validation; before that, every switch's, validated again).  It runs on teton as it is on the PYTHONPATH, so
the same file measures an older checkout.  Figures (pyavd 6.4.0, CPU ms per switch, every 12th of the 192
switches, median of 3, on the 2-core machine while other work loaded it: absolute figures are high, compare rows):

  part                                                  before (c91e6e0)   after
  whole: device chunk + catalogs not made in it               378            215
  JSON of the structured config (json.dumps -> orjson)         12.5            8.3
  validation: pyavd + teton_checks, twice -> once        2 x (13 + 15)     13 + 4.5
  startup-config: pyavd templates (get_device_config 180)     107-118         60
  catalog: device_catalog (pyavd's and teton's tests)          84             64-82
  catalog YAML: yaml.dump CSafeDumper -> written directly      81              9
  structured_config (teton's, unchanged)                       28             28

A cold 24k render of the EOS target alone (`teton render --only eos`, TETON_CACHE=off): 80.7 s -> 45.5 s of CPU
(user, workers included) on the same shared machine; all 577 files and manifest.json byte-identical (sha256).

Then (wt-eos3 against main 7ef70e2, same run conditions: every 12th switch, median of 3, the 2-core machine loaded
by other work at a load average of 8-9, so compare rows):

  part, CPU ms per switch                                 7ef70e2    after
  whole: device chunk + catalogs not made in it             215.7    108.3
  structured_config (import_targets: one index per intent)  29.6      4.7
  render: teton's reused templar                            64.4     37.3   (inlined field reads and defined test
                                                                             in 4 templates; router-bgp left as is)
  catalog: device_catalog + catalog_data                    54.7     21.9   (device_catalog_data)
    pyavd's tests: whole config -> factory_view              24.0     14.6
    teton's tests: ANTA's models -> own_tests_data           22.9      6.1
  catalog YAML, JSON, validation (pyavd + teton_checks)     unchanged: ~9, ~9, ~13-16 + ~5-8

The inlined templates cost their rewrite once per process (`EosTarget.prepare` in the parent before the workers
fork): ethernet-interfaces 0.4 s of CPU; router-bgp's would be 1.5 s for ~9 ms per switch, so it is not rewritten.
A whole cold 24k render (`build`, TETON_CACHE=off, 2 workers), back to back at a load average of 3-5: 7ef70e2 80.0 s
of CPU (user + sys, workers included), 67 s wall; after 64.7 s of CPU, 61 s wall; all 11,103 files byte-identical
(/tmp/cmp24k.sh against 7ef70e2's render).  The rest of the render's CPU is mostly SONiC's.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyavd
from pyavd.constants import (
    EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE,
    EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH,
)
from pyavd.templater import Templar

from teton.targets.eos import avd as eos_avd

ROOT = Path(__file__).resolve().parents[1]
_TESTS = ROOT / "tests" / "targets" / "test_eos_avd.py"
REF24K = ROOT / "inventory" / "reference-roce-24k.yaml"


def _spine_config() -> dict:
    spec = importlib.util.spec_from_file_location("_eos_avd_tests", _TESTS)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.spine_config(192, 28)


def _ms(fn: Callable[[], object], repeats: int) -> tuple[float, float]:
    """(median CPU ms, min wall ms): CPU time of this process is steadier than wall time on a shared machine."""
    cpu, wall = [], []
    for _ in range(repeats):
        c0, t0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append((time.process_time() - c0) * 1000)
        wall.append((time.perf_counter() - t0) * 1000)
    return statistics.median(cpu), min(wall)


def _row(name: str, fn: Callable[[], object], repeats: int, per: int = 1) -> None:
    cpu, wall = _ms(fn, repeats)
    print(f"  {name:<52} {cpu / per:10.1f} {wall / per:9.1f}")


def target_figures(step: int, repeats: int) -> None:
    """The EOS target's render of every `step`-th EOS switch of the 24k reference, ms per switch."""
    from teton.buildfolder import anta_catalog_path
    from teton.pipeline import load_and_design
    from teton.targets.base import RenderContext
    from teton.targets.eos import TARGET, catalogs
    from teton.targets.eos.structured import structured_config

    fabric = load_and_design(REF24K).fabric
    devices = fabric.switches("eos")[::step]
    ctx = RenderContext()
    n = len(devices)

    def whole() -> None:
        files, problems = TARGET._render_chunk(fabric, ctx, [d.name for d in devices])   # what a worker runs
        assert not problems
        missing = [d.name for d in devices if anta_catalog_path(d.name) not in files]
        if missing:   # the catalogs the device render did not make (an older teton: all of them)
            catalogs._chunk(fabric, ctx, files, dict.fromkeys(missing, ""), missing)

    whole()   # imports, the templar
    print(f"EOS target, {n} of {len(fabric.switches('eos'))} switches of {REF24K.name} (every {step}th)")
    print(f"  {'ms per switch, ' + str(repeats) + ' runs':<52} {'CPU median':>10} {'wall min':>9}")
    _row("whole: device chunk + catalogs not made in it", whole, repeats, n)
    cfgs = [structured_config(fabric, d) for d in devices]
    _row("  structured_config", lambda: [structured_config(fabric, d) for d in devices], repeats, n)
    parts: list[tuple[str, Callable[[], object]]] = []
    try:
        from teton.targets.eos.jsonout import dump_json, dump_json_reference

        parts += [("  JSON: json.dumps(indent=1)", lambda: [dump_json_reference(c) for c in cfgs]),
                  ("  JSON: teton (orjson where the same)", lambda: [dump_json(c) for c in cfgs])]
    except ImportError:
        pass
    from teton.targets.eos.checks import teton_checks

    validated = [eos_avd.validated_structured_config(c["hostname"], c)[1] for c in cfgs]
    parts += [("  validate: pyavd.validate_structured_config", lambda: [pyavd.validate_structured_config(c)
                                                                         for c in cfgs]),
              ("  validate: teton_checks", lambda: [list(teton_checks(c["hostname"], c)) for c in cfgs]),
              ("  render: pyavd.get_device_config", lambda: [pyavd.get_device_config(v) for v in validated])]
    inlined = eos_avd._reused_templar() or pyavd.get_device_config
    if hasattr(eos_avd, "_inline_ok"):   # the templar without the inlined templates, as before
        eos_avd._reused_templar.cache_clear()
        inline_ok = eos_avd._inline_ok
        eos_avd._inline_ok = lambda _undefined: False
        called = eos_avd._reused_templar() or pyavd.get_device_config
        eos_avd._inline_ok = inline_ok
        eos_avd._reused_templar.cache_clear()
        assert eos_avd._reused_templar() is not called
        parts.append(("  render: reused templar, getattr + defined shortcuts", lambda: [called(v) for v in validated]))
    parts.append(("  render: teton (as it renders)", lambda: [inlined(v) for v in validated]))
    from teton.targets.eos import anta_catalog

    pairs = list(zip(devices, validated, strict=True))
    parts.append(("  catalog: device_catalog (ANTA's models)",
                  lambda: [anta_catalog.device_catalog(fabric, d, v) for d, v in pairs]))
    cats = [anta_catalog.device_catalog(fabric, d, v) for d, v in pairs]
    if hasattr(anta_catalog, "catalog_data"):
        parts.append(("  catalog: catalog_data of those", lambda: [anta_catalog.catalog_data(c) for c in cats]))
    if hasattr(anta_catalog, "device_catalog_data"):
        parts += [
            ("  catalog: device_catalog_data (teton)",
             lambda: [anta_catalog.device_catalog_data(fabric, d, v) for d, v in pairs]),
            ("    pyavd's tests, whole config", lambda: [pyavd.get_device_test_catalog(
                d.name, v, anta_catalog.AVDFabricData.from_structured_configs({d.name: v}), anta_catalog.SETTINGS)
                for d, v in pairs]),
            ("    pyavd's tests, factory_view", lambda: [pyavd.get_device_test_catalog(
                d.name, anta_catalog.factory_view(v), anta_catalog.AVDFabricData.from_structured_configs({d.name: v}),
                anta_catalog.SETTINGS) for d, v in pairs]),
            ("    teton's tests: own_tests (ANTA's models)", lambda: [anta_catalog.own_tests(fabric, d)
                                                                  for d in devices]),
            ("    teton's tests: own_tests_data", lambda: [anta_catalog.own_tests_data(fabric, d) for d in devices])]
    if hasattr(anta_catalog, "catalog_data"):
        data = [anta_catalog.catalog_data(c) for c in cats]
        parts += [("  catalog YAML: yaml.dump (CSafeDumper)", lambda: [anta_catalog.dump_yaml_reference(x)
                                                                       for x in data]),
                  ("  catalog YAML: teton (direct where the same)", lambda: [anta_catalog.dump_yaml(x) for x in data])]
    else:
        parts.append(("  catalog YAML: catalog_yaml", lambda: [anta_catalog.catalog_yaml(d.name, c)
                                                               for d, c in zip(devices, cats, strict=True)]))
    for name, fn in parts:
        _row(name, fn, repeats, n)


def spine_figures(repeats: int) -> None:
    cfg = _spine_config()
    t0 = time.perf_counter()
    validated = pyavd.validate_structured_config(cfg).validated_data
    first_validate = (time.perf_counter() - t0) * 1000
    t0 = time.perf_counter()
    text = eos_avd.render_eos_config(cfg)
    first_render = (time.perf_counter() - t0) * 1000
    reused = eos_avd._reused_templar()
    assert reused is not None and text == pyavd.get_device_config(validated)

    n_intf, n_nbr = len(cfg["ethernet_interfaces"]), len(cfg["router_bgp"]["neighbors"])
    n_lines = len(text.splitlines())
    print(f"pyavd {pyavd.__version__}: {n_intf} Ethernet interfaces, {n_nbr} BGP neighbours, {n_lines} CLI lines")
    print(f"  first calls (cold): pyavd validate {first_validate:.0f} ms, render_eos_config {first_render:.0f} ms")
    plain = Templar(precompiled_templates_path=EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH)
    rows: list[tuple[str, Callable[[], Any]]] = [
        ("validate: pyavd.validate_structured_config", lambda: pyavd.validate_structured_config(cfg)),
        ("validate: teton validate_structured_config", lambda: eos_avd.validate_structured_config("bench", cfg)),
        ("render: pyavd.get_device_config", lambda: pyavd.get_device_config(validated)),
        (
            "render: one reused Templar, Jinja getattr",
            lambda: plain.render_template_from_file(EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE, validated),
        ),
        ("render: teton (reused + dict-first getattr)", lambda: reused(validated)),
        ("render_eos_config (validate + reused templar)", lambda: eos_avd.render_eos_config(cfg)),
    ]
    print(f"  {'ms per device, ' + str(repeats) + ' runs':<52} {'CPU median':>10} {'wall min':>9}")
    for name, fn in rows:
        _row(name, fn, repeats)


def main(step: int = 12, repeats: int = 5) -> None:
    target_figures(step, repeats)
    spine_figures(repeats * 4)


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
