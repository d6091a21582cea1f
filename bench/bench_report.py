"""Benchmark: `teton docs` on a spec: the report's size, how long writing it takes, and how long Debian's Chromium
(headless) takes to have it loaded, browser start included, against the goal of 5 s (the 24k report, issue 25).

    .venv/bin/python bench/bench_report.py [SPEC] [--runs N]     (default: inventory/reference-roce-24k.yaml, 3 runs)
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
GOAL_S = 5.0
MAX_MB = 20.0


def main() -> None:
    import teton
    from tests.report.chromium import CHROMIUM, dump_dom
    from teton.report import write_report

    ap = argparse.ArgumentParser()
    ap.add_argument("spec", nargs="?", default=str(ROOT / "inventory" / "reference-roce-24k.yaml"))
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tt-bench-report-") as tmp:
        out = Path(tmp)
        t0 = time.perf_counter()
        folder = teton.render(args.spec, out / "build")
        t1 = time.perf_counter()
        index = write_report(folder.fabric(), out, folder)
        t2 = time.perf_counter()
        size_mb = index.stat().st_size / 1024 / 1024
        print(f"render {t1 - t0:.1f} s, report {t2 - t1:.2f} s, {size_mb:.1f} MB (limit {MAX_MB:.0f} MB)")
        if CHROMIUM is None:
            print("no chromium: scripts/setup installs Debian's")
            return
        empty = out / "empty.html"
        empty.write_text("<!DOCTYPE html><title>x</title>")
        start = statistics.median(dump_dom(empty)[1] for _ in range(args.runs))
        loads = [dump_dom(index)[1] for _ in range(args.runs)]
        median = statistics.median(loads)
        print(f"chromium --dump-dom: {', '.join(f'{s:.2f}' for s in loads)} s (median {median:.2f} s; an empty page "
              f"{start:.2f} s): {'within' if median < GOAL_S else 'OVER'} the {GOAL_S:.0f} s goal")


if __name__ == "__main__":
    main()
