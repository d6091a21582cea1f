"""Benchmark: the largest simulated InfiniBand fabric a real OpenSM routes on this machine in under a minute.

Fabrics of growing size are cut from the 24k InfiniBand reference (inventory/reference-ib-24k.yaml: SUs of 32 Grand
Teton nodes, 8 rails, QM9700 leaves, spines and cores, ftree, QoS): the number of SUs grows, everything else is the
reference's.  Each is designed and its subnet manager files rendered (the OpenSM target, in process), ibsim loads its
topology.net, and one OpenSM sweep (`opensm -o`: discover, route with ftree, push the forwarding tables, P_Keys and
SL2VL, SUBNET UP) runs from the master's HCA.  A size counts only if the log says ftree configured every switch, the
subnet came up and no error was logged.  Stops after the first size over the budget.

    .venv/bin/python bench/bench_ib.py [--sus 1,2,4,8,16,32,48,64,96] [--budget 60] [--no-qos]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.ib.simulator import Simulator, opensm_log_problems  # noqa: E402
from teton.design import design  # noqa: E402
from teton.fabric.plan import plan  # noqa: E402
from teton.secrets import resolve  # noqa: E402
from teton.spec.model import Cluster  # noqa: E402
from teton.targets import RenderContext  # noqa: E402
from teton.targets.opensm import TARGET  # noqa: E402

REF = ROOT / "inventory" / "reference-ib-24k.yaml"


def _fabric(sus: int, folder: Path, qos: bool):
    data = yaml.safe_load(REF.read_text())
    data.update(name=f"ib-{sus}su", zones=sus, frontend=None, storage=[])
    data["backend"]["qos"]["enabled"] = qos
    data["management"].pop("network", None)
    data["backend"]["subnet_manager"].update(config_dir=str(folder / "etc"), log_dir=str(folder / "log"))
    return design(Cluster.model_validate(data))


def _children_peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def run(sus: int, budget: float, qos: bool) -> tuple[dict[str, object], bool]:
    with tempfile.TemporaryDirectory(prefix=f"teton-ib-{sus}-") as tmp:
        folder = Path(tmp)
        t0 = time.monotonic()
        f = _fabric(sus, folder, qos)
        files = TARGET.render(f, RenderContext(validate=False))
        design_s = time.monotonic() - t0
        for d in ("etc", "log"):
            (folder / d).mkdir()
        for rel, text in files.items():
            (folder / "etc" / Path(rel).name).write_text(resolve(text, {"ib_sm_key": "0x1"}))
        p = plan(f)
        switches, hcas = sum(p["switches"].values()), p["hosts"] * len(f.subnet_manager.hcas)
        sm = f.subnet_manager.instances[0]
        row: dict[str, object] = {"sus": sus, "levels": p["fat_tree"]["levels"], "switches": switches,
                                  "hcas": hcas, "links": sum(p["links"].values()), "design_s": round(design_s, 1)}
        t1 = time.monotonic()
        ports = sum(len(d.ports) + 1 for d in f.devices.values() if d.nos == "opensm") + 2 * hcas
        with Simulator(folder / "etc" / "topology.net", folder / "sim", switches=switches + 16,
                       nodes=switches + hcas + 16, ports=ports + 1024, start_timeout=600) as sim:
            row["ibsim_load_s"] = round(time.monotonic() - t1, 1)
            t2 = time.monotonic()
            sim.client(["opensm", "-F", str(folder / "etc" / "opensm.conf"), "-o"], f"{sm.host} {sm.hca}",
                       timeout=max(budget * 5, 120), env={"OSM_CACHE_DIR": str(folder), "OSM_TMP_DIR": str(folder)})
            sweep = time.monotonic() - t2
        log = (folder / "log" / "opensm.log").read_text() if (folder / "log" / "opensm.log").exists() else ""
        ok = ("ftree tables configured on all switches" in log and "SUBNET UP" in log
              and not opensm_log_problems(log))
        row.update(sweep_s=round(sweep, 1), routed=ok, peak_child_mib=round(_children_peak_mib()))
        if not ok:
            row["log_tail"] = log.splitlines()[-3:]
        return row, ok and sweep < budget


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sus", default="1,2,4,8,16,32,48,64,96")
    ap.add_argument("--budget", type=float, default=60.0, help="seconds one sweep may take")
    ap.add_argument("--no-qos", action="store_true", help="QoS off (under ibsim, SL2VL programming is most of a "
                    "sweep: one MAD per input x output port of every switch)")
    args = ap.parse_args()
    print(f"machine: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; budget {args.budget:g} s per sweep; "
          f"QoS {'off' if args.no_qos else 'on'}")
    largest = None
    for sus in (int(s) for s in args.sus.split(",")):
        row, ok = run(sus, args.budget, not args.no_qos)
        print(" ".join(f"{k}={v}" for k, v in row.items()), flush=True)
        if not ok:
            break
        largest = row
    if largest:
        print(f"largest routed under {args.budget:g} s: {largest['sus']} SUs, {largest['switches']} switches, "
              f"{largest['hcas']} HCAs, one sweep {largest['sweep_s']} s")


if __name__ == "__main__":
    main()
