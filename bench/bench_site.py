"""Benchmark: a site of N x 24k RoCE clusters (copies of inventory/reference-roce-24k.yaml with their own pools, ASNs
and management network) joined by a backend aggregation tier of 14 arista-7816r3 (2 uplinks per ATSW: 128 CTSW links
down, 28 up, 4.57:1), room for 6 clusters of 28 ATSWs; written to a temporary folder.

Each step runs in its own `teton` process (TETON_CACHE=off) with its wall time, CPU time and peak RSS (the largest
single process of its tree, from wait4): `plan`, `render --dask off`, `render --dask local --workers 1` and
`--workers 2` (scaling), and `verify OUT` when teton verify takes a site's build (else skipped, with the reason):
solved one destination cluster at a time, 4 x 24k verifies clean with `--fail-each bag` in 1,842 s wall (596 s CPU,
the machine loaded) at 7.7 GiB peak (docs/site.md).  Then
the projection of a 14-cluster site (350k GPUs, Meta's 2024 goal, docs/sources.md) from the measured per-cluster cost
and the memory per worker.

    PYTHONPATH=infra python bench/bench_site.py [--clusters 4] [--keep DIR] [--skip-off] [--skip-verify]
    PYTHONPATH=infra python bench/bench_site.py --grow [--clusters 4]     # teton diff of N against N + 1 clusters
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "inventory" / "reference-roce-24k.yaml"
PROJECTED = 14           # clusters of a 350k-GPU site (14 x 24,576 = 344,064 GPUs)


def cluster_entry(k: int) -> str:
    """Cluster k's copy of the 24k spec: every pool, ASN and the management network moved by k."""
    base = 4200000000 + k * 2000000
    return f"""  - name: c{k:02d}
    spec: roce-24k.yaml
    overrides:
      backend:
        asn: {{atsw: {base}, ctsw: {base + 100}, rtsw: {base + 1000000}, rtsw_zone_stride: 1000}}
        addressing:
          ipv4:
            {{loopbacks: 10.0.{16 * k}.0/20, fabric_links: 10.{2 + 2 * k}.0.0/15, host_links: 10.{64 + 2 * k}.0.0/15}}
          ipv6:
            {{loopbacks: "fd00:0:{k}:1::/64", fabric_links: "fd00:0:{k}:2::/64", host_links: "fd00:{k + 1:x}::/48"}}
      frontend:
        addressing:
          ipv4:
            {{loopbacks: 10.128.{16 * k}.0/20, fabric_links: 10.{129 + k}.0.0/16, host_links: 10.{160 + 16 * k}.0.0/12}}
      management:
        network: 10.250.{32 * k}.0/19
        gateway: 10.250.{32 * k}.1
        prefixes: [10.250.{32 * k}.0/19, 192.0.2.0/24, 198.51.100.0/24]
        domain: c{k:02d}.example.net
      ztp: {{server: "http://10.250.{32 * k}.5:8080"}}
"""


def site_spec(clusters: int) -> str:
    return ("site: bench-site\nlocation: bench-hall\nclusters:\n" + "".join(cluster_entry(k) for k in range(clusters))
            + """bag:
  model: arista-7816r3
  nos: eos
  count: 14
  uplinks_per_atsw: 2
  oversubscription: 4.5
  asn: 4290000000
  addressing:
    ipv4: {loopbacks: 10.1.0.0/27, fabric_links: 10.1.32.0/19}
    ipv6: {loopbacks: "fd00:0:ff:1::/64", fabric_links: "fd00:0:ff:2::/64"}
plan:
  backend: [10.0.0.0/11, 10.64.0.0/11, "fd00::/16"]
  frontend: [10.128.0.0/9]
  management: [10.250.0.0/16]
  asn_first: 4200000000
  asn_last: 4294967294
room: {clusters: 6, atsw_per_cluster: 28}
management:
  network: 10.251.0.0/24
  gateway: 10.251.0.1
  prefixes: [10.251.0.0/24]
  ntp_servers: [192.0.2.123, 198.51.100.123]
  syslog_servers: [192.0.2.51]
  aaa_servers: [192.0.2.49, 198.51.100.49]
""")


WRAPPER = """
import json, resource, subprocess, sys
out, err = open(sys.argv[1] + '.out', 'wb'), open(sys.argv[1] + '.err', 'wb')
rc = subprocess.run(sys.argv[2:], stdout=out, stderr=err).returncode
r = resource.getrusage(resource.RUSAGE_CHILDREN)
json.dump({'rc': rc, 'cpu': r.ru_utime + r.ru_stime, 'rss_kib': r.ru_maxrss}, open(sys.argv[1], 'w'))
"""


def step(name: str, argv: list[str], folder: Path) -> dict[str, Any]:
    """Run `python -m teton.cli ARGV` under a fresh wrapper process (so RUSAGE_CHILDREN is this step's alone): wall,
    CPU (user + system of its whole tree) and peak RSS (the largest single process of the tree)."""
    env = {**os.environ, "TETON_CACHE": "off", "PYTHONPATH": str(ROOT / "infra")}
    res = folder / f"step-{len(list(folder.glob('step-*.json')))}.json"
    t0 = time.monotonic()
    subprocess.run([sys.executable, "-c", WRAPPER, str(res), sys.executable, "-m", "teton.cli", *argv], env=env,
                   cwd=ROOT, check=False)
    wall = time.monotonic() - t0
    got = json.loads(res.read_text())
    row: dict[str, Any] = {"step": name, "rc": got["rc"], "wall_s": round(wall, 1), "cpu_s": round(got["cpu"], 1),
                           "peak_rss_mib": round(got["rss_kib"] / 1024)}
    err = Path(str(res) + ".err").read_text(errors="replace").strip().splitlines()
    if got["rc"] not in (0, 1):
        row["error"] = (err or ["?"])[-1][:300]
    row["stdout"] = Path(str(res) + ".out").read_text(errors="replace")
    return row


def grow(clusters: int, keep: Path | None) -> int:
    """`teton diff SITE SITE+1`: the site of `clusters` against the same site with one more cluster (within its room
    of 6): every existing cluster unchanged, the new one new, the tier's files with added lines only."""
    folder = Path(keep or tempfile.mkdtemp(prefix="teton-bench-grow-"))
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SPEC, folder / "roce-24k.yaml")
    old, new = folder / "site.yaml", folder / "site-grown.yaml"
    old.write_text(site_spec(clusters), encoding="utf-8")
    new.write_text(site_spec(clusters + 1), encoding="utf-8")
    d = step(f"diff {clusters} -> {clusters + 1} clusters", ["diff", str(old), str(new), "--format", "json"], folder)
    out = json.loads(d.pop("stdout") or "{}")
    print(f"{d['step']}: exit {d['rc']}, {d['wall_s']} s wall, {d['cpu_s']} s CPU, {d['peak_rss_mib']} MiB peak"
          + (f"   {d['error']}" if d.get("error") else ""))
    clusters_out = out.get("clusters", {})
    changed = sorted(name for name, r in clusters_out.items() if r.get("devices_changed"))
    print(f"new clusters: {sorted(out.get('new_clusters', {}))}; removed: {sorted(out.get('removed_clusters', {}))}")
    print(f"existing clusters: {len(clusters_out)}, with a device changed: {changed or 'none'}")
    tier = out.get("tier", [])
    switches = [f for f in tier if f["path"].startswith("devices/")]
    removed = [f["path"] for f in switches if f.get("removed")]
    print(f"the tier's switch files changed: {len(switches)}, lines added {sum(f['added'] for f in switches)}, "
          f"removed {sum(f['removed'] for f in switches)}" + (f" (in {removed})" if removed else ""))
    for f in tier:
        if not f["path"].startswith("devices/"):
            print(f"  the tier's {f['path']}: +{f['added']} -{f['removed']}")
    if not keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if d["rc"] == 1 and not changed and not removed else 1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", type=int, default=4)
    ap.add_argument("--keep", type=Path, help="keep the site and its builds in this folder")
    ap.add_argument("--skip-off", action="store_true", help="no render with --dask off")
    ap.add_argument("--skip-verify", action="store_true", help="no `teton verify` of the site (solved one "
                    "destination cluster at a time: see docs/site.md for its time and memory at 4 x 24k)")
    ap.add_argument("--grow", action="store_true", help="only `teton diff` of the site against the same site with "
                    "one more cluster within its room: what changes (the new cluster, the tier's attachment lines)")
    args = ap.parse_args()
    if args.grow:
        return grow(args.clusters, args.keep)
    folder = Path(args.keep or tempfile.mkdtemp(prefix="teton-bench-site-"))
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SPEC, folder / "roce-24k.yaml")
    site = folder / "site.yaml"
    site.write_text(site_spec(args.clusters), encoding="utf-8")
    print(f"site of {args.clusters} x 24k RoCE clusters: {site} (2 cores shared with other jobs: CPU shown too)")
    rows = []
    p = step("plan", ["plan", str(site), "--json"], folder)
    rows.append(p)
    figures = json.loads(p.pop("stdout")) if p["rc"] == 0 else {}
    renders = [] if args.skip_off else [("render --dask off", ["--dask", "off"], "off")]
    renders += [(f"render --dask local --workers {n}", ["--dask", "local", "--workers", str(n)], f"w{n}")
                for n in (1, 2)]
    for label, extra, sub in renders:
        r = step(label, ["render", str(site), "-o", str(folder / f"out-{sub}"), "--json", *extra], folder)
        r.pop("stdout")
        rows.append(r)
    verify_ready = (ROOT / "infra" / "teton" / "site" / "verify.py").is_file()
    if args.skip_verify:
        print("verify: skipped (--skip-verify)")
    elif verify_ready:
        built = [folder / f"out-{s}" for s in ("w2", "w1", "off")]
        target = next((b for b in built if (b / "site.json").is_file()), None)
        if target is not None:
            v = step("verify", ["verify", str(target)], folder)
            v.pop("stdout")
            rows.append(v)
    else:
        print("verify: skipped: teton verify of a site's build (infra/teton/site/verify.py) is not in this tree yet")
    print(f"\n{'step':<34} {'rc':>3} {'wall s':>8} {'CPU s':>8} {'peak RSS MiB':>13}")
    for r in rows:
        print(f"{r['step']:<34} {r['rc']:>3} {r['wall_s']:>8} {r['cpu_s']:>8} {r['peak_rss_mib']:>13}"
              + (f"   {r['error']}" if r.get("error") else ""))
    if figures:
        t = figures["totals"]
        print(f"\nsite: {t['gpus']:,} GPUs, switches {t['switches']}, optics {t['optics']:,}, "
              f"power {t['power_kw']:,} kW; into the tier {figures['tier']['oversubscription']}:1 "
              f"(goal {figures['tier']['goal']}:1)")
    by = {r["step"]: r for r in rows}
    one, two = by.get("render --dask local --workers 1"), by.get("render --dask local --workers 2")
    if one and two and one["rc"] == 0 and two["rc"] == 0:
        per_cluster_wall = one["wall_s"] / args.clusters
        per_cluster_cpu = one["cpu_s"] / args.clusters
        speedup = one["wall_s"] / two["wall_s"]
        print(f"\nscaling 1 -> 2 workers: {one['wall_s']} s -> {two['wall_s']} s ({speedup:.2f}x)")
        print(f"per cluster (1 worker): {per_cluster_wall:.1f} s wall, {per_cluster_cpu:.1f} s CPU; peak RSS of a "
              f"process (the largest worker or the client): {one['peak_rss_mib']} MiB")
        for workers in (2, 14, 28):
            proj = PROJECTED * per_cluster_cpu / workers
            print(f"projection, {PROJECTED} clusters ({PROJECTED * 24576:,} GPUs) on {workers} single-core workers: "
                  f"~{proj:,.0f} s ({proj / 60:.1f} min) + the client's publishing; memory per worker about "
                  f"{one['peak_rss_mib']} MiB (one cluster at a time, whatever the site's size)")
    print("\n(peak RSS: ru_maxrss of the step's process tree, the largest single process: workers are separate "
          "processes, so a worker's memory is at most that)")
    if not args.keep:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if all(r["rc"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
