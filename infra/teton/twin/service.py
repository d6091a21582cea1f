"""`teton twin up | verify | fail | restore | down`: the digital twin of a build's backend fabric on this machine.

`up` takes a spec (rendered exactly as `teton render` does) or a build folder, and snapshots the build into the twin's
state folder; from then on every verb reads only that snapshot: what runs comes from its artifacts, what is expected
from its fabric.json and the failures applied.  Editing the spec, or rendering it again, changes nothing until the next
`up`.  The other verbs find the running twin by its name (the cluster's), given as the name itself, a spec or a build
folder.  State lives in /run/teton/twin/<name>/ (short paths: FRR's vty sockets must fit in 107 bytes); every kernel
object is named tt-<name>-..., so `down` also finds what a crashed run left behind.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

from teton.build import build as build_spec
from teton.buildfolder import BuildFolder
from teton.fabric.model import Fabric
from teton.findings import TetonError
from teton.secrets import resolve
from teton.spec.load import load_spec
from teton.twin.artifacts import plan_name, twin_plan
from teton.twin.expect import TIER, Failures, ecmp_probes, expected_ecmp, expected_sessions, same_rail_pairs
from teton.twin.plan import TwinPlan
from teton.twin.runtime import Twin, TwinError, cleanup_leftovers

STATE_ROOT = Path("/run/teton/twin")
PING_SAMPLE = 1024     # same-rail (host, host, NIC, family) pings on a big twin; all of them when fewer
ECMP_SAMPLE = 512      # (switch, remote rack) ECMP checks on a big twin


class TwinNotRunning(TetonError):
    pass


def state_dir(name: str) -> Path:
    return STATE_ROOT / name


def _meta_path(name: str) -> Path:
    return state_dir(name) / "twin.json"


def _load_meta(name: str) -> dict[str, Any]:
    p = _meta_path(name)
    if not p.is_file():
        raise TwinNotRunning(f"no twin {name!r} is up (no {p}); run `teton twin up` first")
    return json.loads(p.read_text())


def _save_meta(name: str, meta: dict[str, Any]) -> None:
    p = _meta_path(name)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(meta, indent=1, sort_keys=True))
    tmp.rename(p)


def twin_name(which: str) -> str:
    """The twin a verb is about: a build folder (its Fabric names the cluster), a spec file (only its name is
    read), or the twin's name itself."""
    p = Path(which)
    if p.is_dir():
        try:
            return plan_name(BuildFolder(p).cluster())
        except TetonError as exc:
            raise TetonError(f"{p} is not a teton build folder ({exc})") from None
    if p.is_file():
        return plan_name(load_spec(p).name)
    return plan_name(which)


def _snapshot_dir(name: str) -> Path:
    return state_dir(name) / "build"


def build_folder(name: str) -> BuildFolder:
    """The build the twin runs: its snapshot, taken by `up`."""
    return BuildFolder(_snapshot_dir(name))


def _fabric(name: str) -> Fabric:
    """The Fabric of the build the twin runs (its snapshot)."""
    return build_folder(name).fabric()


def _twin(name: str) -> Twin:
    return Twin.load(state_dir(name) / "rt")


def _prepare_state(root: Path) -> None:
    root.mkdir(parents=True)
    root.chmod(0o755)
    for parent in root.parents:
        if parent == Path("/"):
            break
        parent.chmod(parent.stat().st_mode | 0o055)     # FRR runs as user frr: it must reach its folders


def up(which: str, secrets: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Start the twin of a spec (rendered first) or of a build folder.  With `secrets`, the switches run their BGP
    passwords resolved (as a deploy pushes them: `teton.deploy`), like switches provisioned with the site's secrets;
    without, the reference tokens stand for them on both ends of every session."""
    source = Path(which)
    from_build = source.is_dir()
    if from_build:
        BuildFolder.open(source)
    name = twin_name(which)
    root = state_dir(name)
    if _meta_path(name).is_file():
        raise TwinNotRunning(f"twin {name!r} is already up; `teton twin down {name}` first")
    cleanup_leftovers(f"tt-{name}-")
    shutil.rmtree(root, ignore_errors=True)
    _prepare_state(root)
    t0 = time.monotonic()
    try:
        if from_build:
            shutil.copytree(source, _snapshot_dir(name), symlinks=False)
        else:
            build_spec(which, _snapshot_dir(name))
        plan = twin_plan(build_folder(name), name)
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    if secrets is not None:
        plan.plan = _with_secrets(plan.plan, secrets)
    t_render = time.monotonic() - t0
    twin = Twin(plan.plan, root / "rt")
    meta = {"source": str(source.resolve()), "name": name, "origin": plan.origin,
            "failures": {"devices": [], "links": []}}
    _save_meta(name, meta)
    fabric = plan.fabric
    sessions = expected_sessions(fabric, sorted(plan.origin), Failures([], []))
    try:
        report = twin.up()
        converged = twin.wait_converged(sessions, timeout=120)
        ecmp_at, ecmp = _wait_ecmp(twin, fabric, Failures([], []), timeout=60)
    except BaseException:
        twin.down(keep_logs=True)
        _meta_path(name).unlink(missing_ok=True)
        raise
    rss = twin.daemon_rss()
    return {"twin": name, "switches": len(plan.origin),
            "hosts": sum(1 for n in plan.plan.nodes if n.kind == "host"), "links": len(plan.plan.links),
            "render_s": round(t_render, 2), "up_s": round(report.seconds, 2),
            "converged_s": round(converged, 2), "ecmp_installed_s": round(ecmp_at, 2),
            "sessions": sum(sessions.values()),
            "daemon_rss_mib": round(sum(rss.values()) / 2**20, 1),
            "eos_as_frr": _eos_as_frr(meta), "ecmp_mismatches": ecmp}


def _with_secrets(plan: TwinPlan, secrets: Mapping[str, str]) -> TwinPlan:
    """The plan with every secret reference of the switches' FRR configs resolved (FRR stores cleartext)."""
    try:
        nodes = tuple(replace(n, frr_conf=resolve(n.frr_conf, secrets)) if n.frr_conf else n for n in plan.nodes)
    except KeyError as exc:
        raise TetonError(str(exc.args[0])) from None
    return replace(plan, nodes=nodes)


def _eos_as_frr(meta: dict[str, Any]) -> list[str]:
    """Switches run as the FRR spelling of their read-back routing (their NOS cannot run here)."""
    return sorted(d for d, how in meta["origin"].items() if "unchanged" not in how)


def _ecmp_mismatches(twin: Twin, fabric: Fabric, expected: dict[tuple[str, str], int]) -> list[dict[str, Any]]:
    def one(item: tuple[tuple[str, str], int]) -> dict[str, Any] | None:
        (x, t), want = item
        prefix = fabric.devices[t].prefixes4[0] if fabric.devices[t].prefixes4 else fabric.devices[t].prefixes6[0]
        got = twin.kernel_nexthops(x, prefix)
        return None if got == want else {"switch": x, "prefix": prefix, "towards": t, "expected": want, "got": got}

    with ThreadPoolExecutor(8) as pool:
        return [r for r in pool.map(one, sorted(expected.items())) if r]


def _wait_ecmp(twin: Twin, fabric: Fabric, failures: Failures, timeout: float) -> tuple[float, list[dict[str, Any]]]:
    expected = expected_ecmp(fabric, failures, ecmp_probes(fabric, ECMP_SAMPLE))
    t0 = time.monotonic()
    while True:
        bad = _ecmp_mismatches(twin, fabric, expected)
        if not bad or time.monotonic() - t0 > timeout:
            return time.monotonic() - t0, bad
        time.sleep(0.05)


def verify(which: str, *, ping_sample: int = PING_SAMPLE) -> dict[str, Any]:
    """Sessions as designed, same-rail NIC pairs reachable, ECMP as wide as the design; ok only if all three were
    checked (something was probed) and all held."""
    name = twin_name(which)
    meta = _load_meta(name)
    fabric = _fabric(name)
    twin = _twin(name)
    failures = Failures(**meta["failures"])
    t0 = time.monotonic()
    expected = expected_sessions(fabric, sorted(meta["origin"]), failures)
    sessions_ok = {}
    for sw, want in expected.items():
        got = len(twin.established_peers(twin.bgp_summary(sw)))
        sessions_ok[sw] = (got, want)
    bad_sessions = {sw: {"established": g, "expected": w} for sw, (g, w) in sessions_ok.items() if g != w}
    t_sessions = time.monotonic() - t0
    pairs, total_pairs = same_rail_pairs(fabric, max(0, ping_sample))
    t1 = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda p: twin.ping(p[0], p[1], p[3], count=1, timeout=1.0), pairs))
    failed_pings = [{"from": a, "src": s, "to": b, "dst": d}
                    for (a, s, b, d), ok in zip(pairs, results, strict=True) if not ok]
    t_ping = time.monotonic() - t1
    t2 = time.monotonic()
    probes = ecmp_probes(fabric, ECMP_SAMPLE)
    ecmp = _ecmp_mismatches(twin, fabric, expected_ecmp(fabric, failures, probes))
    t_ecmp = time.monotonic() - t2
    unchecked = [what for what, n in (("sessions", sum(expected.values())), ("same-rail pings", len(pairs)),
                                      ("ECMP widths", len(probes))) if n == 0]
    ok = not bad_sessions and not failed_pings and not ecmp and not unchecked
    return {
        "twin": name, "ok": ok, "failures": meta["failures"], "unchecked": unchecked,
        "bgp": {"expected_sessions": sum(expected.values()),
                "established": sum(g for g, _ in sessions_ok.values()), "mismatched": bad_sessions,
                "seconds": round(t_sessions, 3)},
        "same_rail_ping": {"pinged": len(pairs), "of": total_pairs, "failed": failed_pings,
                           "hosts": len(fabric.by_role("host")), "seconds": round(t_ping, 3)},
        "ecmp": {"checked": len(probes), "mismatched": ecmp, "seconds": round(t_ecmp, 3)},
        "eos_as_frr": _eos_as_frr(meta),
    }


def _parse_target(fabric: Fabric, target: str) -> tuple[str, list[str] | None]:
    """A device name, or a link 'device:port' (either end)."""
    if target in fabric.devices:
        d = fabric.devices[target]
        if d.role not in TIER:
            raise TetonError(f"{target} is a {d.role}; the twin fails switches and links")
        return target, None
    dev, _, port = target.partition(":")
    if dev in fabric.devices:
        i = fabric.devices[dev].interface(port)
        if i is not None:
            return dev, sorted([f"{dev}:{port}", f"{i.peer}:{i.peer_port}"])
    raise TetonError(f"{target!r} is neither a switch nor a link 'device:port' of this fabric")


def _reconverge(twin: Twin, fabric: Fabric, meta: dict[str, Any], failures: Failures, t0: float) -> dict[str, Any]:
    """Seconds from the change (t0) until the BGP sessions and then every checked ECMP width match the design."""
    twin.wait_converged(expected_sessions(fabric, sorted(meta["origin"]), failures), timeout=60)
    sessions_at = time.monotonic() - t0
    _, bad = _wait_ecmp(twin, fabric, failures, timeout=60)
    return {"sessions_settled_s": round(sessions_at, 3), "ecmp_settled_s": round(time.monotonic() - t0, 3),
            "ecmp_mismatched": bad}


def fail(which: str, target: str, how: str = "kill") -> dict[str, Any]:
    name = twin_name(which)
    meta = _load_meta(name)
    fabric = _fabric(name)
    twin = _twin(name)
    device, link = _parse_target(fabric, target)
    failures = Failures(**meta["failures"])
    t0 = time.monotonic()
    if link is None:
        if device in failures.devices:
            raise TetonError(f"{device} has already failed")
        twin.stop_node(device, how)
        failures.devices.append(device)
    else:
        if link in failures.links:
            raise TetonError(f"link {link[0]} <-> {link[1]} has already failed")
        dev, _, port = link[0].partition(":")
        twin.set_link(dev, port, False)
        failures.links.append(link)
    meta["failures"] = {"devices": failures.devices, "links": failures.links}
    _save_meta(name, meta)
    return {"twin": name, "failed": target, "how": how if link is None else "link down",
            "reconvergence": _reconverge(twin, fabric, meta, failures, t0)}


def restore(which: str) -> dict[str, Any]:
    """Bring back every failed switch and link, and restart any switch daemon that died outside teton."""
    name = twin_name(which)
    meta = _load_meta(name)
    fabric = _fabric(name)
    twin = _twin(name)
    failures = Failures(**meta["failures"])
    t0 = time.monotonic()
    for device in failures.devices:
        twin.start_node(device)
    for a, _ in failures.links:
        dev, _, port = a.partition(":")
        twin.set_link(dev, port, True)
    restarted = twin.ensure_running()
    restored = {"devices": failures.devices, "links": failures.links}
    meta["failures"] = {"devices": [], "links": []}
    _save_meta(name, meta)
    return {"twin": name, "restored": restored, "restarted": restarted,
            "reconvergence": _reconverge(twin, fabric, meta, Failures([], []), t0)}


def down(which: str | None = None, name: str | None = None) -> dict[str, Any]:
    """Stop everything of the twin; also what a crashed run left (found by name)."""
    if name is None:
        assert which is not None
        name = twin_name(which)
    root = state_dir(name)
    stopped = False
    if (root / "rt" / "state.json").is_file():
        try:
            Twin.load(root / "rt").down()
            stopped = True
        except (TwinError, OSError, ValueError, KeyError):
            pass
    leftovers = cleanup_leftovers(f"tt-{name}-")
    shutil.rmtree(root, ignore_errors=True)
    return {"twin": name, "stopped": stopped, "leftovers_removed": leftovers}
