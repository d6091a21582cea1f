"""Benchmark: the cold `teton render` of a spec at several commits side by side, and Arista AVD's pipeline beside them.

Each commit gets a temporary `git worktree add --detach` (removed at the end, Ctrl-C included) and is run with THIS
interpreter (the same venv, `sys.executable`) and `PYTHONPATH=<worktree>/infra`, `TETON_CACHE=off` (and an empty
`TETON_CACHE_DIR`), `TETON_WORKERS=--workers`: `teton render SPEC -o OUT` in a fresh process, through the `teton`
console script's entry point that the commit's own pyproject.toml names (`teton.cli:main`), so a CLI that moved from
`cli.py` to `cli/` is found either way.  The spec comes from the commit's own inventory/ when the file exists there
(specs change with the code), else from this checkout; the script prints which.

Runs are interleaved (A, B, C, AVD, A, B, C, AVD, ...) so that load from other users of a shared machine falls on all
alike.  Per run: wall time; CPU time of the render and of its workers (user + system, `os.wait4` of the child, which
counts the children it waited for); peak RSS (`ru_maxrss` of that `wait4`: the largest single process of the tree,
not the sum over workers); the switches rendered (device folders under devices/, else fabric.json's `routing`); ms per
switch of wall and of CPU.  The CPU figures are the steadier ones on a busy machine.  Before each run the page
cache is written out and, run as root, dropped (`settle`; `--keep-caches` keeps it).

Byte identity: for commits rendered from the same spec content, the builds' manifest.json file lists and sha256s are
compared, and the first differing paths printed.

AVD: Arista AVD's own Python pipeline (pyavd, as installed in the venv: 6.4.0) end to end for an L3 leaf-spine of
`--avd-devices` switches (eos_designs `spine` and `l3leaf` nodes, every leaf with one uplink to each spine, eBGP
underlay; AVD's default l3ls-evpn design, so EVPN overlay sessions and a VTEP too), in a fresh process of its own, in
the same interleaved loop: per device `pyavd.validate_inputs` (each host's inputs are validated, as in the pyavd
documentation's example and in the Ansible role), then `pyavd.get_avd_facts` over all, then per device
`get_device_structured_config`, `validate_structured_config` and `get_device_config`.  One process, no workers:
compare CPU ms per device above all.  AVD's facts step grows faster than linearly with the fabric, so its ms per
device depends on `--avd-devices`.  For scale: AVD's maintainers measured 16 min 37 s (devel) and 9 min 14 s (with
the change) for the Ansible build of a 5,000-device example fabric on an Apple M3 laptop, i.e. about 110-200 ms per
device (https://github.com/aristanetworks/avd/pull/7364, comment of 2026-08-21); that figure includes Ansible's own
overhead, which this one does not.

    python bench/bench_render_compare.py [--spec inventory/reference-roce-24k.yaml] [--commits 462c94e HEAD]
        [--runs 3] [--workers N] [--avd-devices 192] [--keep-caches] [--json FILE]

Run it from a checkout of the repository (its git history holds the commits): the venv is the one running it.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SPEC = "inventory/reference-roce-24k.yaml"
DEFAULT_COMMITS = ["462c94e", "HEAD"]
AVD = "AVD"


@dataclass
class Subject:
    """A commit (or AVD) under test and its runs."""

    label: str
    sha: str = ""
    worktree: Path | None = None
    argv: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: Path | None = None
    spec: Path | None = None
    spec_from: str = ""
    spec_sha256: str = ""
    entry: str = ""
    out: Path | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""
    manifest: dict[str, str] | None = None
    avd_phases: list[dict[str, float]] = field(default_factory=list)


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


def entry_point(worktree: Path) -> str:
    """The `teton` console script's entry ("module:function") in the commit's pyproject.toml, else teton.cli:main."""
    with contextlib.suppress(OSError, tomllib.TOMLDecodeError, KeyError):
        data = tomllib.loads((worktree / "pyproject.toml").read_text())
        return str(data["project"]["scripts"]["teton"])
    return "teton.cli:main"


def launcher(entry: str, worktree: Path) -> list[str]:
    """`python -c` that runs the entry as the `teton` script would, refusing a teton imported from elsewhere."""
    module, _, func = entry.partition(":")
    code = (
        "import importlib, sys\n"
        "sys.argv[0] = 'teton'\n"
        "import teton\n"
        f"if not teton.__file__.startswith({str(worktree / 'infra')!r}):\n"
        "    sys.exit('teton imported from ' + teton.__file__ + ', not the worktree')\n"
        f"sys.exit(getattr(importlib.import_module({module!r}), {func or 'main'!r})())\n"
    )
    return [sys.executable, "-c", code]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def prepare_commit(subject: Subject, ref: str, tmp: Path, spec_arg: str, workers: int) -> None:
    subject.sha = git("rev-parse", "--verify", f"{ref}^{{commit}}")
    wt = tmp / f"wt-{subject.sha[:10]}"
    if not wt.exists():
        git("worktree", "add", "--detach", str(wt), subject.sha)
    subject.worktree = wt
    own = wt / spec_arg
    if not Path(spec_arg).is_absolute() and own.is_file():
        subject.spec, subject.spec_from = own, f"the commit's own {spec_arg}"
    else:
        mine = Path(spec_arg) if Path(spec_arg).is_absolute() else (Path.cwd() / spec_arg)
        if not mine.is_file():
            mine = ROOT / spec_arg
        if not mine.is_file():
            raise FileNotFoundError(f"{spec_arg}: not in the commit nor in this checkout")
        subject.spec, subject.spec_from = mine.resolve(), f"this checkout's {mine} (not in the commit)"
    subject.spec_sha256 = sha256(subject.spec)
    subject.entry = entry_point(wt)
    subject.out = tmp / f"out-{subject.sha[:10]}"
    subject.argv = [*launcher(subject.entry, wt), "render", str(subject.spec), "-o", str(subject.out)]
    cache_dir = tmp / f"cache-{subject.sha[:10]}"
    subject.env = {**os.environ, "PYTHONPATH": str(wt / "infra"), "TETON_CACHE": "off",
                   "TETON_CACHE_DIR": str(cache_dir), "TETON_WORKERS": str(workers), "PYTHONHASHSEED": "0"}
    subject.cwd = wt
    # byte-compile outside the timed runs: a fresh worktree has no __pycache__, and that is not the render's cost
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(wt / "infra")], capture_output=True, check=False)


def prepare_avd(subject: Subject, devices: int) -> None:
    subject.argv = [sys.executable, str(Path(__file__).resolve()), "--avd-child", str(devices)]
    subject.env = {**os.environ}
    subject.cwd = ROOT


def run_child(argv: list[str], env: dict[str, str], cwd: Path | None, log: Path) -> tuple[int, float, float, int]:
    """(exit code, wall s, CPU s of the child and the children it waited for, peak RSS KiB of the largest of them)."""
    with log.open("wb") as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        except BaseException:       # Ctrl-C: the child is in its own session, so end its whole group
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def count_switches(out: Path) -> int:
    devices = out / "devices"
    if devices.is_dir():
        return sum(1 for p in devices.iterdir() if p.is_dir())
    fabric = out / "fabric.json"
    if fabric.is_file():
        data = json.loads(fabric.read_bytes())
        return len(data.get("routing") or [d for d in data.get("devices", []) if d.get("kind") != "host"])
    return 0


def read_manifest(out: Path) -> tuple[dict[str, str] | None, dict[str, Any]]:
    """(path -> sha256 of every file of the build, what the build holds: files, MB, targets) from its manifest."""
    path = out / "manifest.json"
    if not path.is_file():
        return None, {}
    data = json.loads(path.read_bytes())
    files = data.get("files", {})
    size = sum(e.get("bytes", 0) for e in files.values() if isinstance(e, dict))
    held = {"files": len(files), "mb": size / 1e6, "targets": sorted(data.get("targets") or [])}
    return {name: e.get("sha256", "") if isinstance(e, dict) else str(e) for name, e in files.items()}, held


def tail(log: Path, lines: int = 6) -> str:
    text = log.read_text(errors="replace").strip().splitlines()
    return "\n    ".join(text[-lines:])


DROP_CACHES = Path("/proc/sys/vm/drop_caches")


def settle(cold: bool) -> None:
    """Before a run: the page cache written out (`sync`) and, with `cold`, dropped (root only).  ext4 skips inodes
    deleted in the last minute or so while their inode table block is cached (`recently_deleted` in its inode
    allocator): creating a build's 11,000 files right after the previous run's were removed cost 3-7 s of system
    time more, run to run (measured with perf: ext4_create -> recently_deleted), and that noise fell on whichever
    subject ran next.  Dropping the cache removes it for every subject alike (each then also reads its Python files
    from disk)."""
    os.sync()
    if cold:
        DROP_CACHES.write_text("1\n")


def one_run(subject: Subject, tmp: Path, index: int, cold: bool) -> None:
    log = tmp / f"log-{subject.label.replace(' ', '_')}-{index}.txt"
    if subject.out is not None:
        shutil.rmtree(subject.out, ignore_errors=True)
        shutil.rmtree(subject.env.get("TETON_CACHE_DIR", tmp / "none"), ignore_errors=True)
    settle(cold)
    code, wall, cpu, rss = run_child(subject.argv, subject.env, subject.cwd, log)
    if code != 0:
        subject.error = f"exit {code}:\n    {tail(log)}"
        print(f"  {subject.label}: FAILED ({subject.error})", flush=True)
        return
    run: dict[str, Any] = {"wall_s": wall, "cpu_s": cpu, "peak_rss_mib": rss / 1024}
    if subject.label == AVD:
        result = json.loads(log.read_text().strip().splitlines()[-1])
        run["switches"] = result["devices"]
        run["pyavd"] = result["pyavd"]
        subject.avd_phases.append(result["phases_ms_per_device"])
    else:
        assert subject.out is not None
        run["switches"] = count_switches(subject.out)
        subject.manifest, held = read_manifest(subject.out)
        run.update(held)
        shutil.rmtree(subject.out, ignore_errors=True)      # a 24k build is hundreds of MB: keep its manifest only
    n = max(run["switches"], 1)
    run["wall_ms_per_switch"] = wall * 1000 / n
    run["cpu_ms_per_switch"] = cpu * 1000 / n
    subject.runs.append(run)
    print(f"  {subject.label}: {wall:6.1f} s wall, {cpu:6.1f} s CPU, {rss / 1024:6.0f} MiB peak, "
          f"{run['switches']:,} switches, {run['wall_ms_per_switch']:.2f} ms/switch wall, "
          f"{run['cpu_ms_per_switch']:.2f} CPU", flush=True)


def summary(subject: Subject) -> dict[str, Any]:
    runs = subject.runs
    if not runs:
        return {"label": subject.label, "sha": subject.sha, "error": subject.error or "no run"}
    walls, cpus = [r["wall_s"] for r in runs], [r["cpu_s"] for r in runs]
    n = max(runs[-1]["switches"], 1)
    out = {
        "label": subject.label, "sha": subject.sha, "runs": runs, "switches": runs[-1]["switches"],
        "wall_median_s": statistics.median(walls), "wall_min_s": min(walls), "cpu_median_s": statistics.median(cpus),
        "peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "wall_ms_per_switch": statistics.median(walls) * 1000 / n,
        "cpu_ms_per_switch": statistics.median(cpus) * 1000 / n,
        "spec": str(subject.spec or ""), "spec_from": subject.spec_from, "spec_sha256": subject.spec_sha256,
        "entry": subject.entry, "error": subject.error,
        **{k: runs[-1][k] for k in ("files", "mb", "targets", "pyavd") if k in runs[-1]},
    }
    if subject.avd_phases:
        keys = subject.avd_phases[0].keys()
        out["avd_phases_ms_per_device"] = {k: statistics.median(p[k] for p in subject.avd_phases) for k in keys}
    return out


def identity(subjects: list[Subject]) -> list[dict[str, Any]]:
    """Compare the manifests of commits rendered from the same spec content, each against the first such commit."""
    found = []
    groups: dict[str, list[Subject]] = {}
    for s in subjects:
        if s.manifest is not None:
            groups.setdefault(s.spec_sha256, []).append(s)
    for group in groups.values():
        base = group[0]
        assert base.manifest is not None
        for other in group[1:]:
            assert other.manifest is not None
            a, b = base.manifest, other.manifest
            differ = sorted(p for p in a.keys() | b.keys() if a.get(p) != b.get(p))
            found.append({"a": base.label, "b": other.label, "identical": not differ, "files": len(a),
                          "differing": len(differ), "first_differing": differ[:10]})
    return found


def table(rows: list[dict[str, Any]], workers: int) -> str:
    base = next((r for r in rows if "wall_median_s" in r and r["label"] != AVD), None)
    head = (f"{'':<22} {'switches':>8} {'wall med':>9} {'wall min':>9} {'CPU med':>9} {'peak RSS':>9} "
            f"{'ms/sw wall':>10} {'ms/sw CPU':>9} {'x wall':>7} {'x CPU':>6}")
    lines = [head, "-" * len(head)]
    for r in rows:
        name = r["label"] if r["label"] == AVD else f"{r['label']} {r['sha'][:8]}"
        if "wall_median_s" not in r:
            lines.append(f"{name:<22} cannot render: {r['error'].splitlines()[-1].strip() if r['error'] else 'no run'}")
            continue
        ratio_w = r["wall_ms_per_switch"] / base["wall_ms_per_switch"] if base else float("nan")
        ratio_c = r["cpu_ms_per_switch"] / base["cpu_ms_per_switch"] if base else float("nan")
        lines.append(f"{name:<22} {r['switches']:>8,} {r['wall_median_s']:>8.1f}s {r['wall_min_s']:>8.1f}s "
                     f"{r['cpu_median_s']:>8.1f}s {r['peak_rss_mib']:>6.0f}MiB {r['wall_ms_per_switch']:>10.2f} "
                     f"{r['cpu_ms_per_switch']:>9.2f} {ratio_w:>7.2f} {ratio_c:>6.2f}")
    for r in rows:
        if r.get("files"):
            lines.append(f"{r['label']}: the build holds {r['files']:,} files, {r['mb']:,.0f} MB, targets "
                         f"{', '.join(r['targets'])}")
    lines.append(f"(x: ms per switch relative to {base['label'] if base else '-'}; teton with {workers} worker(s), "
                 "AVD in one process; CPU includes workers)")
    return "\n".join(lines)


# --- AVD, in a child process -----------------------------------------------------------------------------------------

def avd_design(devices: int) -> tuple[dict[str, Any], dict[str, str]]:
    """eos_designs inputs of an L3 leaf-spine of `devices` switches: 4 spines (8 above 128 devices), the rest leaves,
    each leaf one uplink to every spine; and each host's node type."""
    spines = 4 if devices <= 128 else 8
    leaves = devices - spines
    if leaves < 1:
        raise SystemExit("--avd-devices: at least one leaf beyond the spines")
    fabric = {
        "fabric_name": "BENCH",
        "spine": {
            "defaults": {"platform": "7050X3", "loopback_ipv4_pool": "10.255.0.0/24", "bgp_as": "65000"},
            "nodes": [{"name": f"spine{i + 1}", "id": i + 1, "mgmt_ip": f"172.16.0.{i + 1}/16"} for i in range(spines)],
        },
        "l3leaf": {
            "defaults": {
                "platform": "7050X3", "loopback_ipv4_pool": "10.254.0.0/16", "vtep_loopback_ipv4_pool": "10.253.0.0/16",
                "uplink_interfaces": [f"Ethernet{49 + i}" for i in range(spines)],
                "uplink_switches": [f"spine{i + 1}" for i in range(spines)],
                "uplink_ipv4_pool": "10.128.0.0/12", "bgp_as": "65001-65535",
            },
            "node_groups": [
                {"group": f"leaf{j + 1}", "bgp_as": str(65001 + j % 500) if leaves > 535 else None,
                 "nodes": [{"name": f"leaf{j + 1}", "id": j + 1, "mgmt_ip": f"172.16.{1 + j // 250}.{1 + j % 250}/16",
                            "uplink_switch_interfaces": [f"Ethernet{j + 1}"] * spines}]}
                for j in range(leaves)
            ],
        },
    }
    for group in fabric["l3leaf"]["node_groups"]:
        if group["bgp_as"] is None:
            del group["bgp_as"]
    hosts = {f"spine{i + 1}": "spine" for i in range(spines)} | {f"leaf{j + 1}": "l3leaf" for j in range(leaves)}
    return fabric, hosts


def avd_child(devices: int) -> None:
    """AVD's pipeline for `devices` switches; the last line printed is JSON: devices, ms per device by step."""
    import pyavd  # noqa: PLC0415 (only the AVD child needs it)
    from pyavd.api.schemas import AVDDesign  # noqa: PLC0415

    fabric, hosts = avd_design(devices)
    spent: dict[str, float] = {}

    def add(step: str, t0: float) -> None:
        spent[step] = spent.get(step, 0.0) + time.process_time() - t0

    inputs = {}
    for host, node_type in hosts.items():
        t0 = time.process_time()
        result = pyavd.validate_inputs({**fabric, "type": node_type})
        if result.validated_data is None:
            raise SystemExit(f"{host}: invalid AVD inputs: {result.validation_result}")
        inputs[host] = AVDDesign._from_dict(result.validated_data)
        add("validate_inputs", t0)
    t0 = time.process_time()
    facts = pyavd.get_avd_facts(inputs)
    add("get_avd_facts", t0)
    lines = 0
    for host in hosts:
        t0 = time.process_time()
        structured = pyavd.get_device_structured_config(host, inputs[host], facts)._as_dict()
        add("get_device_structured_config", t0)
        t0 = time.process_time()
        validated = pyavd.validate_structured_config(structured)
        add("validate_structured_config", t0)
        if validated.validated_data is None:
            raise SystemExit(f"{host}: invalid structured config: {validated.validation_result}")
        t0 = time.process_time()
        lines += pyavd.get_device_config(validated.validated_data).count("\n")
        add("get_device_config", t0)
    print(json.dumps({"devices": len(hosts), "pyavd": pyavd.__version__, "config_lines": lines,
                      "phases_ms_per_device": {k: v * 1000 / len(hosts) for k, v in spent.items()}}))


def shared_folder() -> Path:
    """The shared folder beside this checkout that teton looks in for reference data: each worktree gets it beside
    it too."""
    try:
        from teton.targets.reference import SHARED  # noqa: PLC0415 (this checkout's teton, when importable)
    except ImportError:
        return ROOT.parent / "shared"
    return SHARED


def _interrupt(*_: object) -> None:
    raise KeyboardInterrupt


# --- main ------------------------------------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", default=DEFAULT_SPEC)
    parser.add_argument("--commits", nargs="+", default=DEFAULT_COMMITS, help="any git refs (default: 462c94e HEAD)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--avd-devices", type=int, default=192, help="0 leaves AVD out")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--keep-caches", action="store_true",
                        help="do not drop the page cache before each run (it is dropped when run as root: see settle)")
    parser.add_argument("--avd-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.avd_child:
        avd_child(args.avd_child)
        return 0

    signal.signal(signal.SIGTERM, _interrupt)
    cold = not args.keep_caches and os.geteuid() == 0 and DROP_CACHES.exists()
    print(f"before each run: sync{', page cache dropped' if cold else ' (page cache kept)'}", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench-render-compare-"))
    subjects: list[Subject] = []
    shared = shared_folder()
    if shared.is_dir():     # data the render finds in the shared folder beside the repository (SONiC YANG models)
        (tmp / "shared").symlink_to(shared)
        print(f"shared data: {shared} (linked beside the worktrees)", flush=True)
    try:
        for ref in args.commits:
            subject = Subject(label=ref)
            subjects.append(subject)
            try:
                prepare_commit(subject, ref, tmp, args.spec, args.workers)
            except (subprocess.CalledProcessError, FileNotFoundError) as e:
                why = e.stderr.strip() if isinstance(e, subprocess.CalledProcessError) else str(e)
                subject.error = f"cannot prepare: {why}"
                print(f"{ref}: {subject.error}", flush=True)
                continue
            print(f"{ref} = {subject.sha[:10]}: spec {subject.spec_from} (sha256 {subject.spec_sha256[:12]}), "
                  f"entry {subject.entry}", flush=True)
        if args.avd_devices:
            avd = Subject(label=AVD)
            prepare_avd(avd, args.avd_devices)
            subjects.append(avd)
            print(f"AVD: pyavd's pipeline for {args.avd_devices} devices in one process", flush=True)
        for i in range(args.runs):
            print(f"run {i + 1}/{args.runs}", flush=True)
            for subject in subjects:
                if not subject.error:
                    one_run(subject, tmp, i, cold)
        rows = [summary(s) for s in subjects]
        same = identity(subjects)
        print()
        print(table(rows, args.workers))
        for row in rows:
            if "avd_phases_ms_per_device" in row:
                phases = ", ".join(f"{k} {v:.1f}" for k, v in row["avd_phases_ms_per_device"].items())
                print(f"AVD CPU ms per device by step (in the child): {phases}")
        teton = [r for r in rows if r["label"] != AVD and "wall_median_s" in r]
        avd_row = next((r for r in rows if r["label"] == AVD and "wall_median_s" in r), None)
        if avd_row:
            for r in teton:
                print(f"{r['label']}: teton {r['wall_ms_per_switch']:.2f} ms/switch wall ({r['cpu_ms_per_switch']:.2f} "
                      f"CPU) vs AVD {avd_row['wall_ms_per_switch']:.2f} ({avd_row['cpu_ms_per_switch']:.2f} CPU): "
                      f"AVD / teton = {avd_row['wall_ms_per_switch'] / r['wall_ms_per_switch']:.1f}x wall, "
                      f"{avd_row['cpu_ms_per_switch'] / r['cpu_ms_per_switch']:.1f}x CPU")
        for s in same:
            verdict = "byte-identical" if s["identical"] else (
                f"DIFFER in {s['differing']} file(s), first: {', '.join(s['first_differing'])}")
            print(f"{s['a']} vs {s['b']} (same spec): {s['files']:,} files, {verdict}")
        if args.json:
            args.json.write_text(json.dumps({"spec": args.spec, "workers": args.workers, "runs": args.runs,
                                             "cores": os.cpu_count(), "results": rows, "identity": same},
                                            indent=2) + "\n")
            print(f"wrote {args.json}")
        return 0 if all(not s.error for s in subjects) else 1
    except KeyboardInterrupt:
        print("\ninterrupted: removing the worktrees", file=sys.stderr)
        return 130
    finally:
        for subject in subjects:
            if subject.worktree is not None:
                subprocess.run(["git", "worktree", "remove", "--force", str(subject.worktree)], cwd=ROOT,
                               capture_output=True, check=False)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True, check=False)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
