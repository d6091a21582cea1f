"""`pulumi preview` of the 24k cluster's stack with no changes, with the real engine (goal: <= 60 s on 2 cores).

Steps, each timed: render the 24k reference (or take --build), a throwaway project (Pulumi.yaml, infra/ and scripts/
linked) on a local file backend, `pulumi up` with `teton:adopt` (the state records the build as deployed, no device
is touched; PULUMI_SKIP_CHECKPOINTS so the file backend writes the state once), then `pulumi preview
--expect-no-changes` with target `live` (every switch and rack of hosts; a preview touches no device).  Prints the
resources, the state's size, the times and the engine's peak memory (the largest child's max RSS).

    .venv/bin/python bench/bench_pulumi.py [--build DIR] [--parallel N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "infra"))

from teton.deploy.engine import Engine  # noqa: E402
from teton.pipeline import build  # noqa: E402

SPEC = ROOT / "inventory" / "reference-roce-24k.yaml"


def project(folder: Path) -> Path:
    p = folder / "project"
    p.mkdir(parents=True)
    shutil.copy(ROOT / "Pulumi.yaml", p / "Pulumi.yaml")
    (p / "infra").symlink_to(ROOT / "infra")
    (p / "scripts").symlink_to(ROOT / "scripts")
    return p


def timed(label: str, fn, *args, **kw):
    t0 = time.monotonic()
    res = fn(*args, **kw)
    dt = time.monotonic() - t0
    print(f"{label}: {dt:.1f} s", flush=True)
    return res, dt


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", type=Path, help="a rendered 24k build folder (default: render it now)")
    ap.add_argument("--parallel", type=int, default=0, help="pulumi --parallel (0: the engine's default)")
    ap.add_argument("--keep", type=Path, help="keep the project and state here")
    args = ap.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="bench-pulumi-"))
    work.mkdir(parents=True, exist_ok=True)
    figures: dict[str, object] = {}
    try:
        if args.build is None:
            b, figures["render_s"] = timed("render 24k", build, SPEC, work / "build")
            out = b.path
        else:
            out = args.build
        proj = project(work)
        eng = Engine(proj, work / "state", "bench-passphrase")
        eng.run("stack", "init", "bench", "--secrets-provider", "passphrase")
        for key, value in (("teton:spec", str(SPEC)), ("teton:build", str(out)), ("teton:target", "live"),
                           ("teton:adopt", "true")):
            eng.config_set("bench", key, value)
        eng.config_set("bench", "teton:secrets.bgp_backend", "bench-only-secret", secret=True, path=True)
        par = ["--parallel", str(args.parallel)] if args.parallel else []
        eng.extra_env["PULUMI_SKIP_CHECKPOINTS"] = "true"
        _, figures["adopt_up_s"] = timed("pulumi up (adopt, first state)", eng.run, "up", "--yes", "--skip-preview",
                                         "--stack", "bench", *par, timeout=7200)
        eng.extra_env.pop("PULUMI_SKIP_CHECKPOINTS")
        eng.config_set("bench", "teton:adopt", "false")
        res, figures["preview_no_changes_s"] = timed("pulumi preview --expect-no-changes", eng.run, "preview",
                                                     "--expect-no-changes", "--stack", "bench", *par, timeout=3600)
        export = eng.run("stack", "export", "--stack", "bench").stdout
        state = json.loads(export)
        figures["resources"] = len(state["deployment"]["resources"])
        figures["state_mb"] = round(len(export) / 1e6, 1)
        figures["peak_child_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
        figures["parallel"] = args.parallel or "default"
        print(json.dumps(figures, indent=1))
        print(res.stdout[-600:])
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
