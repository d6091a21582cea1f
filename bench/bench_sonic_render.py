"""Benchmark: CPU ms per SONiC switch of the 24k RoCE reference's render, by part, in one process.

    PYTHONPATH=infra .venv/bin/python bench/bench_sonic_render.py [--spec SPEC] [--every N] [--rounds R]

Renders every N-th SONiC switch (in the render's order: one SplitValidator for all, as one chunk would) R times, the
first round with a fresh validator and cold per-process text caches, as a cold render's chunk starts, and prints for
each part the CPU milliseconds per switch (time.process_time; the machine is shared: CPU is steadier than wall):
config_db (config_db + neighbour_tables), yang (SplitValidator.validate, with libyang's parse, the translation and
the serialisation inside it), dump (dump_config_db), frr (render_frr), and the libyang call count per switch.  The
cyclic garbage collector is off, as in the render (`teton.pipeline.record.paused_gc`).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "inventory" / "reference-roce-24k.yaml"


class Clock:
    """CPU seconds spent inside wrapped functions (outermost call only per name)."""

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.depth: dict[str, int] = {}

    def wrap(self, owner: Any, attr: str, name: str) -> None:
        fn = getattr(owner, attr)
        static = isinstance(owner.__dict__.get(attr), staticmethod) if isinstance(owner, type) else False

        def timed(*a: Any, **k: Any) -> Any:
            if self.depth.get(name):
                return fn(*a, **k)
            self.depth[name] = 1
            t = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                self.spent[name] = self.spent.get(name, 0.0) + time.process_time() - t
                self.depth[name] = 0
        setattr(owner, attr, staticmethod(timed) if static else timed)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default=str(REF))
    ap.add_argument("--every", type=int, default=10, help="render every N-th SONiC switch")
    ap.add_argument("--rounds", type=int, default=1)
    args = ap.parse_args()

    from teton.pipeline import load_and_design
    from teton.targets import RenderContext, get, reference_folders
    from teton.targets import frr as frr_mod
    from teton.targets import sonic as sonic_mod
    from teton.targets.sonic import yang as yang_mod
    from teton.targets.sonic.validate import SplitValidator
    cdb = importlib.import_module("teton.targets.sonic.config_db")

    gc.disable()        # as the render runs (teton.pipeline.record.paused_gc)
    t0 = time.process_time()
    fabric = load_and_design(args.spec).fabric
    print(f"load+design: {time.process_time() - t0:.1f} s CPU", flush=True)
    target = get("sonic")
    ctx = RenderContext(folders=reference_folders({"--yang-dir": None}))
    devices = target.devices(fabric)[::args.every]

    clock = Clock()
    clock.wrap(sonic_mod, "config_db", "config_db")
    clock.wrap(sonic_mod, "neighbour_tables", "config_db")
    clock.wrap(sonic_mod, "dump_config_db", "dump")
    clock.wrap(sonic_mod, "render_frr", "frr")
    clock.wrap(frr_mod, "frr_context", "frr.context")
    clock.wrap(SplitValidator, "validate", "yang")
    V = yang_mod.SonicYangValidator
    clock.wrap(V, "_parse", "yang.parse")
    clock.wrap(V, "_translate", "yang.translate")
    clock.wrap(V, "_serialize", "yang.serialize")
    clock.wrap(sonic_mod.SonicTarget, "render_device", "total")

    results: list[dict[str, Any]] = []
    for r in range(args.rounds):
        cdb._ROW_TEXT.clear()
        cdb._TABLE_TEXT.clear()
        state = target.chunk_state(ctx)
        state.yang._rows.clear()
        clock.spent.clear()
        n = 0
        for d in devices:
            target.render_device(fabric, d, ctx, state)
            n += 1
        calls = state.calls
        row = {"round": r, "switches": n, "libyang_calls_per_switch": round(calls / n, 3),
               **{k: round(1000 * v / n, 3) for k, v in sorted(clock.spent.items())}}
        results.append(row)
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
