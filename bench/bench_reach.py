"""Benchmark: the front end's reachability read from a spec's rendered switch configs (`teton.validate.reach`).

Renders the SONiC and EOS configs of the spec into a temporary folder, then times reading the speakers and the
propagation (one breadth-first search per rack prefix over the session graph), and prints what it found.

    .venv/bin/python bench/bench_reach.py [SPEC]     (default: inventory/reference-roce-24k.yaml)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    from teton.build import build_fabric, load_and_design
    from teton.validate.reach import Sessions, frontend_reach, read_speakers

    spec = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "inventory" / "reference-roce-24k.yaml")
    t0 = time.perf_counter()
    fabric = load_and_design(spec).fabric
    with tempfile.TemporaryDirectory() as tmp:
        build = build_fabric(fabric, Path(tmp) / "build", only=("sonic", "eos")).path
        t1 = time.perf_counter()
        speakers = read_speakers(build)
        t2 = time.perf_counter()
        sessions = Sessions.of(speakers)
        reach = frontend_reach(build)
        t3 = time.perf_counter()
    edges = sum(len(p) for p in sessions.peers)
    print(f"{Path(spec).name}: {len(speakers)} speakers, {edges} session ends, {reach.racks} front-end racks")
    print(f"design + render {t1 - t0:.1f} s, read {t2 - t1:.1f} s, reach (read again + propagate) {t3 - t2:.1f} s")
    print(f"racks without a route to some rack: {len(reach.missing)}; leaked link prefixes: {len(reach.leaked)}; "
          f"fewest ECMP next hops: {min(reach.ecmp.values(), default=0)}; with a default route: {len(reach.default)}")


if __name__ == "__main__":
    main()
