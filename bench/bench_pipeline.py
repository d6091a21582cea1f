"""Benchmark: wall time and peak memory of validate + plan + render for the 24k reference and a 4x spec.

Each size runs in its own process (peak RSS is per process).  Prints one line per stage and size, then the
determinism check: a second render under another PYTHONHASHSEED must be byte-identical.

    .venv/bin/python bench/bench_pipeline.py [--sizes 1,4] [--skip-determinism]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "inventory" / "reference-roce-24k.yaml"


def scaled_spec(factor: int, folder: Path) -> Path:
    """The 24k reference with factor x the zones (8 -> 32 zones for 4x = 98,304 GPUs); pools widened to fit."""
    data = yaml.safe_load(REF.read_text())
    if factor != 1:
        data["name"] = f"roce-{24 * factor}k"
        data["zones"] *= factor
        data["backend"]["atsw"]["count"] = data["backend"]["atsw"]["count"]  # ATSW keep one link per CTSW
        data["backend"]["atsw"]["model"] = "arista-7816r3"
        be4 = data["backend"]["addressing"]["ipv4"]
        be4.update(loopbacks="10.0.0.0/18", fabric_links="10.4.0.0/14", host_links="10.64.0.0/14")
        data["backend"]["addressing"]["ipv6"]["host_links"] = "fd00:1::/44"
        fe4 = data["frontend"]["addressing"]["ipv4"]
        fe4.update(loopbacks="10.128.0.0/18", fabric_links="10.132.0.0/15", host_links="10.160.0.0/11")
        data["storage"] = [{**s, "racks": s["racks"] * factor} for s in data["storage"]]
        data["management"].update(network="10.240.0.0/16", gateway="10.240.0.1")
        data["management"]["prefixes"][0] = "10.240.0.0/16"
    path = folder / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run_stages(spec: str, out: str, only: tuple[str, ...] | None) -> None:
    """In-process: time each stage of the one build path (the library API's verbs), print JSON with times and peak
    RSS."""
    import teton

    t = {}
    t0 = time.perf_counter()
    fabric = teton.design(spec)          # load, every spec and fabric rule, design
    t["validate"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    figures = teton.plan(fabric)
    t["plan"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    folder = teton.render(fabric, out, only=only, force=True)
    files = len((folder.manifest() or {}).get("files", {}))
    t["render"] = time.perf_counter() - t2
    t["total"] = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"times_s": t, "peak_rss_mib": rss, "gpus": figures["gpus"], "devices": len(fabric.devices),
                      "links": len(fabric.links), "files": files}))


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        if p.is_file():
            h.update(str(p.relative_to(folder)).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4")
    ap.add_argument("--skip-determinism", action="store_true")
    ap.add_argument("--full", action="store_true", help="render every target (switch configs too), not only the "
                    "foundation's fabric.json and cabling.csv")
    ap.add_argument("--stages", nargs=2, metavar=("SPEC", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    only = None if args.full else ("fabric", "cabling")
    if args.stages:
        run_stages(*args.stages, only)
        return
    print(f"targets: {'all' if only is None else ', '.join(only)}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"{'spec':<12} {'GPUs':>7} {'devices':>8} {'links':>8} {'validate':>9} {'plan':>6} {'render':>7} "
              f"{'total':>7} {'peak MiB':>9}")
        for factor in (int(x) for x in args.sizes.split(",")):
            spec = scaled_spec(factor, folder)
            out = folder / f"out-{factor}"
            r = subprocess.run([sys.executable, __file__, *(["--full"] if args.full else []), "--stages", str(spec),
                                str(out)], capture_output=True,
                               text=True, check=False, env=dict(os.environ, PYTHONHASHSEED="0"))
            if r.returncode:
                print(f"{spec.stem}: failed\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
                sys.exit(1)
            m = json.loads(r.stdout.strip().splitlines()[-1])
            t = m["times_s"]
            print(f"{spec.stem:<12} {m['gpus']:>7,} {m['devices']:>8,} {m['links']:>8,} {t['validate']:>8.2f}s "
                  f"{t['plan']:>5.2f}s {t['render']:>6.2f}s {t['total']:>6.2f}s {m['peak_rss_mib']:>9.0f}")
            if factor == 1 and not args.skip_determinism:
                again = folder / "again"
                subprocess.run([sys.executable, __file__, *(["--full"] if args.full else []), "--stages", str(spec),
                                str(again)], capture_output=True,
                               check=True, env=dict(os.environ, PYTHONHASHSEED="4242"))
                same = digest(out) == digest(again)
                print(f"determinism: second render of {spec.stem} under PYTHONHASHSEED=4242 is "
                      f"{'byte-identical' if same else 'DIFFERENT'} ({m['files']} files)")
                if not same:
                    sys.exit(1)


if __name__ == "__main__":
    main()
