"""`teton twin up | verify | fail | restore | down`: the digital twin of a spec's backend fabric on this machine.

up renders the spec (validated, exactly as `teton render` does) into the twin's state folder, builds a twin plan from
those artifacts and starts it; the other commands find the running twin by the cluster's name.  State lives in
/run/teton/twin/<name>/ (short paths: FRR's vty sockets must fit in 107 bytes); every kernel object is named
tt-<name>-..., so `down` also finds what a crashed run left behind.
"""

from __future__ import annotations

import itertools
import json
import random
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teton.design.fabric import Fabric
from teton.pipeline import load_and_design
from teton.twin.build import plan_name, twin_plan
from teton.twin.expect import TIER, EcmpModel

STATE_ROOT = Path("/run/teton/twin")
PING_SAMPLE = 1024     # same-rail (host, host, NIC, family) pings on a big twin; all of them when fewer
ECMP_SAMPLE = 512      # (switch, remote rack) ECMP checks on a big twin


def state_dir(name: str) -> Path:
    return STATE_ROOT / name


@dataclass
class Failures:
    devices: list[str]
    links: list[list[str]]          # [["dev:port", "peer:port"], ...]

    def model(self, fabric: Fabric) -> EcmpModel:
        return EcmpModel(fabric, set(self.devices), {frozenset(x) for x in self.links})


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


class TwinNotRunning(RuntimeError):
    pass


def _designed(spec: str) -> tuple[str, Fabric]:
    d = load_and_design(spec)
    return plan_name(d.cluster.name), d.fabric


def _render(fabric: Fabric, out: Path) -> None:
    from teton.plan import plan
    from teton.render import render_all
    from teton.render.artifacts import write_atomically
    from teton.render.context import RenderContext

    figures = plan(fabric)
    write_atomically(out, render_all(fabric, RenderContext(figures=figures)), figures)


def _twin(name: str) -> Any:
    from teton.twin.runtime import Twin

    return Twin.load(state_dir(name) / "rt")


def up(spec: str) -> dict[str, Any]:
    from teton.twin.runtime import Twin, cleanup_leftovers

    name, fabric = _designed(spec)
    root = state_dir(name)
    if _meta_path(name).is_file():
        raise TwinNotRunning(f"twin {name!r} is already up; `teton twin down {spec}` first")
    cleanup_leftovers(f"tt-{name}-")
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    root.chmod(0o755)
    for parent in root.parents:
        if parent == Path("/"):
            break
        parent.chmod(parent.stat().st_mode | 0o055)     # FRR runs as user frr: it must reach its folders
    t0 = time.monotonic()
    _render(fabric, root / "build")
    source = twin_plan(root / "build", name)
    t_render = time.monotonic() - t0
    twin = Twin(source.plan, root / "rt")
    meta = {"spec": spec, "name": name, "origin": source.origin, "neighbors": source.neighbors,
            "failures": {"devices": [], "links": []}}
    _save_meta(name, meta)
    try:
        report = twin.up()
        converged = twin.wait_converged(source.neighbors, timeout=120)
        ecmp_at, ecmp = _wait_ecmp(twin, fabric, Failures([], []), timeout=60)
    except Exception:
        twin.down(keep_logs=True)
        _meta_path(name).unlink(missing_ok=True)
        raise
    rss = twin.daemon_rss()
    return {"twin": name, "switches": len(source.neighbors),
            "hosts": sum(1 for n in source.plan.nodes if n.kind == "host"), "links": len(source.plan.links),
            "render_s": round(t_render, 2), "up_s": round(report.seconds, 2),
            "converged_s": round(converged, 2), "ecmp_installed_s": round(ecmp_at, 2),
            "sessions": sum(source.neighbors.values()),
            "daemon_rss_mib": round(sum(rss.values()) / 2**20, 1),
            "eos_as_frr": sorted(d for d, o in source.origin.items() if "EOS" in o),
            "ecmp_mismatches": ecmp}


def _probes(fabric: Fabric, sample: int) -> list[tuple[str, str]]:
    """(switch, remote rack switch) pairs whose ECMP width is checked."""
    switches = sorted(n for n, d in fabric.devices.items() if d.role in TIER)
    racks = sorted(n for n, d in fabric.devices.items() if d.role == "rtsw")
    pairs = [(x, t) for x in switches for t in racks if x != t]
    if len(pairs) > sample:
        pairs = sorted(random.Random(0).sample(pairs, sample))
    return pairs


def _expected_ecmp(fabric: Fabric, failures: Failures, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The design's ECMP width for each (alive switch, rack switch) pair, under `failures`."""
    model = failures.model(fabric)
    return {(x, t): model.next_hops(x, t) for x, t in pairs if x in model.alive}


def _ecmp_mismatches(twin: Any, fabric: Fabric, expected: dict[tuple[str, str], int]) -> list[dict]:
    def one(item: tuple[tuple[str, str], int]) -> dict | None:
        (x, t), want = item
        prefix = fabric.devices[t].prefixes4[0] if fabric.devices[t].prefixes4 else fabric.devices[t].prefixes6[0]
        got = twin.kernel_nexthops(x, prefix)
        return None if got == want else {"switch": x, "prefix": prefix, "towards": t, "expected": want, "got": got}

    with ThreadPoolExecutor(8) as pool:
        return [r for r in pool.map(one, sorted(expected.items())) if r]


def _wait_ecmp(twin: Any, fabric: Fabric, failures: Failures, timeout: float) -> tuple[float, list[dict]]:
    expected = _expected_ecmp(fabric, failures, _probes(fabric, ECMP_SAMPLE))
    t0 = time.monotonic()
    while True:
        bad = _ecmp_mismatches(twin, fabric, expected)
        if not bad or time.monotonic() - t0 > timeout:
            return time.monotonic() - t0, bad
        time.sleep(0.05)


def _expected_sessions(fabric: Fabric, meta: dict[str, Any], failures: Failures) -> dict[str, int]:
    model = failures.model(fabric)
    failed_links = {frozenset(x) for x in failures.links}
    out = {}
    for name in meta["neighbors"]:
        if name not in model.alive:
            continue
        n = 0
        for i in fabric.devices[name].interfaces:
            if fabric.devices[i.peer].role in TIER and i.peer in model.alive and \
                    frozenset({f"{name}:{i.name}", f"{i.peer}:{i.peer_port}"}) not in failed_links:
                n += bool(i.ipv4) + bool(i.ipv6)      # one session per address family
        out[name] = n
    return out


def _same_rail_pairs(fabric: Fabric, sample: int) -> tuple[list[tuple[str, str, str, str]], int]:
    """(host a, source address, host b, destination address) for NIC i of a to NIC i of b, both families."""
    hosts = sorted(n for n, d in fabric.devices.items() if d.role == "host")
    nics = {h: {i.name: i for i in fabric.devices[h].interfaces if i.kind == "host-rtsw"} for h in hosts}
    rails = sorted({nic for h in hosts for nic in nics[h]})
    out = []
    for rail in rails:
        for fam in ("ipv4", "ipv6"):
            pairs = [(a, b) for a, b in itertools.combinations(hosts, 2) if rail in nics[a] and rail in nics[b]]
            for a, b in pairs:
                src, dst = getattr(nics[a][rail], fam), getattr(nics[b][rail], fam)
                if src and dst:
                    out.append((a, src.split("/")[0], b, dst.split("/")[0]))
    total = len(out)
    if total > sample:
        out = sorted(random.Random(1).sample(out, sample))
    return out, total


def verify(spec: str, *, ping_sample: int = PING_SAMPLE) -> dict[str, Any]:
    name, fabric = _designed(spec)
    meta = _load_meta(name)
    twin = _twin(name)
    failures = Failures(**meta["failures"])
    t0 = time.monotonic()
    expected = _expected_sessions(fabric, meta, failures)
    sessions_ok = {}
    for sw, want in expected.items():
        got = len(twin.established_peers(twin.bgp_summary(sw)))
        sessions_ok[sw] = (got, want)
    bad_sessions = {sw: {"established": g, "expected": w} for sw, (g, w) in sessions_ok.items() if g != w}
    t_sessions = time.monotonic() - t0
    pairs, total_pairs = _same_rail_pairs(fabric, ping_sample)
    t1 = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda p: twin.ping(p[0], p[1], p[3], count=1, timeout=1.0), pairs))
    failed_pings = [{"from": a, "src": s, "to": b, "dst": d}
                    for (a, s, b, d), ok in zip(pairs, results, strict=True) if not ok]
    t_ping = time.monotonic() - t1
    t2 = time.monotonic()
    probes = _probes(fabric, ECMP_SAMPLE)
    ecmp = _ecmp_mismatches(twin, fabric, _expected_ecmp(fabric, failures, probes))
    t_ecmp = time.monotonic() - t2
    all_hosts = sum(1 for d in fabric.devices.values() if d.role == "host")
    ok = not bad_sessions and not failed_pings and not ecmp
    return {
        "twin": name, "ok": ok, "failures": meta["failures"],
        "bgp": {"expected_sessions": sum(expected.values()),
                "established": sum(g for g, _ in sessions_ok.values()), "mismatched": bad_sessions,
                "seconds": round(t_sessions, 3)},
        "same_rail_ping": {"pinged": len(pairs), "of": total_pairs, "failed": failed_pings,
                           "hosts": all_hosts, "seconds": round(t_ping, 3)},
        "ecmp": {"checked": len(probes), "mismatched": ecmp, "seconds": round(t_ecmp, 3)},
        "eos_as_frr": sorted(d for d, o in meta["origin"].items() if "EOS" in o),
    }


def _parse_target(fabric: Fabric, target: str) -> tuple[str, list[str] | None]:
    """A device name, or a link 'device:port' (either end)."""
    if target in fabric.devices:
        d = fabric.devices[target]
        if d.role not in TIER:
            raise ValueError(f"{target} is a {d.role}; the twin fails switches and links")
        return target, None
    dev, _, port = target.partition(":")
    if dev in fabric.devices:
        for i in fabric.devices[dev].interfaces:
            if i.name == port:
                return dev, sorted([f"{dev}:{port}", f"{i.peer}:{i.peer_port}"])
    raise ValueError(f"{target!r} is neither a switch nor a link 'device:port' of this fabric")


def _reconverge(twin: Any, fabric: Fabric, meta: dict[str, Any], failures: Failures, t0: float) -> dict[str, Any]:
    """Seconds from the change (t0) until the BGP sessions and then every checked ECMP width match the design."""
    twin.wait_converged(_expected_sessions(fabric, meta, failures), timeout=60)
    sessions_at = time.monotonic() - t0
    _, bad = _wait_ecmp(twin, fabric, failures, timeout=60)
    return {"sessions_settled_s": round(sessions_at, 3), "ecmp_settled_s": round(time.monotonic() - t0, 3),
            "ecmp_mismatched": bad}


def fail(spec: str, target: str, how: str = "kill") -> dict[str, Any]:
    name, fabric = _designed(spec)
    meta = _load_meta(name)
    twin = _twin(name)
    device, link = _parse_target(fabric, target)
    failures = Failures(**meta["failures"])
    t0 = time.monotonic()
    if link is None:
        if device in failures.devices:
            raise ValueError(f"{device} has already failed")
        twin.stop_node(device, how)
        failures.devices.append(device)
    else:
        if link in failures.links:
            raise ValueError(f"link {link[0]} <-> {link[1]} has already failed")
        dev, _, port = link[0].partition(":")
        twin.set_link(dev, port, False)
        failures.links.append(link)
    meta["failures"] = {"devices": failures.devices, "links": failures.links}
    _save_meta(name, meta)
    return {"twin": name, "failed": target, "how": how if link is None else "link down",
            "reconvergence": _reconverge(twin, fabric, meta, failures, t0)}


def restore(spec: str) -> dict[str, Any]:
    name, fabric = _designed(spec)
    meta = _load_meta(name)
    twin = _twin(name)
    failures = Failures(**meta["failures"])
    t0 = time.monotonic()
    for device in failures.devices:
        twin.start_node(device)
    for a, _ in failures.links:
        dev, _, port = a.partition(":")
        twin.set_link(dev, port, True)
    restored = {"devices": failures.devices, "links": failures.links}
    meta["failures"] = {"devices": [], "links": []}
    _save_meta(name, meta)
    return {"twin": name, "restored": restored,
            "reconvergence": _reconverge(twin, fabric, meta, Failures([], []), t0)}


def down(spec: str | None = None, name: str | None = None) -> dict[str, Any]:
    """Stop everything of the twin; also what a crashed run left (found by name)."""
    from teton.twin.runtime import Twin, TwinError, cleanup_leftovers

    if name is None:
        assert spec is not None
        name, _ = _designed(spec)
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
