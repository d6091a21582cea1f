"""Benchmark: the 24k cluster's Ansible inventory and host variables (3,072 GPU hosts plus storage) rendered and
validated against the JSON Schema and every role's argument spec, and the Slurm files.  Goal: <= 5 s for the inventory.

    .venv/bin/python bench/bench_hosts.py [SPEC]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "infra"))

from teton.pipeline import load_and_design  # noqa: E402
from teton.targets import RenderContext, get  # noqa: E402


def main() -> None:
    spec = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "inventory/reference-roce-24k.yaml")
    t0 = time.perf_counter()
    fabric = load_and_design(spec).fabric
    t1 = time.perf_counter()
    files = get("ansible").render(fabric, RenderContext(validate=True))
    t2 = time.perf_counter()
    slurm = get("slurm").render(fabric, RenderContext())
    t3 = time.perf_counter()
    hosts = sum(1 for f in files if f.startswith("ansible/host_vars/"))
    print(f"spec: {spec}")
    print(f"design: {t1 - t0:.2f} s  ({len(fabric.by_role('host')):,} GPU hosts, "
          f"{len(fabric.by_role('storage')):,} storage servers)")
    print(f"ansible inventory + host_vars rendered and validated: {t2 - t1:.2f} s  ({hosts:,} host files, "
          f"{sum(len(t) for t in files.values()) / 2**20:.1f} MiB)  goal <= 5 s: {'ok' if t2 - t1 <= 5 else 'MISSED'}")
    size = sum(len(t) for t in slurm.values()) / 2**20
    print(f"slurm.conf, gres.conf, topology.conf: {t3 - t2:.2f} s  ({size:.1f} MiB)")


if __name__ == "__main__":
    main()
