"""Benchmark: how big a digital twin this machine holds.  Needs root.

For growing copies of the 24k reference (same tiers, models, ASN and address plan; fewer zones, racks and spines;
the backend and the front end: 2 FSWs per zone, 2 spine planes of 1, a Tectonic and a Hammerspace rack of 2 servers
each, the Slurm controller) it runs `twin up`, `twin verify` (pings sampled), a CTSW failure and an FSW failure,
`twin restore` and `twin down`, printing switches, hosts, links, times and the FRR daemons' memory.  Stops at the
first size that fails, that `teton.twin.capacity` refuses, or that takes longer than --limit seconds to converge.

    .venv/bin/python bench/bench_twin.py [--sizes 2x2x4,2x8x4,4x8x4,4x12x4,6x12x4] [--limit 120] [--backend-only]
    (a size is ZONESxRACKSxCTSW-per-zone; 2 hosts per rack, 2 ATSW)
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]


def scaled(zones: int, racks: int, ctsw: int, folder: Path, front: bool = True) -> Path:
    data = yaml.safe_load((ROOT / "inventory" / "reference-roce-24k.yaml").read_text())
    data.update(name=f"tw{zones}x{racks}x{ctsw}", zones=zones, racks_per_zone=racks)
    if front:
        fe = data["frontend"]
        fe["fsw"]["model"] = "arista-7804r3"
        fe["ssw"].update(per_plane=1, uplinks_per_ssw=1)
        fe["fsw_per_zone"] = 2
        for group in data["storage"]:
            group.update(racks=1, servers_per_rack=2)
    else:
        for key in ("frontend", "storage", "services"):
            data.pop(key, None)
    be = data["backend"]
    be["ctsw"].update(per_zone=ctsw, model="arista-7804r3")
    be["atsw"].update(count=2, model="arista-7804r3")
    be["rtsw"]["oversubscription"] = 16 / ctsw
    be["ctsw"]["oversubscription"] = racks / 2
    path = folder / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def main() -> None:
    from teton.twin import service

    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="2x2x4,2x8x4,4x8x4,4x12x4,6x12x4")
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--backend-only", action="store_true", help="no front end, storage or service hosts")
    args = ap.parse_args()
    print(f"{'size':<9} {'switches':>8} {'hosts':>6} {'links':>6} {'up+conv s':>9} {'conv s':>7} {'verify s':>8} "
          f"{'pings':>6} {'ctsw fail s':>11} {'fsw fail s':>10} {'restore s':>9} {'FRR MiB':>8} {'MiB/sw':>7} ok")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            z, r, c = (int(x) for x in size.split("x"))
            spec = str(scaled(z, r, c, Path(tmp), front=not args.backend_only))
            service.down(spec)
            t0 = time.monotonic()
            try:
                up = service.up(spec)
                up_s = time.monotonic() - t0
                v = service.verify(spec, ping_sample=512)
                failed = service.fail(spec, "z01-ctsw01")
                after = service.verify(spec, ping_sample=256)
                back = service.restore(spec)
                fsw = service.fail(spec, "z01-fsw01") if not args.backend_only else None
                if fsw is not None:
                    back = service.restore(spec)
            except Exception as exc:  # report the size that broke, then stop
                print(f"{size:<9} failed: {type(exc).__name__}: {str(exc)[:300]}")
                service.down(spec)
                sys.exit(1)
            service.down(spec)
            ok = v.ok and after.ok and failed.survived and (fsw is None or fsw.survived)
            fsw_s = f"{fsw.reconvergence.ecmp_settled_s:>10.3f}" if fsw is not None else f"{'-':>10}"
            sw = up.switches
            verify_s = v.bgp.seconds + v.same_rail_ping.seconds + v.ecmp.seconds
            verify_s += v.frontend_ping.seconds if v.frontend_ping else 0
            print(f"{size:<9} {sw:>8} {up.hosts:>6} {up.links:>6} {up_s:>9.1f} {up.converged_s:>7.2f} "
                  f"{verify_s:>8.2f} "
                  f"{v.same_rail_ping.pinged + (v.frontend_ping.pinged if v.frontend_ping else 0):>6} "
                  f"{failed.reconvergence.ecmp_settled_s:>11.3f} {fsw_s} "
                  f"{back.reconvergence.ecmp_settled_s:>9.2f} {up.daemon_rss_mib:>8.0f} "
                  f"{up.daemon_rss_mib / sw:>7.1f} {'yes' if ok else 'NO ' + json.dumps(v.to_json())[:200]}",
                  flush=True)
            if up.converged_s > args.limit or not ok:
                break


if __name__ == "__main__":
    main()
