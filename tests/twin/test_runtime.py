"""The twin runtime on a hand-written 2-spine / 2-leaf / 2-host eBGP fabric (RFC 7938 style).

Spines share ASN 4200000001 (a spine never learns a path through the other spine), leaves have their own ASNs.
Links are /31s out of 10.0.0.0/24 (spine even, leaf odd), loopbacks 10.255.0.x/32, hosts 10.1.<rack>.1/31 towards
their leaf (10.1.<rack>.0) with a static default route via the leaf.  The root tests need network namespaces and
FRR; they print their timings (run with -s to see them).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from teton.twin.plan import (
    PlanError,
    TwinInterface,
    TwinLink,
    TwinNode,
    TwinPlan,
    linux_ifname,
    netns_name,
    node_short,
    plan_from_dict,
    plan_to_dict,
    validate_plan,
)
from teton.twin.runtime import Twin, TwinError, UpReport, cleanup_leftovers, split_frr_conf, twin_processes

SPINES = ("z01-spine-01", "z01-spine-02")
LEAVES = ("z01-r001-rtsw", "z01-r002-rtsw")
HOSTS = ("z01-r001-gpu0001-frontend-nic", "z01-r002-gpu0001")  # the first is too long for a short name
SPINE_ASN = 4200000001
LEAF_ASN = (4200000002, 4200000003)
HOST_NIC = "gpu0/nic0-frontend"  # not a valid Linux interface name: the runtime maps it
LEAF_DOWNLINK = "Ethernet1/1"
MTU = 9100


def _uplink(j: int) -> str:  # leaf port towards spine j
    return f"Ethernet{4 * j}"


def _downlink(i: int) -> str:  # spine port towards leaf i
    return f"Ethernet{4 * i}"


def _link_addr(i: int, j: int) -> tuple[str, str]:
    """(spine side, leaf side) of the /31 between leaf i and spine j."""
    k = 2 * (2 * i + j)
    return f"10.0.0.{k}", f"10.0.0.{k + 1}"


def _host_addr(i: int) -> tuple[str, str]:
    """(leaf side, host side) of rack i's host link."""
    return f"10.1.{i + 1}.0", f"10.1.{i + 1}.1"


def _bgp(asn: int, router_id: str, hostname: str, neighbors: list[tuple[str, int]], networks: list[str], *,
         passive: bool) -> str:  # fmt: skip
    lines = [
        "frr version 8.4.4",
        "frr defaults datacenter",
        f"hostname {hostname}",
        "service integrated-vtysh-config",  # vtysh's own: the split must not hand it to the daemons
        "no zebra nexthop kernel enable",
        "!",
        f"router bgp {asn}",
        f" bgp router-id {router_id}",
        " no bgp ebgp-requires-policy",
        " bgp bestpath as-path multipath-relax",
        " timers bgp 1 3",
        " coalesce-time 10",
    ]
    for addr, remote in neighbors:
        lines += [
            f" neighbor {addr} remote-as {remote}",
            f" neighbor {addr} timers connect 1",
            f" neighbor {addr} advertisement-interval 0",
        ]
        if passive:
            lines.append(f" neighbor {addr} passive")
    lines += [" !", " address-family ipv4 unicast"]
    lines += [f"  network {n}" for n in networks]
    lines += ["  maximum-paths 8", " exit-address-family", "exit", "!", "line vty", "!"]
    return "\n".join(lines) + "\n"


def make_plan(name: str) -> TwinPlan:
    nodes: list[TwinNode] = []
    links: list[TwinLink] = []
    for j, spine in enumerate(SPINES):
        itfs = [TwinInterface("lo", (f"10.255.0.{j + 1}/32",), 65536)]
        neighbors = []
        for i in range(len(LEAVES)):
            s_addr, l_addr = _link_addr(i, j)
            itfs.append(TwinInterface(_downlink(i), (f"{s_addr}/31",), MTU))
            neighbors.append((l_addr, LEAF_ASN[i]))
        conf = _bgp(SPINE_ASN, f"10.255.0.{j + 1}", spine, neighbors, [f"10.255.0.{j + 1}/32"], passive=True)
        nodes.append(TwinNode(spine, "switch", tuple(itfs), conf))
    for i, leaf in enumerate(LEAVES):
        loop = f"10.255.0.{len(SPINES) + i + 1}"
        leaf_side, host_side = _host_addr(i)
        itfs = [TwinInterface("lo", (f"{loop}/32",), 65536)]
        neighbors = []
        for j, spine in enumerate(SPINES):
            s_addr, l_addr = _link_addr(i, j)
            itfs.append(TwinInterface(_uplink(j), (f"{l_addr}/31",), MTU))
            neighbors.append((s_addr, SPINE_ASN))
            links.append(TwinLink(leaf, _uplink(j), spine, _downlink(i), MTU))
        itfs.append(TwinInterface(LEAF_DOWNLINK, (f"{leaf_side}/31", f"fd00:1:{i + 1}::/127"), MTU))
        conf = _bgp(LEAF_ASN[i], loop, leaf, neighbors, [f"{loop}/32", f"{leaf_side}/31"], passive=False)
        nodes.append(TwinNode(leaf, "switch", tuple(itfs), conf))
        host_itf = TwinInterface(HOST_NIC, (f"{host_side}/31", f"fd00:1:{i + 1}::1/127"), MTU)
        nodes.append(TwinNode(HOSTS[i], "host", (host_itf,), None, routes=(("default", leaf_side, HOST_NIC),)))
        links.append(TwinLink(leaf, LEAF_DOWNLINK, HOSTS[i], HOST_NIC, MTU))
    return TwinPlan(name, tuple(nodes), tuple(links))


FULL = {SPINES[0]: 2, SPINES[1]: 2, LEAVES[0]: 2, LEAVES[1]: 2}
H1, H2 = _host_addr(0)[1], _host_addr(1)[1]
H1_NET, H2_NET = f"{_host_addr(0)[0]}/31", f"{_host_addr(1)[0]}/31"


def _wait(predicate: Callable[[], bool], timeout: float, step: float = 0.01) -> float:
    t0 = time.monotonic()
    while not predicate():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"condition not met within {timeout} s")
        time.sleep(step)
    return time.monotonic() - t0


# ------------------------------------------------------------------------------------------------ no root needed


def test_names_are_deterministic_and_short() -> None:
    assert linux_ifname("Ethernet0") == "Ethernet0"
    assert linux_ifname("lo") == "lo"
    mapped = linux_ifname("Ethernet1/1")
    assert mapped == linux_ifname("Ethernet1/1") and len(mapped) <= 15 and "/" not in mapped
    assert linux_ifname("a-very-long-interface-name") != linux_ifname("a-very-long-interface-name2")
    assert node_short("z01-r001-rtsw") == "z01-r001-rtsw"
    long = node_short(HOSTS[0])
    assert len(long) <= 24 and long == node_short(HOSTS[0])
    assert netns_name("lab", "z01-r001-rtsw") == "tt-lab-z01-r001-rtsw"


def test_plan_round_trip_and_checks() -> None:
    plan = make_plan("unit")
    validate_plan(plan)
    assert plan_from_dict(json.loads(json.dumps(plan_to_dict(plan)))) == plan
    bad = TwinPlan(
        "bad-name",
        (TwinNode("s", "switch", (TwinInterface("e1", ("10.0.0.0/31",), 1500),), None),),
        (TwinLink("s", "e1", "nope", "e2", 1500), TwinLink("s", "e9", "s", "e1", 1500)),
    )
    with pytest.raises(PlanError) as err:
        validate_plan(bad)
    text = str(err.value)
    for fragment in ("plan name", "has no frr_conf", "unknown node 'nope'", "no interface 'e9'", "already used"):
        assert fragment in text


def test_split_frr_conf() -> None:
    conf = make_plan("unit").nodes[2].frr_conf
    assert conf is not None
    extra = (
        "log syslog informational\nservice integrated-vtysh-config\ninterface Ethernet0\n description up\nexit\n"
        "ip route 1.2.3.0/24 10.0.0.0\n"
    )
    parts, warnings = split_frr_conf(conf + extra)
    assert "router bgp" in parts["bgpd"] and "router bgp" not in parts["zebra"]
    assert "no zebra nexthop kernel enable" in parts["zebra"] and "zebra" not in parts["bgpd"]
    assert "interface Ethernet0" in parts["zebra"] and "interface" not in parts["bgpd"]
    for both in ("frr defaults datacenter", "hostname z01-r001-rtsw", "log syslog informational"):
        assert both in parts["zebra"] and both in parts["bgpd"]
    assert "line vty" not in parts["zebra"] + parts["bgpd"]
    assert "service" not in parts["zebra"] + parts["bgpd"]  # vtysh's own: the daemons would refuse it
    assert "  maximum-paths 8\n exit-address-family\nexit" in parts["bgpd"]
    assert len(warnings) == 1 and "staticd" in warnings[0]


# ------------------------------------------------------------------------------------------------ root


@dataclass
class Lab:
    twin: Twin
    up_s: float
    converge_s: float
    report: UpReport


def _state_root() -> Path:
    """A fresh directory the frr user can traverse (pytest's tmp_path sits below a 0700 directory)."""
    root = Path(tempfile.mkdtemp(prefix="teton-twin-"))
    root.chmod(0o755)
    return root


@pytest.fixture
def state_root() -> Iterator[Path]:
    root = _state_root()
    yield root
    shutil.rmtree(root, ignore_errors=True)


def _full_ecmp(twin: Twin) -> Callable[[], bool]:
    return lambda: twin.kernel_nexthops(LEAVES[0], H2_NET) == 2 and twin.kernel_nexthops(LEAVES[1], H1_NET) == 2


@pytest.fixture(scope="module")
def lab() -> Iterator[Lab]:
    plan = make_plan("tlab")
    cleanup_leftovers("tt-tlab-")  # from an earlier, interrupted run
    root = _state_root()
    twin = Twin(plan, root / "st")
    try:
        report = twin.up()
        converge_s = twin.wait_converged(FULL, timeout=20)
        # sessions up is not routes installed: wait for ECMP in both leaves' kernels too
        converge_s += _wait(_full_ecmp(twin), timeout=10)
        yield Lab(twin, report.seconds, converge_s, report)
    finally:
        twin.down()
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.root
def test_up_and_converge(lab: Lab) -> None:
    twin = lab.twin
    print(f"\nup {lab.up_s:.2f} s {lab.report.phases}, converge {lab.converge_s:.2f} s")
    assert lab.up_s + lab.converge_s < 20
    assert lab.report.warnings == ()
    for node, want in FULL.items():
        assert len(twin.established_peers(twin.bgp_summary(node))) == want
    # kernel names: the host NIC was renamed, the namespace of the long host name shortened
    host = HOSTS[0]
    links = subprocess.run(
        ["ip", "-n", twin.netns(host), "-j", "link", "show"], check=True, capture_output=True, text=True
    ).stdout
    names = {link["ifname"]: link["mtu"] for link in json.loads(links)}
    assert names[linux_ifname(HOST_NIC)] == MTU
    assert twin.netns(host) == f"tt-tlab-{node_short(host)}"
    sysctl = subprocess.run(
        ["ip", "netns", "exec", twin.netns(SPINES[0]), "sysctl", "-n", "net.ipv4.ip_forward"],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert sysctl.strip() == "1"
    rss = twin.daemon_rss()
    assert set(rss) == set(FULL)
    print(f"daemon RSS: {sum(rss.values()) / 2**20:.1f} MiB for {len(rss)} switches")
    state = json.loads(twin.state_file.read_text())
    assert set(state["pids"]) == set(FULL) and state["namespaces"][host] == twin.netns(host)


@pytest.mark.root
def test_host_to_host_ping(lab: Lab) -> None:
    twin = lab.twin
    assert twin.ping(HOSTS[0], H1, H2)
    assert twin.ping(HOSTS[1], H2, H1, count=3)
    assert twin.ping(HOSTS[0], HOST_NIC, "fd00:1:1::")  # IPv6 to its leaf, source given as plan interface
    assert not twin.ping(HOSTS[0], H1, "10.9.9.9", timeout=0.3)


@pytest.mark.root
def test_ecmp_and_spine_failure(lab: Lab) -> None:
    twin = lab.twin
    leaf = LEAVES[0]
    assert twin.kernel_nexthops(leaf, H2_NET) == 2
    rib = twin.routes(leaf, H2_NET)[H2_NET][0]
    assert rib["protocol"] == "bgp" and len(rib["nexthops"]) == 2
    try:
        t0 = time.monotonic()
        twin.stop_node(SPINES[0])
        narrowed = _wait(lambda: twin.kernel_nexthops(leaf, H2_NET) == 1, timeout=10)
        print(f"\nspine stop: leaf kernel down to 1 path after {narrowed * 1000:.0f} ms")
        assert twin.ping(HOSTS[0], H1, H2)
        assert twin.kernel_nexthops(LEAVES[1], H1_NET) == 1
        sessions = twin.wait_converged({SPINES[1]: 2, LEAVES[0]: 1, LEAVES[1]: 1}, timeout=10)
        print(f"sessions reconverged {sessions:.2f} s after the stop ({time.monotonic() - t0:.2f} s in all)")
        assert twin.daemon_rss()[SPINES[0]] == 0
    finally:
        twin.start_node(SPINES[0])
    back = twin.wait_converged(FULL, timeout=20) + _wait(_full_ecmp(twin), timeout=10)
    print(f"spine restarted: full mesh again after {back:.2f} s")
    assert twin.ping(HOSTS[0], H1, H2)


@pytest.mark.root
def test_link_down_narrows_spine(lab: Lab) -> None:
    twin = lab.twin
    spine, leaf = SPINES[0], LEAVES[0]
    assert twin.kernel_nexthops(spine, H1_NET) == 1
    try:
        twin.set_link(leaf, _uplink(0), up=False)
        twin.wait_converged({spine: 1, leaf: 1}, timeout=10)
        # spine 1 has no way left to rack 1 (the path through spine 2 carries its own ASN), leaf 2 one path
        # the kernel drops the route with the interface at once; FRR's RIB follows when the session goes down
        _wait(lambda: twin.kernel_nexthops(spine, H1_NET) == 0, timeout=10)
        _wait(lambda: twin.routes(spine, H1_NET) == {}, timeout=10)
        _wait(lambda: twin.kernel_nexthops(LEAVES[1], H1_NET) == 1, timeout=10)
        assert twin.ping(HOSTS[0], H1, H2) and twin.ping(HOSTS[1], H2, H1)
    finally:
        twin.set_link(leaf, _uplink(0), up=True)
    twin.wait_converged(FULL, timeout=20)
    _wait(_full_ecmp(twin), timeout=10)


@pytest.mark.root
def test_frozen_spine_hits_the_hold_timer(lab: Lab) -> None:
    twin = lab.twin
    try:
        twin.stop_node(SPINES[1], how="freeze")
        t = twin.wait_converged({LEAVES[0]: 1, LEAVES[1]: 1}, timeout=10)
        print(f"\nfrozen spine: sessions dropped after {t:.2f} s (hold time 3 s)")
        assert twin.ping(HOSTS[0], H1, H2)
    finally:
        twin.start_node(SPINES[1])
    twin.wait_converged(FULL, timeout=20)
    _wait(_full_ecmp(twin), timeout=10)


@pytest.mark.root
def test_all_links_of_a_spine_down(lab: Lab) -> None:
    twin = lab.twin
    try:
        twin.stop_node(SPINES[1], how="links")
        twin.wait_converged({SPINES[1]: 0, LEAVES[0]: 1, LEAVES[1]: 1}, timeout=10)
        _wait(lambda: twin.kernel_nexthops(LEAVES[0], H2_NET) == 1, timeout=10)
        assert twin.ping(HOSTS[0], H1, H2)
        with pytest.raises(TwinError, match="already stopped"):
            twin.stop_node(SPINES[1])
    finally:
        twin.start_node(SPINES[1])
    twin.wait_converged(FULL, timeout=20)
    _wait(_full_ecmp(twin), timeout=10)


def _pids(twin: Twin, node: str) -> dict[str, int]:
    """The daemon PIDs the twin's state file records for a switch."""
    return json.loads(twin.state_file.read_text())["pids"].get(node, {})


def _dead(pid: int) -> bool:
    """Gone, or a zombie whose other threads have exited too (only then can its parent reap it: FRR daemons are
    multi-threaded, and the main thread shows "Z" while the others are still on their way out)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        threads = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return True
    return state in ("Z", "X") and threads == [str(pid)]


def _kill_outside(pid: int) -> None:
    """SIGKILL a daemon behind teton's back and wait until it is gone (a zombie counts)."""
    os.kill(pid, signal.SIGKILL)
    _wait(lambda: _dead(pid), timeout=5)


def _back_to_full(twin: Twin) -> None:
    twin.wait_converged(FULL, timeout=20)
    _wait(_full_ecmp(twin), timeout=10)


@pytest.mark.root
def test_ensure_running_restarts_daemons_killed_outside(lab: Lab) -> None:
    twin = lab.twin
    leaf = LEAVES[1]
    assert twin.ensure_running() == []
    before = _pids(twin, leaf)
    _kill_outside(before["bgpd"])
    t0 = time.monotonic()
    assert twin.ensure_running() == [leaf]
    after = _pids(twin, leaf)
    assert set(after) == {"zebra", "bgpd"} and not set(after.values()) & set(before.values())
    assert twin.bgp_summary(leaf) is not None and twin.routes(leaf, H1_NET) is not None  # both daemons answer
    _back_to_full(twin)
    print(f"\nbgpd killed outside teton: restarted and full mesh again after {time.monotonic() - t0:.2f} s")
    assert twin.ensure_running() == []
    # a switch stopped on purpose stays stopped
    try:
        twin.stop_node(SPINES[1], "kill")
        assert twin.ensure_running() == []
        assert twin.daemon_rss()[SPINES[1]] == 0 and not _pids(twin, SPINES[1])
    finally:
        twin.start_node(SPINES[1])
    _back_to_full(twin)


@pytest.mark.root
def test_start_node_after_daemons_died_while_stopped(lab: Lab) -> None:
    """stop_node "freeze" and "links", then a daemon is killed outside teton: start_node restarts the switch."""
    twin = lab.twin
    for how, victim in (("freeze", "zebra"), ("links", "bgpd")):
        spine = SPINES[0]
        before = _pids(twin, spine)
        try:
            twin.stop_node(spine, how)
            _kill_outside(before[victim])
            assert twin.ensure_running() == []  # stopped on purpose: left alone
        finally:
            twin.start_node(spine)
        after = _pids(twin, spine)
        assert set(after) == {"zebra", "bgpd"} and not set(after.values()) & set(before.values()), how
        _back_to_full(twin)


@pytest.mark.root
def test_start_node_checks_config(lab: Lab) -> None:
    twin = lab.twin
    spine = SPINES[0]
    conf = twin.node_dir(spine) / "bgpd.conf"
    good = conf.read_text()
    try:
        twin.stop_node(spine, "kill")
        conf.write_text(good.replace(" timers bgp 1 3", " timers bgp 1 1"))
        with pytest.raises(TwinError, match=rf"(?s){spine} bgpd: .*on config line \d+: +timers bgp 1 1"):
            twin.start_node(spine)
        assert not _pids(twin, spine) and twin.daemon_rss()[spine] == 0  # stopped again, not half configured
        with pytest.raises(TwinError, match="already stopped"):
            twin.stop_node(spine)
    finally:
        conf.write_text(good)
        twin.start_node(spine)
    _back_to_full(twin)


def _gone(pids: list[int], prefix: str) -> None:
    assert not [ns for ns in os.listdir("/run/netns") if ns.startswith(prefix)]
    assert not twin_processes(prefix)
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat")
        assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.root
def test_down_removes_everything(state_root: Path) -> None:
    cleanup_leftovers("tt-tdown-")
    twin = Twin(make_plan("tdown"), state_root / "st")
    try:
        report = twin.up()
        pids = [pid for d in report.pids.values() for pid in d.values()]
        assert len(pids) == 8 and twin_processes("tt-tdown-").keys() == set(pids)
    finally:
        twin.down()
    _gone(pids, "tt-tdown-")
    assert not (state_root / "st").exists()
    with pytest.raises(TwinError, match="no twin state"):
        Twin.load(state_root / "st")


@pytest.mark.root
def test_failed_up_cleans_up(state_root: Path, tmp_path: Path) -> None:
    plan = make_plan("tfail")
    broken = plan.nodes[0].frr_conf.replace("maximum-paths 8", "maximum-pathz 8")  # type: ignore[union-attr]
    nodes = (TwinNode(plan.nodes[0].name, "switch", plan.nodes[0].interfaces, broken), *plan.nodes[1:])
    twin = Twin(TwinPlan(plan.name, nodes, plan.links), state_root / "st")
    with pytest.raises(TwinError, match="maximum-pathz"):
        twin.up()
    _gone([], "tt-tfail-")
    with pytest.raises(TwinError, match="user frr cannot reach"):  # below pytest's 0700 directory
        Twin(plan, tmp_path / "st").up()
    _gone([], "tt-tfail-")


def _with_conf(plan: TwinPlan, node: str, edit: Callable[[str], str]) -> TwinPlan:
    nodes = tuple(replace(n, frr_conf=edit(n.frr_conf or "")) if n.name == node else n for n in plan.nodes)
    return TwinPlan(plan.name, nodes, plan.links)


@pytest.mark.root
def test_refused_config_line_fails_up(state_root: Path) -> None:
    """bgpd refuses `timers bgp 1 1` (hold time below 3 s) which `vtysh -C` accepts: up() must fail, not warn."""
    cleanup_leftovers("tt-trefuse-")
    plan = make_plan("trefuse")
    spine = SPINES[1]
    bad = _with_conf(plan, spine, lambda c: c.replace(" timers bgp 1 3", " timers bgp 1 1"))
    twin = Twin(bad, state_root / "st")
    with pytest.raises(TwinError) as err:
        twin.up()
    text = str(err.value)
    print(f"\n{text}")
    assert f"{spine} bgpd: Command returned Warning Config Failed on config line" in text
    assert "timers bgp 1 1" in text and "hold time" in text  # the log line, then bgpd's own reason
    assert not any(node in text for node in (SPINES[0], *LEAVES))
    _gone([], "tt-trefuse-")
    assert (twin.node_dir(spine) / "bgpd.log").exists()  # logs kept
    # an unknown command in zebra's part, past `vtysh -C` (validate=False): refused by zebra itself
    bad = _with_conf(plan, LEAVES[0], lambda c: c.replace("no zebra nexthop kernel enable", "zebra frobnicate 7"))
    with pytest.raises(TwinError, match=rf"{LEAVES[0]} zebra: No such command on config line \d+: zebra frobnicate"):
        Twin(bad, state_root / "st2").up(validate=False)
    _gone([], "tt-trefuse-")


_CRASHING_UP = (
    "import json, os, sys; from pathlib import Path;"
    "from teton.twin.plan import plan_from_dict; from teton.twin.runtime import Twin;"
    "Twin(plan_from_dict(json.load(sys.stdin)), Path(sys.argv[1])).up(); os._exit(0)"
)


def _up_in_a_process_that_dies(plan: TwinPlan, state: Path) -> dict[int, str]:
    """Bring a twin up from another Python process that exits without down(); return its orphaned daemons."""
    subprocess.run(
        [sys.executable, "-c", _CRASHING_UP, str(state)], input=json.dumps(plan_to_dict(plan)), text=True,
        check=True, timeout=60,
    )  # fmt: skip
    orphans = twin_processes(f"tt-{plan.name}-")
    assert len(orphans) == 8
    return orphans


@pytest.mark.root
def test_load_and_down_from_another_process(state_root: Path) -> None:
    plan = make_plan("tload")
    cleanup_leftovers("tt-tload-")
    try:
        orphans = _up_in_a_process_that_dies(plan, state_root / "st")
        twin = Twin.load(state_root / "st")
        assert twin.plan == plan
        twin.wait_converged(FULL, timeout=20)
        twin.down()
    finally:
        cleanup_leftovers("tt-tload-")
    _gone(list(orphans), "tt-tload-")
    assert not (state_root / "st").exists()


@pytest.mark.root
def test_cleanup_leftovers_after_crash(state_root: Path) -> None:
    """A process brings a twin up and dies without down(); its state directory is then lost."""
    plan = make_plan("tcrash")
    cleanup_leftovers("tt-tcrash-")
    try:
        orphans = _up_in_a_process_that_dies(plan, state_root / "st")
        shutil.rmtree(state_root / "st")
        removed = cleanup_leftovers("tt-tcrash-")
    finally:
        cleanup_leftovers("tt-tcrash-")
    assert sum(r.startswith("netns ") for r in removed) == len(plan.nodes)
    assert sorted(r for r in removed if r.startswith("pid ")) == sorted(f"pid {p} {d}" for p, d in orphans.items())
    _gone(list(orphans), "tt-tcrash-")
    with pytest.raises(ValueError, match="must start with"):
        cleanup_leftovers("")
