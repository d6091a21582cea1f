"""Benchmark: the FBOSS configs of the 24k reference with FBOSS rack switches (RTSWs on Minipack2, front-end RSWs on
Wedge400), rendered and strict-checked, in ms per FBOSS device: on all cores as `teton render` does, then on one core
split into its parts (spelling the two configs, the schema walk, the cross-references, writing JSON).

    .venv/bin/python bench/bench_fboss.py [SPEC]     (default: inventory/reference-roce-24k.yaml)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    import tempfile

    from tests.helpers import fboss
    from teton.pipeline import load_and_design
    from teton.targets import RenderContext, get
    from teton.targets.fboss.agent import agent_config, dump_json
    from teton.targets.fboss.bgp import bgp_config
    from teton.targets.fboss.crossref import check_agent, check_bgp
    from teton.targets.fboss.strict import BGP_ROOT, agent_schema_findings, load_state
    from teton.targets.fboss.walk import walk

    spec = Path(sys.argv[1] if len(sys.argv) > 1 else ROOT / "inventory" / "reference-roce-24k.yaml")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / spec.name
        path.write_text(yaml.safe_dump(fboss(yaml.safe_load(spec.read_text())), sort_keys=False))
        t0 = time.perf_counter()
        fabric = load_and_design(path).fabric
        design_s = time.perf_counter() - t0
    target = get("fboss")
    devices = target.devices(fabric)
    t0 = time.perf_counter()
    state = load_state()
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    files = target.render(fabric, RenderContext())
    wall = time.perf_counter() - t0
    size = sum(len(t) for t in files.values())
    print(f"{spec.name} with FBOSS rack switches: designed in {design_s:.1f} s; {len(devices):,} FBOSS switches, "
          f"{len(files):,} files, {size / 1e6:.0f} MB")
    print(f"reference files loaded (IDL parsed with thriftpy2): {load_s * 1000:.0f} ms")
    cores = len(os.sched_getaffinity(0))
    print(f"render + strict check on {cores} cores: {wall:.2f} s, {wall / len(devices) * 1000:.2f} ms/device (wall)")
    parts = {"spell": 0.0, "walk": 0.0, "xref": 0.0, "json": 0.0}
    sample = devices[: min(len(devices), 200)]
    for d in sample:
        platform = fabric.models[d.model].platform["fboss"]
        pm = state.platform(platform)
        t = time.perf_counter()
        agent, _ = agent_config(fabric, d, pm, state.base(platform), state.schema.deprecated, "x")
        assert d.routing is not None
        bgp = bgp_config(d.routing, {p["name"]: p["logicalID"] for p in agent["sw"]["ports"]})
        t1 = time.perf_counter()
        agent_schema_findings(state, platform, "x", agent)     # the box's base platform section walked once
        walk(state.schema, bgp, BGP_ROOT)
        t2 = time.perf_counter()
        check_agent(agent, pm, state.profile_names)
        check_bgp(bgp, {p["logicalID"] for p in agent["sw"]["ports"]})
        t3 = time.perf_counter()
        dump_json(agent)
        dump_json(bgp)
        t4 = time.perf_counter()
        for k, v in zip(parts, (t1 - t, t2 - t1, t3 - t2, t4 - t3), strict=True):
            parts[k] += v
    n = len(sample)
    per = {k: v / n * 1000 for k, v in parts.items()}
    print(f"one core, {n} devices: {sum(per.values()):.2f} ms/device = " +
          ", ".join(f"{k} {v:.2f}" for k, v in per.items()))


if __name__ == "__main__":
    main()
