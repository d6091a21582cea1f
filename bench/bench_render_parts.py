"""Benchmark: a cold render of the 24k RoCE reference (TETON_CACHE=off), wall and CPU (self + children), and the time
of each target rendered alone in one process; with --base, the same render by another checkout (a `git worktree add`
of an earlier commit) and the sha256 of every file of both builds compared (manifest.json included: it holds only
hashes, sizes, figures and versions).

    .venv/bin/python bench/bench_render_parts.py [--spec SPEC] [--base /tmp/base-checkout] [--per-target]

Each render runs in its own process (`--one OUT`), with PYTHONPATH set to the checkout's infra/.  The machine is
shared with whatever else runs: CPU seconds are steadier than wall seconds.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "inventory" / "reference-roce-24k.yaml"


def one(spec: str, out: str, per_target: bool) -> None:
    """In-process: the cold render and write of `spec` into `out`; prints JSON."""
    t0, c0 = time.perf_counter(), os.times()
    from teton.pipeline import build
    b = build(spec, Path(out), force=True, cache=None)
    c1 = os.times()
    result = {"wall": time.perf_counter() - t0, "files": b.files,
              "cpu": (c1.user + c1.system + c1.children_user + c1.children_system)
              - (c0.user + c0.system + c0.children_user + c0.children_system)}
    if per_target:
        os.environ["TETON_WORKERS"] = "1"
        from teton import targets
        from teton.pipeline import load_and_design
        from teton.targets import RenderContext, reference_folders
        fabric = load_and_design(spec).fabric
        ctx = RenderContext(folders=reference_folders({"--yang-dir": None}))
        times = {}
        for t in targets.targets():
            s = time.perf_counter()
            t.render(fabric, ctx)
            times[t.name] = round(time.perf_counter() - s, 2)
        result["per_target_one_worker"] = times
    print(json.dumps(result))


def run(infra: Path, spec: Path, out: Path, per_target: bool) -> dict:
    env = {**os.environ, "PYTHONPATH": str(infra), "TETON_CACHE": "off"}
    cmd = [sys.executable, __file__, "--one", str(out), "--spec", str(spec)] + (["--per-target"] if per_target else [])
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spec", default=str(REF))
    ap.add_argument("--base", help="another checkout (its infra/ is put on PYTHONPATH) to compare with")
    ap.add_argument("--per-target", action="store_true", help="also time each target alone, in one process")
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        one(args.spec, args.one, args.per_target)
        return
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"this": ROOT} | ({"base": Path(args.base)} if args.base else {})
        got = {}
        for name, checkout in sides.items():
            got[name] = run(checkout / "infra", Path(args.spec), Path(tmp) / name, args.per_target)
            print(name, json.dumps(got[name]), flush=True)
        if args.base:
            a, b = hashes(Path(tmp) / "this"), hashes(Path(tmp) / "base")
            differ = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))
            print(f"files: {len(a)} this, {len(b)} base; differing: {len(differ)}", differ[:20])
            if differ:
                sys.exit(1)


if __name__ == "__main__":
    main()
