"""Benchmark: `teton ztp` of the 24k RoCE build with every switch in the inventory, then Kea's own check of the result.

Renders the spec's switch configs and fabric.json into a temporary folder (the render cache as the CLI uses it:
$TETON_CACHE_DIR, `TETON_CACHE=off` for none), or takes `--build DIR`; writes an inventory of every switch (one
made-up MAC each), runs `write_ztp` and `kea-dhcp4 -t` (or kea-dhcp6's) on the configuration it wrote, each step in
a process of its own (peak RSS is per process), and prints the switches, the reservations, the wall time and peak memory
of the write, the folder's size and how long Kea takes to check it.  Kea must accept it (exit 0).

    .venv/bin/python bench/bench_ztp.py [SPEC] [--build DIR] [--keep DIR]
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

ROOT = Path(__file__).resolve().parents[1]


def inventory_stage(build: str, path: str) -> None:
    """In a child of main: an inventory of every switch of `build` (fabric.json's devices with a NOS, a made-up MAC
    each) written to `path`; how many, as one JSON line."""
    names = [d["name"] for d in json.loads((Path(build) / "fabric.json").read_text())["devices"] if d.get("nos")]
    lines = ["device,mac,serial"]
    for n, name in enumerate(names):
        mac = ":".join(f"{b:02x}" for b in (0x02, 0x7E, 0x70, n >> 16 & 0xFF, n >> 8 & 0xFF, n & 0xFF))
        lines.append(f"{name},{mac},SN{n:06d}")
    Path(path).write_text("\n".join(lines) + "\n")
    print(json.dumps({"switches": len(names)}))


def render_stage(spec: str, out: str) -> None:
    """In a child of main: SPEC's switch configs and fabric.json rendered into OUT (the render cache as the CLI uses
    it), timed, as one JSON line."""
    import teton

    t0 = time.perf_counter()
    teton.render(spec, out, only=("sonic", "eos", "fboss", "fabric"), cache=True)
    print(json.dumps({"wall_s": time.perf_counter() - t0}))


def write_stage(build: str, inv: str, out: str) -> None:
    """In a child of main: write_ztp timed, with this process's peak RSS, as one JSON line."""
    from teton.ztp.write import write_ztp

    t0 = time.perf_counter()
    summary = write_ztp(Path(build), Path(inv), Path(out))
    wall = time.perf_counter() - t0
    print(json.dumps({"wall_s": wall, "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "kea": summary.kea, "provisionable": sum(summary.provisionable.values()),
                      "not_provisionable": sum(len(v) for v in summary.not_provisionable.values())}))


def kea_binary(config: str) -> str:
    name = "kea-dhcp6" if "dhcp6" in config else "kea-dhcp4"
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin")
    if found is None:
        sys.exit(f"{name} is not installed (scripts/setup installs Debian's kea-dhcp4-server and kea-dhcp6-server)")
    return found


def kea_stage(binary: str, config: str) -> None:
    """In a child of main: `kea-dhcp4 -t CONFIG`, Kea's own parser over the whole configuration, timed, with Kea's
    peak RSS (at least this small process's), as one JSON line."""
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "-t", config], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         env={**os.environ, "KEA_LOCKFILE_DIR": "none"})
    assert p.stdout is not None
    said = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    print(json.dumps({"exit": p.returncode, "wall_s": time.perf_counter() - t0, "peak_rss_mib": usage.ru_maxrss / 1024,
                      "output": said.decode(errors="replace")[-3000:]}))


def stage(*args: str) -> dict:
    """This script run with `args` in a child process; the JSON line it prints.  Every stage runs in a child and main
    holds nothing large: a child's peak RSS counts the process it was forked from."""
    path = [str(ROOT / "infra"), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path)}
    r = subprocess.run([sys.executable, __file__, "--stage", *args], capture_output=True, text=True, env=env,
                       check=False)
    if r.returncode:
        sys.exit(f"{args[0]} failed (exit {r.returncode})\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


STAGES = {"render": render_stage, "inventory": inventory_stage, "write": write_stage, "kea": kea_stage}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("spec", nargs="?", default=str(ROOT / "inventory" / "reference-roce-24k.yaml"))
    ap.add_argument("--build", type=Path, help="a rendered build folder (default: render SPEC into a temporary one)")
    ap.add_argument("--keep", type=Path, help="write the ZTP folder here and keep it")
    ap.add_argument("--stage", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stage:
        STAGES[args.stage[0]](*args.stage[1:])
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        build = args.build
        if build is None:
            build = work / "build"
            r = stage("render", args.spec, str(build))
            print(f"{Path(args.spec).name}: design + render {r['wall_s']:.1f} s")
        inv = work / "inventory.csv"
        switches = stage("inventory", str(build), str(inv))["switches"]
        out = args.keep or work / "ztp"
        m = stage("write", str(build), str(inv), str(out))
        files = [p for p in out.rglob("*") if p.is_file()]
        size = sum(p.stat().st_size for p in files)
        config = out / m["kea"]
        family = 6 if "dhcp6" in m["kea"] else 4
        reservations = len(json.loads(config.read_text())[f"Dhcp{family}"][f"subnet{family}"][0]["reservations"])
        kea = stage("kea", kea_binary(m["kea"]), str(config))
        print(f"switches {switches:,} (inventory rows), provisionable {m['provisionable']:,}, "
              f"reservations {reservations:,}")
        print(f"write_ztp: {m['wall_s']:.1f} s wall, peak RSS {m['peak_rss_mib']:,.0f} MiB; folder "
              f"{size / 1e6:,.0f} MB in {len(files):,} files")
        print(f"{Path(kea_binary(m['kea'])).name} -t: {kea['wall_s']:.2f} s, peak RSS {kea['peak_rss_mib']:,.0f} MiB, "
              f"exit {kea['exit']}")
        assert kea["exit"] == 0, kea["output"]
        assert switches == m["provisionable"] == reservations and m["not_provisionable"] == 0


if __name__ == "__main__":
    main()
