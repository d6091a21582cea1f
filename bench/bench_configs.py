"""Benchmark: every switch config of a spec rendered and validated, in ms per device per NOS target.

Every registered target that configures a NOS (SONiC: config_db build + YANG validation + JSON, frr.conf; EOS:
structured config + pyavd validation + pyavd render).  Runs each target on all cores as `teton render` does, then once
on one core for a per-device figure.

    .venv/bin/python bench/bench_configs.py [SPEC]     (default: inventory/reference-roce-24k.yaml)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from teton import targets
    from teton.pipeline import load_and_design
    from teton.targets import DeviceTarget, RenderContext

    spec = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "inventory" / "reference-roce-24k.yaml")
    fabric = load_and_design(spec).fabric
    ctx = RenderContext()
    total = 0.0
    print(f"{'target':<8} {'devices':>8} {'files':>7} {'wall s':>8} {'ms/device (wall)':>17} "
          f"{'ms/device (1 core)':>19}")
    for target in targets.targets():
        if not isinstance(target, DeviceTarget):
            continue
        devices = target.devices(fabric)
        t0 = time.perf_counter()
        files = target.render(fabric, ctx)
        wall = time.perf_counter() - t0
        total += wall
        sample = [d.name for d in devices[: min(len(devices), 64)]]
        t1 = time.perf_counter()
        target._render_chunk(fabric, ctx, sample)
        one = (time.perf_counter() - t1) / max(1, len(sample)) * 1000
        per = wall / max(1, len(devices)) * 1000
        print(f"{target.name:<8} {len(devices):>8,} {len(files):>7,} {wall:>8.2f} {per:>17.2f} {one:>19.2f}")
    cores = len(os.sched_getaffinity(0))
    print(f"all switch configs: {total:.2f} s on {cores} cores (goal: <= 30 s for the 24k cluster)")


if __name__ == "__main__":
    main()
