"""`teton twin up | verify | fail | restore | down`: the digital twin of a build's routed networks (the RoCE backend
and the front end, with every GPU host, storage server and service host) on this machine.

`up` takes a spec (rendered exactly as `teton render` does) or a build folder, and snapshots the build into the twin's
state folder; from then on every verb reads only that snapshot: what runs comes from its artifacts, what is expected
from its fabric.json and the failures applied.  Editing the spec, or rendering it again, changes nothing until the next
`up`.  The other verbs find the running twin by its name (the cluster's, or the one `up` was given: a site's merged
build beside a cluster's twin), given as the name itself, a spec or a build folder.  State lives in
/run/teton/twin/<name>/ (short paths: FRR's vty sockets must fit in 107 bytes); every kernel object is named
tt-<name>-..., so `down` also finds what a crashed run left behind.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from teton.buildfolder import BuildFolder
from teton.expect import (
    NO_FAILURES,
    PING_SAMPLE,
    TIER,
    EcmpMismatch,
    Failures,
    PingProbe,
    Sampling,
    expected_sessions,
    lost_paths,
    promise,
    wait_until_kept,
)
from teton.expect import check as check_promise
from teton.fabric.model import Fabric
from teton.fabric.neighbours import expected
from teton.findings import TetonError
from teton.pipeline import build as build_spec
from teton.secrets import resolve
from teton.spec.load import load_spec
from teton.twin import lldp as twin_lldp
from teton.twin.artifacts import plan_name, twin_plan
from teton.twin.capacity import check_fits
from teton.twin.plan import TwinPlan
from teton.twin.reports import (
    BgpCheck,
    DownResult,
    EcmpCheck,
    FailResult,
    LldpResult,
    PingCheck,
    Reconvergence,
    RestoreResult,
    SwapResult,
    TwinUp,
    VerifyReport,
)
from teton.twin.runtime import Twin, TwinError, cleanup_leftovers

STATE_ROOT = Path("/run/teton/twin")


class TwinNotRunning(TetonError):
    pass


def state_dir(name: str) -> Path:
    return STATE_ROOT / name


def _meta_path(name: str) -> Path:
    return state_dir(name) / "twin.json"


@dataclass(frozen=True)
class TwinMeta:
    """The twin's record in its state folder (twin.json): where it came from, how each switch got its routing (prose,
    for a reader of the file), which run the FRR spelling of their read-back routing, and what has failed."""

    source: str
    name: str
    origin: dict[str, str]                 # switch -> how it got its routing config
    as_frr: tuple[str, ...]
    failures: Failures
    swaps: tuple[tuple[str, str], ...] = ()     # `twin swap`s in force, in order: the two ports ("dev:port") each

    @property
    def switches(self) -> list[str]:
        return sorted(self.origin)

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "name": self.name, "origin": self.origin, "as_frr": list(self.as_frr),
                "failures": self.failures.to_json(), "swaps": [list(x) for x in self.swaps]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TwinMeta:
        return cls(source=str(data["source"]), name=str(data["name"]),
                   origin={str(k): str(v) for k, v in data["origin"].items()},
                   as_frr=tuple(str(d) for d in data["as_frr"]), failures=Failures.from_json(data["failures"]),
                   swaps=tuple((str(a), str(b)) for a, b in data.get("swaps", [])))


def _load_meta(name: str) -> TwinMeta:
    p = _meta_path(name)
    if not p.is_file():
        raise TwinNotRunning(f"no twin {name!r} is up (no {p}); run `teton twin up` first")
    try:
        return TwinMeta.from_json(json.loads(p.read_text()))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise TetonError(f"twin {name!r}: its record {p} cannot be read ({exc}); `teton twin down {name}`") from None


def _save_meta(name: str, meta: TwinMeta) -> None:
    p = _meta_path(name)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(meta.to_json(), indent=1, sort_keys=True))
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


def load_twin(name: str) -> Twin:
    """The running twin `name`; TetonError if it is not up (no state, or a state that cannot be read)."""
    try:
        return Twin.load(state_dir(name) / "rt")
    except Exception as exc:     # noqa: BLE001 (TwinError, OSError, a corrupt state file: all mean "not up")
        raise TetonError(f"twin {name!r} is not up ({exc}); run `teton twin up` first") from None


class TwinObserver:
    """What the twin shows, as `teton.expect.check` asks it: bgpd's sessions, the kernel's next hops, pings."""

    def __init__(self, twin: Twin):
        self.twin = twin

    def established(self, switch: str) -> int:
        try:
            return len(self.twin.established_peers(self.twin.bgp_summary(switch)))
        except Exception:   # noqa: BLE001 (the daemon may be stopped or restarting: no answer, not a crash)
            return -1

    def nexthops(self, switch: str, prefix: str) -> int:
        return self.twin.kernel_nexthops(switch, prefix)

    def reaches(self, probe: PingProbe) -> bool:
        return self.twin.ping(probe.host, probe.src, probe.dst, count=1, timeout=1.0)


def _prepare_state(root: Path) -> None:
    root.mkdir(parents=True)
    root.chmod(0o755)
    for parent in root.parents:
        if parent == Path("/"):
            break
        parent.chmod(parent.stat().st_mode | 0o055)     # FRR runs as user frr: it must reach its folders


def up(which: str, secrets: Mapping[str, str] | None = None, name: str | None = None) -> TwinUp:
    """Start the twin of a spec (rendered first) or of a build folder, named after its cluster unless `name` (two
    twins of one build, or a site's merged build beside a session's shared twin).  With `secrets`, the switches run
    their BGP passwords resolved (as a deploy pushes them: `teton.deploy`), like switches provisioned with the site's
    secrets; without, the reference tokens stand for them on both ends of every session."""
    source = Path(which)
    from_build = source.is_dir()
    if from_build:
        BuildFolder.open(source)
    if name is not None and plan_name(name) != name:
        raise TetonError(f"twin name {name!r}: 1-16 letters, digits or '_' (it names the twin's namespaces, "
                         f"tt-<name>-...); {plan_name(name)!r} would do")
    name = name or twin_name(which)
    root = state_dir(name)
    if _meta_path(name).is_file():
        raise TwinNotRunning(f"twin {name!r} is already up; `teton twin down {name}` first")
    cleanup_leftovers(f"tt-{name}-")
    shutil.rmtree(root, ignore_errors=True)
    _prepare_state(root)
    t0 = time.monotonic()
    try:
        if from_build:       # read through the BuildFolder: bounded, and no symlink leads out of the build
            BuildFolder(source).snapshot(_snapshot_dir(name))
        else:
            build_spec(which, _snapshot_dir(name))
        plan = twin_plan(build_folder(name), name)
        check_fits(name, len(plan.origin), sum(1 for n in plan.plan.nodes if n.kind == "host"))
    except BaseException:
        shutil.rmtree(root, ignore_errors=True)
        raise
    if secrets is not None:
        plan.plan = _with_secrets(plan.plan, secrets)
    t_render = time.monotonic() - t0
    twin = Twin(plan.plan, root / "rt")
    meta = TwinMeta(source=str(source.resolve()), name=name, origin={d: o.how for d, o in plan.origin.items()},
                    as_frr=tuple(plan.as_frr()), failures=NO_FAILURES)
    _save_meta(name, meta)
    fabric = plan.fabric
    sessions = expected_sessions(fabric, meta.switches, NO_FAILURES)
    try:
        report = twin.up()
        converged = twin.wait_converged(sessions, timeout=120)
        ecmp_at, ecmp = _wait_ecmp(twin, fabric, NO_FAILURES, timeout=60)
    except BaseException:
        twin.down(keep_logs=True)
        _meta_path(name).unlink(missing_ok=True)
        raise
    rss = twin.daemon_rss()
    return TwinUp(twin=name, switches=len(plan.origin),
                  hosts=sum(1 for n in plan.plan.nodes if n.kind == "host"), links=len(plan.plan.links),
                  render_s=round(t_render, 2), up_s=round(report.seconds, 2),
                  converged_s=round(converged, 2), ecmp_installed_s=round(ecmp_at, 2),
                  sessions=sum(sessions.values()),
                  daemon_rss_mib=round(sum(rss.values()) / 2**20, 1),
                  eos_as_frr=meta.as_frr, ecmp_mismatches=ecmp, networks=plan.networks)


def _with_secrets(plan: TwinPlan, secrets: Mapping[str, str]) -> TwinPlan:
    """The plan with every secret reference of the switches' FRR configs resolved (FRR stores cleartext)."""
    try:
        nodes = tuple(replace(n, frr_conf=resolve(n.frr_conf, secrets)) if n.frr_conf else n for n in plan.nodes)
    except KeyError as exc:
        raise TetonError(str(exc.args[0])) from None
    return replace(plan, nodes=nodes)


def _wait_ecmp(twin: Twin, fabric: Fabric, failures: Failures,
               timeout: float) -> tuple[float, tuple[EcmpMismatch, ...]]:
    t0 = time.monotonic()
    report = wait_until_kept(promise(fabric, [], failures, Sampling(pings=0, reach=0)), TwinObserver(twin), timeout,
                             interval=0.05)
    return time.monotonic() - t0, report.ecmp


def verify(which: str, *, ping_sample: int = PING_SAMPLE) -> VerifyReport:
    """Sessions as designed, same-rail NIC pairs reachable, ECMP as wide as the design (`teton.expect`); ok only if
    all three were checked (something was probed) and all held."""
    name = twin_name(which)
    meta = _load_meta(name)
    fabric = _fabric(name)
    twin = load_twin(name)
    expected = promise(fabric, meta.switches, meta.failures, Sampling(pings=ping_sample, reach=ping_sample))
    report = check_promise(expected, TwinObserver(twin))
    seconds = {k: round(v, 3) for k, v in report.seconds.items()}
    return VerifyReport(
        twin=name, ok=report.ok and not report.unchecked, failures=meta.failures,
        unchecked=tuple(report.unchecked),
        bgp=BgpCheck(expected_sessions=sum(expected.sessions.values()), established=report.established,
                     mismatched=report.sessions, seconds=seconds["sessions"]),
        same_rail_ping=PingCheck(pinged=len(expected.pings), of=expected.pings_total, failed=report.pings,
                                 hosts=len(fabric.by_role("host")), seconds=seconds["pings"]),
        ecmp=EcmpCheck(checked=len(expected.ecmp), mismatched=report.ecmp, seconds=seconds["ecmp"]),
        eos_as_frr=meta.as_frr,
        frontend_ping=PingCheck(pinged=len(expected.reach), of=expected.reach_total, failed=report.reach,
                                hosts=len(fabric.by_role("host")), seconds=seconds["reach"])
        if expected.reach_total else None,
    )


def _parse_failure(fabric: Fabric, what: str) -> tuple[str, tuple[str, str] | None]:
    """What to fail: a device name, or a link 'device:port' (either end)."""
    if what in fabric.devices:
        d = fabric.devices[what]
        if d.role not in TIER:
            raise TetonError(f"{what} is a {d.role}; the twin fails switches and links")
        return what, None
    dev, _, port = what.partition(":")
    if dev in fabric.devices:
        i = fabric.devices[dev].interface(port)
        if i is not None:
            a, b = sorted([f"{dev}:{port}", f"{i.peer}:{i.peer_port}"])
            return dev, (a, b)
    raise TetonError(f"{what!r} is neither a switch nor a link 'device:port' of this fabric")


def _reconverge(twin: Twin, fabric: Fabric, meta: TwinMeta, failures: Failures, t0: float) -> Reconvergence:
    """Seconds from the change (t0) until the BGP sessions and then every checked ECMP width match the design."""
    twin.wait_converged(expected_sessions(fabric, meta.switches, failures), timeout=60)
    sessions_at = time.monotonic() - t0
    _, bad = _wait_ecmp(twin, fabric, failures, timeout=60)
    return Reconvergence(sessions_settled_s=round(sessions_at, 3), ecmp_settled_s=round(time.monotonic() - t0, 3),
                         ecmp_mismatched=bad)


def fail(which: str, what: str, how: str = "kill") -> FailResult:
    """Fail `what` (a switch, or a link 'device:port') in the twin `which`."""
    name = twin_name(which)
    meta = _load_meta(name)
    fabric = _fabric(name)
    twin = load_twin(name)
    device, link = _parse_failure(fabric, what)
    failures = meta.failures
    crossed = _crossed(fabric, meta)
    if link is not None and link in crossed:
        raise TetonError(f"link {link[0]} <-> {link[1]} is crossed by `teton twin swap`; `teton twin restore` first")
    t0 = time.monotonic()
    if link is None:
        if device in failures.devices:
            raise TetonError(f"{device} has already failed")
        twin.stop_node(device, how)
        failures = replace(failures, devices=(*failures.devices, device))
    else:
        if link in failures.links:
            raise TetonError(f"link {link[0]} <-> {link[1]} has already failed")
        dev, _, port = link[0].partition(":")
        twin.set_link(dev, port, False)
        failures = replace(failures, links=(*failures.links, link))
    meta = replace(meta, failures=failures)
    _save_meta(name, meta)
    # a crossed cable carries no session (its ends' addresses are not one subnet): as good as failed
    effective = replace(failures, links=(*failures.links, *crossed))
    settled = _reconverge(twin, fabric, meta, effective, t0)
    after = check_promise(promise(fabric, [], effective, Sampling(ecmp=0)), TwinObserver(twin))
    return FailResult(twin=name, failed=what, how=how if link is None else "link down", reconvergence=settled,
                      lost=lost_paths(fabric, failures), probed=len(after.promise.pings) + len(after.promise.reach),
                      unreached=after.pings + after.reach)


def _crossed(fabric: Fabric, meta: TwinMeta) -> tuple[tuple[str, str], ...]:
    """The designed links (as Failures spells links) of the cables that `twin swap`s in force have crossed."""
    out = []
    for pair in meta.swaps:
        for end in pair:
            _, link = _parse_failure(fabric, end)
            if link is not None and link not in out:
                out.append(link)
    return tuple(out)


def _end(text: str) -> tuple[str, str]:
    dev, _, port = text.partition(":")
    return dev, port


def swap(which: str, a: str, b: str) -> SwapResult:
    """Cross two cables of the twin `which` on purpose: the ports `a` and `b` ('device:port') trade their far ends,
    keeping their addresses (as two patch cords swapped at a panel).  The same two again put them back; `restore`
    undoes every swap."""
    name = twin_name(which)
    meta = _load_meta(name)
    fabric = _fabric(name)
    twin = load_twin(name)
    for end in (a, b):
        dev, port = _end(end)
        if dev not in fabric.devices or fabric.devices[dev].interface(port) is None:
            raise TetonError(f"{end!r} is no port 'device:port' of this fabric")
        down = [x for x in meta.failures.links if end in x] + [d for d in meta.failures.devices if d == dev]
        if down:
            raise TetonError(f"{end} is on a failed {'link' if ':' in down[0][0] else 'switch'}; `teton twin "
                             "restore` first")
    if _end(a) == _end(b):
        raise TetonError(f"{a} is given twice: name the two ports whose cables to cross")
    cables = tuple(next((n.cable for n in expected(fabric, fabric.devices[_end(x)[0]]) if n.port == _end(x)[1]), "")
                   for x in (a, b))
    one, other = twin.swap(_end(a), _end(b))
    laid = {(lk.a_node, lk.a_if) for lk in (one, other)} | {(lk.b_node, lk.b_if) for lk in (one, other)}
    deadline = time.monotonic() + 10
    while not laid <= twin_lldp.up_ends(twin):       # the new veth pairs' carriers come up
        if time.monotonic() > deadline:
            raise TwinError(f"the crossed cables did not come up within 10 s: {sorted(laid)}")
        time.sleep(0.05)
    # the same two ports as the last swap undo it; any other swap is recorded, for `restore` to undo in reverse
    swaps = meta.swaps[:-1] if meta.swaps and set(meta.swaps[-1]) == {a, b} else (*meta.swaps, (a, b))
    _save_meta(name, replace(meta, swaps=swaps))
    designed = {frozenset(((link.a.device, link.a.port), (link.b.device, link.b.port))) for link in fabric.links}
    return SwapResult(twin=name, ports=(a, b), cables=(cables[0], cables[1]),
                      now=(f"{one.a_node}:{one.a_if} <-> {one.b_node}:{one.b_if}",
                           f"{other.a_node}:{other.a_if} <-> {other.b_node}:{other.b_if}"),
                      undone=all(frozenset(((lk.a_node, lk.a_if), (lk.b_node, lk.b_if))) in designed
                                 for lk in (one, other)))


def lldp(which: str, folder: Path) -> LldpResult:
    """Run lldpd in every namespace of the twin `which` (once; each announcing what its device's files configure)
    and write what every device sees into `folder`, one `lldpctl -f json` file per device (`teton verify cabling`
    reads them)."""
    name = twin_name(which)
    _load_meta(name)
    twin = load_twin(name)
    started = twin_lldp.start(twin)
    raw, seconds, settled = twin_lldp.collect(twin)
    try:
        twin_lldp.write(raw, folder)
    except OSError as exc:
        raise TetonError(f"{folder}: cannot be written: {exc.strerror or exc}") from None
    seen = sum(len(x) for ports in twin_lldp.seen(raw).values() for x in ports.values())
    return LldpResult(twin=name, folder=str(folder), devices=len(raw), neighbours=seen, started=len(started),
                      settled_s=round(seconds, 2), settled=settled)


def restore(which: str) -> RestoreResult:
    """Bring back every failed switch and link, and restart any switch daemon that died outside teton."""
    name = twin_name(which)
    meta = _load_meta(name)
    fabric = _fabric(name)
    twin = load_twin(name)
    failures, swaps = meta.failures, meta.swaps
    t0 = time.monotonic()
    for a, b in reversed(swaps):        # a swap undoes itself
        twin.swap(_end(a), _end(b))
    for device in failures.devices:
        twin.start_node(device)
    twin.set_links([_end(a) for a, _ in failures.links], True)     # together: a server's two links, say
    restarted = twin.ensure_running()
    meta = replace(meta, failures=NO_FAILURES, swaps=())
    _save_meta(name, meta)
    return RestoreResult(twin=name, restored=failures, restarted=tuple(restarted),
                         reconvergence=_reconverge(twin, fabric, meta, NO_FAILURES, t0),
                         uncrossed=swaps)


def down(which: str | None = None, name: str | None = None) -> DownResult:
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
    return DownResult(twin=name, stopped=stopped, leftovers_removed=tuple(leftovers))
