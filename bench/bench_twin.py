"""Benchmark: how big a digital twin this machine holds.  Needs root.

For growing copies of the 24k reference (same tiers, models, ASN and address plan; fewer zones, racks and spine
planes; backend only) it runs `twin up`, `twin verify` (same-rail pings sampled), a CTSW failure, `twin restore` and
`twin down`, printing switches, hosts, links, times and the FRR daemons' memory.  Stops at the first size that fails
or takes longer than --limit seconds to converge.

    .venv/bin/python bench/bench_twin.py [--sizes 2x2x4,2x8x4,4x8x4,4x16x4,8x16x4] [--limit 120]
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


def scaled(zones: int, racks: int, ctsw: int, folder: Path) -> Path:
    data = yaml.safe_load((ROOT / "inventory" / "reference-roce-24k.yaml").read_text())
    data.update(name=f"tw{zones}x{racks}x{ctsw}", zones=zones, racks_per_zone=racks)
    data.pop("frontend")
    data.pop("storage")
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
    ap.add_argument("--sizes", default="2x2x4,2x8x4,4x8x4,4x16x4,8x16x4")
    ap.add_argument("--limit", type=float, default=120.0)
    args = ap.parse_args()
    print(f"{'size':<9} {'switches':>8} {'hosts':>6} {'links':>6} {'up+conv s':>9} {'conv s':>7} {'verify s':>8} "
          f"{'pings':>6} {'ctsw fail s':>11} {'restore s':>9} {'FRR MiB':>8} {'MiB/sw':>7} ok")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.sizes.split(","):
            z, r, c = (int(x) for x in size.split("x"))
            spec = str(scaled(z, r, c, Path(tmp)))
            service.down(spec)
            t0 = time.monotonic()
            try:
                up = service.up(spec)
                up_s = time.monotonic() - t0
                v = service.verify(spec, ping_sample=512)
                failed = service.fail(spec, "z01-ctsw01")
                after = service.verify(spec, ping_sample=256)
                back = service.restore(spec)
            except Exception as exc:  # report the size that broke, then stop
                print(f"{size:<9} failed: {type(exc).__name__}: {str(exc)[:300]}")
                service.down(spec)
                sys.exit(1)
            finally:
                pass
            service.down(spec)
            ok = v.ok and after.ok and not failed.reconvergence.ecmp_mismatched
            sw = up.switches
            print(f"{size:<9} {sw:>8} {up.hosts:>6} {up.links:>6} {up_s:>9.1f} {up.converged_s:>7.2f} "
                  f"{v.bgp.seconds + v.same_rail_ping.seconds + v.ecmp.seconds:>8.2f} "
                  f"{v.same_rail_ping.pinged:>6} {failed.reconvergence.ecmp_settled_s:>11.3f} "
                  f"{back.reconvergence.ecmp_settled_s:>9.2f} {up.daemon_rss_mib:>8.0f} "
                  f"{up.daemon_rss_mib / sw:>7.1f} {'yes' if ok else 'NO ' + json.dumps(v.to_json())[:200]}",
                  flush=True)
            if up.converged_s > args.limit or not ok:
                break


if __name__ == "__main__":
    main()
