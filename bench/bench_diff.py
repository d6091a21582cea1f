"""Benchmark: `teton diff` of a one-rack change and of a zone added on the 24k reference, and `teton render` with the
render cache.

Every figure is the wall time of the command line (`teton ...` in a fresh process, as a user or CI runs it), with its
own empty render cache ($TETON_CACHE_DIR in a temporary folder), and the CPU time it used (with its workers): on a
busy machine the wall time grows, the CPU time does not.  The cache trusts nothing across code changes, so run it on
a tree nobody edits meanwhile (e.g. a copy: `PYTHONPATH=COPY/infra python COPY/bench/bench_diff.py`).

1. diff, cold:     an empty cache; both sides designed, only the devices that differ rendered;      goal <= 15 s
2. diff, warm:     the same diff again: both sides replayed from their records;                     goal <= 3 s
2b. diff, zone added: another empty cache; `zones` one more (8 -> 9): the verdict and the devices per class
                   (added, attached, renumbered, changed: `teton.diff.classify`)
2c. diff, RoCE DSCP: another empty cache; the RoCE DSCP changed: every backend device with a QoS, HIGH
2d. diff, one ATSW fewer: another empty cache; 28 -> 27 ATSWs within the room: every CTSW and the removed ATSW, a
                   decommission (2c and 2d are tests on the lab, tests/diff/test_fabric_wide_changes.py)
3. render, cold:   the whole 24k build into another empty cache
4. render, warm:   the same spec again, nothing changed: replayed from the cache, written, manifest; goal <= 3 s
5. render, one rack: a one-rack change after 4: only that rack's switches rendered again
6. diff, base rendered: after 3-5 (as CI that renders main), another one-rack change: only its side is designed

    .venv/bin/python bench/bench_diff.py [--skip-full]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
REF = ROOT / "inventory" / "reference-roce-24k.yaml"
TETON = [sys.executable, "-m", "teton.cli"]
GOALS = {"diff, cold": 15.0, "diff, warm": 3.0, "render, warm (nothing changed)": 3.0}


def one_rack(folder: Path, rack: str, name: str) -> Path:
    return edited(folder, name, lambda data: data.setdefault("racks", {}).update({rack: {"hosts": 1}}))


def edited(folder: Path, name: str, change) -> Path:
    """The reference with `change(data)` applied."""
    data = yaml.safe_load(REF.read_text())
    change(data)
    path = folder / name
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _zone_added(data: dict) -> None:
    data["zones"] += 1          # only `zones`: a spec that declares `room:` keeps its room


def _other_dscp(data: dict) -> None:
    qos = data["backend"]["qos"]
    qos["roce_dscp"] = next(x for x in (24, 28, 30, 34) if x not in (qos["roce_dscp"], qos["cnp_dscp"]))


def _one_atsw_fewer(data: dict) -> None:
    data["backend"]["atsw"]["count"] -= 1
    data["backend"]["ctsw"]["oversubscription"] = data["racks_per_zone"] / data["backend"]["atsw"]["count"]


def classes(report: Path) -> str:
    """The verdict and the device counts per class of a JSON diff report."""
    data = json.loads(report.read_text())
    n = data["classification"]["counts"]
    kind = data["classification"]["kind"] or "not an expansion"
    return (f"verdict {data['verdict']}, {kind}: {n['added']:,} added, {n['removed']:,} removed, "
            f"{n['attached']:,} attached, {n['renumbered']:,} renumbered, {n['changed']:,} changed")


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(label: str, args: list[str], env: dict[str, str], ok: tuple[int, ...] = (0,)) -> tuple[float, float, str]:
    t0, c0 = time.perf_counter(), _cpu()
    done = subprocess.run([*TETON, *args], env=env, capture_output=True, text=True, cwd=ROOT)
    wall, cpu = time.perf_counter() - t0, _cpu() - c0
    if done.returncode not in ok:
        sys.exit(f"{label}: exit {done.returncode}\n{done.stderr[-2000:]}")
    return wall, cpu, done.stderr


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-full", action="store_true", help="skip the full renders (4-6)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-diff-"))
    rows: list[tuple[str, float, float, str]] = []
    try:
        env = {**os.environ, "TETON_CACHE_DIR": str(tmp / "cache")}
        env.pop("TETON_CACHE", None)
        base = tmp / "base.yaml"
        shutil.copy(REF, base)
        changed = one_rack(tmp, "z03-r100", "rack-a.yaml")
        diff = ["diff", str(base), str(changed), "--format", "markdown", "-o", str(tmp / "diff.md")]
        wall, cpu, err = timed("diff cold", diff, env, (1,))
        rows.append(("diff, cold", wall, cpu, err.strip().splitlines()[-1]))
        wall, cpu, err = timed("diff warm", diff, env, (1,))
        rows.append(("diff, warm", wall, cpu, err.strip().splitlines()[-1]))
        zone_env = {**env, "TETON_CACHE_DIR": str(tmp / "cache-zone")}      # cold: an empty cache of its own
        zone = ["diff", str(base), str(edited(tmp, "zone-added.yaml", _zone_added)), "--format", "json", "-o",
                str(tmp / "zone.json")]
        wall, cpu, _ = timed("diff zone added", zone, zone_env, (1, 2))       # 2: HIGH (a renumbering)
        rows.append(("diff, zone added (cold)", wall, cpu, classes(tmp / "zone.json")))
        for label, name, change in (("diff, RoCE DSCP (cold)", "dscp.yaml", _other_dscp),
                                     ("diff, one ATSW fewer (cold)", "atsw.yaml", _one_atsw_fewer)):
            report = tmp / f"{name}.json"
            case = ["diff", str(base), str(edited(tmp, name, change)), "--format", "json", "-o", str(report)]
            wall, cpu, _ = timed(label, case, {**env, "TETON_CACHE_DIR": str(tmp / f"cache-{name}")}, (1, 2))
            rows.append((label, wall, cpu, classes(report)))
        if not args.skip_full:
            out = ["render", str(base), "-o", str(tmp / "build"), "--force"]
            cold_env = {**env, "TETON_CACHE_DIR": str(tmp / "cache-render")}
            wall, cpu, err = timed("render cold", out, cold_env)
            rows.append(("render, cold", wall, cpu, err.strip().splitlines()[-1]))
            wall, cpu, err = timed("render warm", out, cold_env)
            rows.append(("render, warm (nothing changed)", wall, cpu, err.strip().splitlines()[-1]))
            wall, cpu, err = timed("render one rack", ["render", str(changed), "-o", str(tmp / "build"), "--force"],
                                   cold_env)
            rows.append(("render, one rack changed", wall, cpu, err.strip().splitlines()[-1]))
            other = one_rack(tmp, "z05-r007", "rack-b.yaml")
            wall, cpu, err = timed("diff base rendered", ["diff", str(base), str(other), "--format", "json", "-o",
                                                          str(tmp / "diff.json")], cold_env, (1,))
            verdict = json.loads((tmp / "diff.json").read_text())
            rows.append(("diff, base rendered, new change", wall, cpu, f"verdict {verdict['verdict']}, "
                         f"{len(verdict['devices_changed'])} devices: {', '.join(verdict['devices_changed'])}"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cores = len(os.sched_getaffinity(0))
    print(f"24k reference ({REF.name}), {cores} cores, load average {os.getloadavg()[0]:.1f}")
    print(f"{'':<32} {'wall s':>7} {'CPU s':>6} {'goal':>5}       detail")
    for label, wall, cpu, detail in rows:
        goal = GOALS.get(label)
        mark = "" if goal is None else ("ok" if wall <= goal else "OVER")
        print(f"{label:<32} {wall:>7.1f} {cpu:>6.1f} {(f'{goal:g}' if goal else ''):>5} {mark:>4}  {detail}")


if __name__ == "__main__":
    main()
