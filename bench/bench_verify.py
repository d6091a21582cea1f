"""Benchmark: `teton verify` of the 24k RoCE build, wall time and peak memory, then the `--fail-each ctsw` sweep.

Renders the spec's switch configs and fabric.json into a temporary folder (or takes `--build DIR`), then runs
verify as `teton verify` does (a LocalCluster of one worker per core for a build this size, `--dask` to choose), and
prints the wall time of each step, the peak resident memory of this process and of its largest worker, and the
counts checked.  Goal (issue 22): 60 s and 4 GiB on the 2-core machine.

    .venv/bin/python bench/bench_verify.py [SPEC] [--build DIR] [--dask ADDR] [--no-sweep]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _peak_mib() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return me, workers


def _run(build: Path, dask: str | None, fail_each: str | None) -> None:
    from teton.verify.distributed import mapper_for
    from teton.verify.run import verify

    t0 = time.perf_counter()
    with mapper_for(dask, build) as mapper:
        r = verify(build, fail_each=fail_each, mapper=mapper)
    wall = time.perf_counter() - t0
    me, workers = _peak_mib()
    c = r.counts
    steps = ", ".join(f"{k} {v:.1f} s" for k, v in r.seconds.items())
    what = f"--fail-each {fail_each}" if fail_each else "verify"
    print(f"{what}: {wall:.1f} s wall ({steps}); peak RSS {me:,.0f} MiB here, {workers:,.0f} MiB in the largest "
          f"worker; {c['switches']:,} switches, {c['sessions']['total']:,} sessions, {c['prefixes']['total']:,} "
          f"prefixes, {c['routes']:,} routes; {'clean' if r.ok else f'{len(r.findings)} findings'}")
    if r.sweep is not None and r.sweep["worst"] is not None:
        w = r.sweep["worst"]
        print(f"  {r.sweep['failures']} failures swept in {r.seconds.get('sweep', 0):.1f} s; worst {w['failed']}: "
              f"{w['drop']}; pairs lost {w['pairs_lost']}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("spec", nargs="?", default=str(ROOT / "inventory" / "reference-roce-24k.yaml"))
    ap.add_argument("--build", type=Path, help="a rendered build folder (default: render SPEC into a temporary one)")
    ap.add_argument("--dask", default=None, help="as `teton verify --dask` (default: a LocalCluster at this size)")
    ap.add_argument("--no-sweep", action="store_true", help="skip the --fail-each ctsw sweep")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        build = args.build
        if build is None:
            import teton

            t0 = time.perf_counter()
            build = teton.render(args.spec, Path(tmp) / "build", only=("sonic", "eos", "fabric")).root
            print(f"{Path(args.spec).name}: design + render {time.perf_counter() - t0:.1f} s")
        _run(build, args.dask, None)
        if not args.no_sweep:
            _run(build, args.dask, "ctsw")


if __name__ == "__main__":
    main()
