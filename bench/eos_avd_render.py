"""Print ms per device for validating and rendering a 220-link CTSW structured config with pyavd.

Run from the repository root:  python bench/eos_avd_render.py [repeats]
Compares pyavd.get_device_config (new templar per call), one reused Templar, and teton's renderer.
"""

from __future__ import annotations

import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyavd
from pyavd.constants import (
    EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE,
    EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH,
)
from pyavd.templater import Templar

from teton.targets.eos import avd as eos_avd

_TESTS = Path(__file__).resolve().parents[1] / "tests" / "targets" / "test_eos_avd.py"


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


def main(repeats: int = 20) -> None:
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
    rows = [
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
    print(f"  {'ms per device, ' + str(repeats) + ' runs':<48} {'CPU median':>10} {'wall min':>9}")
    for name, fn in rows:
        cpu, wall = _ms(fn, repeats)
        print(f"  {name:<48} {cpu:10.1f} {wall:9.1f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
