"""Runtime of a fabric twin: makes a `TwinPlan` real in network namespaces on this machine, and tears it down.

One namespace per node (``tt-<plan>-<node>``), veth pairs for links, zebra then bgpd per switch, each instance with
its own directory ``<state_dir>/<netns>/`` holding its configs, logs, vty sockets, zserv socket and pid files, all
owned by ``frr:frr``.  ``<state_dir>/state.json`` records namespaces and daemon PIDs so that another process can call
``Twin.load(state_dir).down()``; `cleanup_leftovers` needs nothing but the name prefix (it works after a crash that
lost the state directory).

``state_dir`` must be reachable by user ``frr`` (every parent directory searchable: pytest's ``tmp_path`` is not)
and short enough for unix socket paths (107 characters for ``<state_dir>/<netns>/zserv.api``); both are checked.

What the caller's ``frr_conf`` must contain (the runtime does not rewrite it; these settings come from the measured
reference notes "FRR fabric twin in network namespaces"; up() warns only about the first one):
  - ``no zebra nexthop kernel enable`` (with FRR 8.4 kernel nexthop groups a link flap leaves the kernel with one
    path while FRR reports two),
  - in ``router bgp``: ``no bgp ebgp-requires-policy``, ``bgp bestpath as-path multipath-relax``, ``maximum-paths N``
    under the address families, and for fast convergence ``timers bgp 1 3``, ``coalesce-time 10``,
    ``neighbor X timers connect 1``, ``neighbor X advertisement-interval 0`` and ``neighbor X passive`` on the upper
    tier,
  - interface names as the kernel sees them: ``teton.twin.plan.linux_ifname(name)``.
The integrated text is split per daemon (`split_frr_conf`): FRR 8.4 does accept the whole file with ``-f`` in both
daemons, but each logs "No such command" for every line of the other daemon, which would drown real errors.  The
whole file is checked first with ``vtysh -C`` (many configs per call, "end" between them), and after start-up every
"on config line" complaint in the daemons' logs is returned in ``UpReport.warnings``.

Queries (readiness, ``wait_converged``, ``bgp_summary``, ``routes``) talk to the daemons' vty sockets directly
(`vty_command`, ~1 ms) instead of starting ``vtysh`` (~35 ms of CPU each); `Twin.vtysh` runs the real vtysh.
"""

from __future__ import annotations

import grp
import ipaddress
import itertools
import json
import os
import pwd
import re
import shutil
import signal
import socket
import stat
import subprocess
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from teton.twin.plan import (
    NETNS_PREFIX,
    TwinLink,
    TwinNode,
    TwinPlan,
    linux_ifname,
    netns_name,
    plan_from_dict,
    plan_to_dict,
    validate_plan,
)

FRR_BIN = Path("/usr/lib/frr")
NETNS_DIR = Path("/run/netns")
NEIGH_RECORD = Path("/run/teton-twin/neigh-gc-thresh.json")
"""Original neighbour-table thresholds while some twin has raised them (global, shared by all twins)."""

DAEMONS = ("zebra", "bgpd")
_SUN_PATH_MAX = 107
_STOP_MODES = ("kill", "freeze", "links")
_CONCURRENCY = 32


SOURCE_TABLE = 100  # first routing table used for source routes (one per source address)

class TwinError(RuntimeError):
    """A twin operation failed; the message says what and where to look."""


@dataclass(frozen=True)
class UpReport:
    seconds: float  # wall time of up()
    phases: dict[str, float]  # seconds per phase: prepare, namespaces, interfaces, zebra, bgpd
    namespaces: dict[str, str]  # node -> netns
    pids: dict[str, dict[str, int]]  # switch -> {"zebra": pid, "bgpd": pid}
    neigh_thresholds_raised: bool
    warnings: tuple[str, ...] = field(default=())  # config lines a daemon rejected, unsupported config


# --------------------------------------------------------------------------------------------- frr.conf splitting

_BGPD_ONLY = (
    "router bgp",
    "bgp ",
    "ip as-path",
    "ip community-list",
    "ip extcommunity-list",
    "ip large-community-list",
    "rpki",
    "bmp ",
    "debug bgp",
)
_ZEBRA_ONLY = (
    "interface ",
    "vrf ",
    "zebra ",
    "no zebra ",
    "ip forwarding",
    "ipv6 forwarding",
    "no ip forwarding",
    "no ipv6 forwarding",
    "ip nht",
    "ipv6 nht",
    "no ip nht",
    "no ipv6 nht",
    "ip protocol",
    "ipv6 protocol",
    "ip import-table",
    "table ",
    "debug zebra",
    "mpls ",
)
_STATICD = ("ip route ", "ipv6 route ")  # staticd: not run by the twin
_DROPPED = ("line vty",)  # vty over TCP is off (-P 0); zebra rejects the block
_BLOCK_END = ("exit", "exit-vrf", "end")


def _owner(first_line: str) -> str:
    s = first_line.strip()
    if s.startswith(_BGPD_ONLY):
        return "bgpd"
    if s.startswith(_ZEBRA_ONLY):
        return "zebra"
    if s.startswith(_STATICD):
        return "staticd"
    if s.startswith(_DROPPED):
        return "none"
    return "both"


def split_frr_conf(text: str) -> tuple[dict[str, str], list[str]]:
    """Split an integrated frr.conf into {"zebra": text, "bgpd": text} plus warnings.

    Blocks (a line at column 0 with its indented lines and closing ``exit``) keep their order; ``router bgp`` and
    the bgp lists go to bgpd, ``interface``/``vrf`` and the zebra globals to zebra, everything else (``frr defaults``,
    ``hostname``, ``log``, route-maps, prefix-lists, access-lists ...) to both.  ``!`` comments are dropped.
    """
    blocks: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith(("!", "#")):
            continue
        indented = line[0].isspace()
        if not indented and stripped in _BLOCK_END:
            if stripped != "end" and blocks:
                blocks[-1][1].append(line)
            continue
        if indented and blocks:
            blocks[-1][1].append(line)
        else:
            blocks.append((_owner(line), [line]))
    out: dict[str, list[str]] = {d: [] for d in DAEMONS}
    warnings: list[str] = []
    for owner, lines in blocks:
        if owner == "staticd":
            warnings.append(f"static route needs staticd, which the twin does not run: {lines[0].strip()}")
        for daemon in DAEMONS:
            if owner in (daemon, "both"):
                out[daemon].extend(lines)
    return {d: "\n".join(lines) + "\n" for d, lines in out.items()}, warnings


# --------------------------------------------------------------------------------------------- small helpers


def _run(cmd: Sequence[str], *, input: str | None = None, timeout: float = 60.0, check: bool = True) -> str:
    try:
        res = subprocess.run(list(cmd), input=input, check=False, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as exc:
        raise TwinError(f"{' '.join(cmd)}: no answer within {timeout} s") from exc
    if check and res.returncode != 0:
        raise TwinError(f"{' '.join(cmd)} failed (rc {res.returncode}): {(res.stderr or res.stdout).strip()}")
    return res.stdout


def _run_all(
    cmds: Sequence[Sequence[str]], inputs: Sequence[str | None] | None = None, timeout: float = 60.0
) -> list[subprocess.CompletedProcess[str]]:
    """Run commands concurrently (at most _CONCURRENCY at a time); results in order."""
    if not cmds:
        return []
    ins = list(inputs) if inputs is not None else [None] * len(cmds)

    def one(i: int) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                list(cmds[i]), input=ins[i], check=False, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return subprocess.CompletedProcess(list(cmds[i]), 124, "", f"no answer within {timeout} s")

    with ThreadPoolExecutor(max_workers=min(_CONCURRENCY, len(cmds))) as pool:
        return list(pool.map(one, range(len(cmds))))


def vty_command(socket_path: Path, command: str, timeout: float = 5.0) -> tuple[int, str]:
    """One command straight to a daemon's vty socket, as vtysh does: (status, output); status 0 is success.

    The daemon answers in its view node (show commands); ~1 ms instead of ~35 ms of CPU for starting vtysh.
    """
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(str(socket_path))
        sock.sendall(command.encode() + b"\0")
        buf = bytearray()
        while not (len(buf) >= 4 and buf[-4:-1] == b"\0\0\0"):
            chunk = sock.recv(1 << 16)
            if not chunk:
                raise ConnectionError(f"{socket_path} closed the connection")
            buf += chunk
    return buf[-1], buf[:-4].decode(errors="replace")


def _list_netns() -> list[str]:
    try:
        return sorted(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return []


def _proc_state(pid: int) -> str | None:
    """Process state letter, None if there is no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def _alive(pid: int, popen: subprocess.Popen[bytes] | None = None) -> bool:
    if popen is not None:
        return popen.poll() is None
    return _proc_state(pid) not in (None, "Z", "X")


def _cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _terminate(pids: Iterable[int], popens: dict[int, subprocess.Popen[bytes]], grace: float = 5.0) -> None:
    """TERM (and CONT, for frozen ones) every pid, KILL what is still there after `grace` s, reap our children."""
    todo = sorted(set(pids))
    for pid in todo:
        _signal(pid, signal.SIGTERM)
        _signal(pid, signal.SIGCONT)
    deadline = time.monotonic() + grace
    while (todo := [p for p in todo if _alive(p, popens.get(p))]) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in todo:
        _signal(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while (todo := [p for p in todo if _alive(p, popens.get(p))]) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in pids:
        if (p := popens.get(pid)) is not None:
            try:
                p.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no file)"


def _frr_cannot_reach(path: Path) -> Path | None:
    """The first existing ancestor of `path` that user frr cannot traverse (daemons drop to frr), else None."""
    try:
        pw = pwd.getpwnam("frr")
    except KeyError:
        return None  # no frr user: the daemons will say so
    groups = {pw.pw_gid} | {g.gr_gid for g in grp.getgrall() if "frr" in g.gr_mem}
    for p in [*reversed(path.parents), path]:
        try:
            st = p.stat()
        except FileNotFoundError:
            return None
        if st.st_uid == pw.pw_uid:
            ok = st.st_mode & stat.S_IXUSR
        elif st.st_gid in groups:
            ok = st.st_mode & stat.S_IXGRP
        else:
            ok = st.st_mode & stat.S_IXOTH
        if not ok:
            return p
    return None


def _chown_frr(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        shutil.chown(p, "frr", "frr")


# --------------------------------------------------------------------------------------------- neighbour tables

_NEIGH_KEYS = tuple(f"net.{fam}.neigh.default.gc_thresh{i}" for fam in ("ipv4", "ipv6") for i in (1, 2, 3))


def _sysctl_path(key: str) -> Path:
    return Path("/proc/sys") / key.replace(".", "/")


def _neigh_needed(plan: TwinPlan) -> int:
    # every link end may hold an IPv4 and an IPv6 (link-local) neighbour; the table is shared by all namespaces
    return 4 * len(plan.links) + 2 * len(plan.nodes)


def _raise_neigh_thresholds(needed: int) -> bool:
    current = {k: int(_sysctl_path(k).read_text()) for k in _NEIGH_KEYS}
    if needed <= min(current[k] for k in _NEIGH_KEYS if k.endswith("1")):
        return False
    if not NEIGH_RECORD.exists():
        NEIGH_RECORD.parent.mkdir(parents=True, exist_ok=True)
        NEIGH_RECORD.write_text(json.dumps(current))
    for key in _NEIGH_KEYS:
        factor = {"1": 1, "2": 2, "3": 4}[key[-1]]
        _sysctl_path(key).write_text(str(max(current[key], needed * factor)))
    return True


def _restore_neigh_thresholds_if_idle() -> bool:
    """Put the original thresholds back once no twin namespace is left."""
    if not NEIGH_RECORD.exists() or any(ns.startswith(NETNS_PREFIX) for ns in _list_netns()):
        return False
    original = json.loads(NEIGH_RECORD.read_text())
    # lower thresh1 first so that thresh1 <= thresh2 <= thresh3 holds at every step
    for key in sorted(original, key=lambda k: k[-1]):
        _sysctl_path(key).write_text(str(original[key]))
    NEIGH_RECORD.unlink()
    try:
        NEIGH_RECORD.parent.rmdir()
    except OSError:
        pass
    return True


# --------------------------------------------------------------------------------------------- the twin


class Twin:
    """A plan made real (or about to be).  Not thread-safe; one Twin object per state directory."""

    def __init__(self, plan: TwinPlan, state_dir: Path):
        validate_plan(plan)
        self.plan = plan
        self.state_dir = Path(state_dir).resolve()
        self._nodes: dict[str, TwinNode] = {n.name: n for n in plan.nodes}
        self._ns: dict[str, str] = {n.name: netns_name(plan.name, n.name) for n in plan.nodes}
        self._ends: dict[tuple[str, str], TwinLink] = {}
        for link in plan.links:
            self._ends[(link.a_node, link.a_if)] = link
            self._ends[(link.b_node, link.b_if)] = link
        self._procs: dict[int, subprocess.Popen[bytes]] = {}
        self._pids: dict[str, dict[str, int]] = {}
        self._stopped: dict[str, str] = {}
        self._neigh_raised = False
        longest = max((len(str(self.node_dir(n))) for n in self._nodes), default=0) + len("/zserv.api")
        if longest > _SUN_PATH_MAX:
            raise TwinError(
                f"state dir {self.state_dir} is too deep: socket paths would be {longest} characters, the kernel "
                f"allows {_SUN_PATH_MAX}; use a shorter state_dir"
            )
        state = self._read_state()
        if state is not None:
            if state.get("plan", {}).get("name") != plan.name:
                raise TwinError(f"{self.state_file} belongs to twin {state.get('plan', {}).get('name')!r}")
            self._pids = {n: dict(d) for n, d in state.get("pids", {}).items()}
            self._stopped = dict(state.get("stopped", {}))
            self._neigh_raised = bool(state.get("neigh_thresholds_raised"))

    @classmethod
    def load(cls, state_dir: Path) -> Twin:
        """The twin recorded in `state_dir`/state.json (e.g. to bring it down from another process)."""
        state_file = Path(state_dir) / "state.json"
        try:
            state = json.loads(state_file.read_text())
        except FileNotFoundError as exc:
            raise TwinError(f"no twin state in {state_dir}: use cleanup_leftovers()") from exc
        return cls(plan_from_dict(state["plan"]), Path(state_dir))

    # ---------------------------------------------------------------- names and paths

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def prefix(self) -> str:
        """Every namespace of this twin starts with this."""
        return f"{NETNS_PREFIX}{self.plan.name}-"

    def netns(self, node: str) -> str:
        return self._ns[self._node(node).name]

    def ifname(self, node: str, interface: str) -> str:
        """Kernel name of a plan interface."""
        self._node(node)
        return linux_ifname(interface)

    def node_dir(self, node: str) -> Path:
        return self.state_dir / self._ns[node]

    def _node(self, name: str) -> TwinNode:
        try:
            return self._nodes[name]
        except KeyError:
            raise TwinError(f"twin {self.plan.name!r} has no node {name!r}") from None

    def _switch(self, name: str) -> TwinNode:
        node = self._node(name)
        if node.kind != "switch":
            raise TwinError(f"{name!r} is a {node.kind}, not a switch")
        return node

    @property
    def switches(self) -> list[str]:
        return [n.name for n in self.plan.nodes if n.kind == "switch"]

    # ---------------------------------------------------------------- state file

    def _read_state(self) -> dict[str, Any] | None:
        try:
            return json.loads(self.state_file.read_text())
        except FileNotFoundError:
            return None

    def _save_state(self, status: str) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        state = {
            "version": 1,
            "status": status,
            "plan": plan_to_dict(self.plan),
            "namespaces": self._ns,
            "node_dirs": {n: self._ns[n] for n in self._nodes},  # relative to the state dir
            "pids": self._pids,
            "stopped": self._stopped,
            "neigh_thresholds_raised": self._neigh_raised,
        }
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        tmp.replace(self.state_file)

    # ---------------------------------------------------------------- up

    def up(self, validate: bool = True) -> UpReport:
        """Create everything, start the daemons and wait until each answers on its vty socket.

        On failure, whatever was made is removed (logs stay in the node directories) and TwinError is raised.
        """
        existing = [ns for ns in _list_netns() if ns.startswith(self.prefix)]
        if existing:
            raise TwinError(
                f"namespaces of twin {self.plan.name!r} already exist ({', '.join(existing[:5])}...): call down() or "
                f"cleanup_leftovers({self.prefix!r}) first"
            )
        for tool in ("ip", "vtysh", "sysctl", "ping"):
            if shutil.which(tool) is None:
                raise TwinError(f"{tool} is not installed")
        for daemon in DAEMONS:
            if not (FRR_BIN / daemon).exists():
                raise TwinError(f"{FRR_BIN / daemon} is missing (apt-get install frr)")
        t0 = time.monotonic()
        phases: dict[str, float] = {}
        warnings: list[str] = []
        try:
            t = time.monotonic()
            warnings += self._prepare_dirs(validate)
            self._save_state("creating")
            phases["prepare"] = time.monotonic() - t

            t = time.monotonic()
            self._neigh_raised = _raise_neigh_thresholds(_neigh_needed(self.plan))
            self._save_state("creating")
            self._make_namespaces()
            phases["namespaces"] = time.monotonic() - t

            t = time.monotonic()
            self._configure_interfaces()
            phases["interfaces"] = time.monotonic() - t

            phases.update(self._start_daemons(self.switches))
            warnings += self._config_warnings(self.switches)
            self._save_state("up")
        except BaseException as exc:
            note = f"(cleaned up; logs kept in {self.state_dir})"
            try:
                self._teardown(keep_logs=True)
            except (OSError, subprocess.SubprocessError, TwinError) as cleanup_exc:
                note = f"(cleanup also failed: {cleanup_exc}; try cleanup_leftovers({self.prefix!r}))"
            if isinstance(exc, Exception):
                raise TwinError(f"twin {self.plan.name!r} failed to come up {note}: {exc}") from exc
            raise
        return UpReport(
            seconds=time.monotonic() - t0,
            phases=phases,
            namespaces=dict(self._ns),
            pids={n: dict(d) for n, d in self._pids.items()},
            neigh_thresholds_raised=self._neigh_raised,
            warnings=tuple(warnings),
        )

    def _prepare_dirs(self, validate: bool) -> list[str]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        blocked = _frr_cannot_reach(self.state_dir)
        if blocked is not None:
            raise TwinError(
                f"user frr cannot reach {self.state_dir}: {blocked} is not searchable for it (mode "
                f"{stat.filemode(blocked.stat().st_mode)}); the daemons run as frr, use a state_dir below "
                "directories that others may traverse (pytest's tmp_path is not)"
            )
        warnings: list[str] = []
        confs: dict[str, str] = {}
        for node in self.plan.nodes:
            d = self.node_dir(node.name)
            if d.exists():
                shutil.rmtree(d)
            d.mkdir(mode=0o755)
            if node.frr_conf is not None:
                (d / "frr.conf").write_text(node.frr_conf)
                parts, warns = split_frr_conf(node.frr_conf)
                warnings += [f"{node.name}: {w}" for w in warns]
                if "no zebra nexthop kernel enable" not in node.frr_conf:
                    warnings.append(f"{node.name}: frr_conf lacks 'no zebra nexthop kernel enable' (see module doc)")
                for daemon, text in parts.items():
                    (d / f"{daemon}.conf").write_text(text)
                confs[node.name] = node.frr_conf
            _chown_frr(d)
        if validate:
            self._check_configs(confs)
        return warnings

    def _check_configs(self, confs: dict[str, str]) -> None:
        """`vtysh -C` on the integrated configs, many per call (35 ms of CPU per vtysh start), "end" between them."""
        names = list(confs)
        chunks = [names[i : i + 64] for i in range(0, len(names), 64)]
        files: list[Path] = []
        spans: list[list[tuple[int, int, str]]] = []  # per chunk: (first line, last line, node)
        for k, chunk in enumerate(chunks):
            text, span, line = [], [], 1
            for name in chunk:
                lines = confs[name].splitlines() + ["end"]
                span.append((line, line + len(lines) - 1, name))
                text += lines
                line += len(lines)
            path = self.state_dir / f"check-{k}.conf"
            path.write_text("\n".join(text) + "\n")
            files.append(path)
            spans.append(span)
        try:
            results = _run_all([["vtysh", "-C", "-f", str(f)] for f in files])
        finally:
            for f in files:
                f.unlink(missing_ok=True)
        bad: list[str] = []
        for span, res in zip(spans, results, strict=True):
            if res.returncode == 0:
                continue
            out = (res.stdout + res.stderr).strip()
            found = False
            for m in re.finditer(r"^line (\d+): (.*)$", out, re.MULTILINE):
                n = int(m.group(1))
                for first, last, name in span:
                    if first <= n <= last:
                        bad.append(f"{name} line {n - first + 1}: {m.group(2).strip()}")
                        found = True
            if not found:
                bad.append(f"{', '.join(name for _, _, name in span)}: {out}")
        if bad:
            raise TwinError("frr.conf rejected by `vtysh -C`:\n  " + "\n  ".join(bad))

    def _make_namespaces(self) -> None:
        lines = [f"netns add {self._ns[n.name]}" for n in self.plan.nodes]
        for node in self.plan.nodes:
            sysctls = [
                "net.ipv6.conf.all.keep_addr_on_down=1",  # else a link flap loses the IPv6 addresses for good
                "net.ipv6.conf.default.keep_addr_on_down=1",
                "net.ipv6.conf.all.accept_dad=0",  # no tentative addresses: sessions can start at once
                "net.ipv6.conf.default.accept_dad=0",
                "net.ipv4.conf.all.ignore_routes_with_linkdown=1",
                "net.ipv4.conf.default.ignore_routes_with_linkdown=1",
                "net.ipv6.conf.all.ignore_routes_with_linkdown=1",
                "net.ipv6.conf.default.ignore_routes_with_linkdown=1",
            ]
            if node.kind == "switch":
                sysctls += ["net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"]
            lines.append(f"netns exec {self._ns[node.name]} sysctl -qw {' '.join(sysctls)}")
        for link in self.plan.links:
            lines.append(
                f"link add name {linux_ifname(link.a_if)} mtu {link.mtu} netns {self._ns[link.a_node]} type veth "
                f"peer name {linux_ifname(link.b_if)} mtu {link.mtu} netns {self._ns[link.b_node]}"
            )
        batch = "\n".join(lines) + "\n"
        (self.state_dir / "root.batch").write_text(batch)
        res = subprocess.run(
            ["ip", "-batch", "-"], input=batch, check=False, capture_output=True, text=True, timeout=600
        )
        if res.returncode != 0:
            raise TwinError(f"ip -batch (namespaces, veths) failed: {res.stderr.strip()[-2000:]}")

    def _configure_interfaces(self) -> None:
        linked = set(self._ends)
        node_batches: list[tuple[str, str]] = []
        route_batches: list[tuple[str, str]] = []
        v6_batches: list[tuple[str, str]] = []  # `ip rule` takes IPv6 only in an `ip -6` batch
        for node in self.plan.nodes:
            lines = ["link set dev lo up"]
            for itf in node.interfaces:
                dev = linux_ifname(itf.name)
                if itf.name != "lo" and (node.name, itf.name) not in linked:
                    lines.append(f"link add name {dev} mtu {itf.mtu} type dummy")
                lines.append(f"link set dev {dev} mtu {itf.mtu}")
                for addr in itf.addresses:
                    v6 = ipaddress.ip_interface(addr).version == 6
                    lines.append(f"addr add {addr} dev {dev}" + (" nodad" if v6 else ""))
                lines.append(f"link set dev {dev} up")
            node_batches.append((node.name, "\n".join(lines) + "\n"))
            if node.routes or node.source_routes:
                route_batches.append((node.name, self._route_lines(node)))
            if any(":" in src for src, _, _ in node.source_routes):
                v6_batches.append((node.name, self._source_rules(node, 6)))
        for stage, family in ((node_batches, []), (route_batches, []), (v6_batches, ["-6"])):
            for name, batch in stage:
                with (self.node_dir(name) / "ip.batch").open("a") as fh:
                    fh.write(batch)
            results = _run_all(
                [["ip", "-n", self._ns[name], *family, "-batch", "-"] for name, _ in stage], [b for _, b in stage]
            )
            bad = [
                f"{name}: {res.stderr.strip()}" for (name, _), res in zip(stage, results, strict=True) if res.returncode
            ]
            if bad:
                raise TwinError("ip -batch (interfaces, routes) failed:\n  " + "\n  ".join(bad[:20]))

    @staticmethod
    def _route_lines(node: TwinNode) -> str:
        groups: dict[str, list[tuple[str, str]]] = {}
        for prefix, via, dev in node.routes:
            if prefix == "default":
                prefix = "::/0" if ipaddress.ip_address(via).version == 6 else "0.0.0.0/0"
            groups.setdefault(prefix, []).append((via, linux_ifname(dev)))
        lines = []
        for prefix, hops in groups.items():
            if len(hops) == 1:
                lines.append(f"route replace {prefix} via {hops[0][0]} dev {hops[0][1]}")
            else:
                lines.append(f"route replace {prefix} " + " ".join(f"nexthop via {v} dev {d}" for v, d in hops))
        for n, (_, via, dev) in enumerate(node.source_routes):
            default = "::/0" if ":" in via else "0.0.0.0/0"
            lines.append(f"route replace {default} via {via} dev {linux_ifname(dev)} table {SOURCE_TABLE + n}")
        return "\n".join(lines) + "\n" + Twin._source_rules(node, 4)

    @staticmethod
    def _source_rules(node: TwinNode, family: int) -> str:
        """`ip rule`s sending traffic from each source address to its own table (one table per NIC)."""
        return "".join(f"rule add from {src} table {SOURCE_TABLE + n}\n" for n, (src, _, _) in
                       enumerate(node.source_routes) if (":" in src) == (family == 6))

    # ---------------------------------------------------------------- daemons

    def _spawn(self, node: str, daemon: str) -> int:
        d = self.node_dir(node)
        for stale in (f"{daemon}.pid", f"{daemon}.vty") + (("zserv.api",) if daemon == "zebra" else ()):
            (d / stale).unlink(missing_ok=True)
        cmd = [
            "ip", "netns", "exec", self._ns[node], str(FRR_BIN / daemon),
            "-f", str(d / f"{daemon}.conf"),
            "-i", str(d / f"{daemon}.pid"),
            "-z", str(d / "zserv.api"),
            "--vty_socket", str(d),
            "-P", "0",
            "-u", "frr", "-g", "frr",
            "--log", f"file:{d / f'{daemon}.log'}",
        ]  # fmt: skip
        with (d / f"{daemon}.out").open("ab") as out:
            proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=d, start_new_session=True
            )
        # `ip netns exec` execs the daemon: this PID is the daemon's
        self._procs[proc.pid] = proc
        self._pids.setdefault(node, {})[daemon] = proc.pid
        return proc.pid

    def _wait_files(self, nodes: list[str], daemon: str, filename: str, timeout: float) -> None:
        pending = list(nodes)
        deadline = time.monotonic() + timeout
        while pending:
            for node in pending:
                pid = self._pids[node][daemon]
                if not _alive(pid, self._procs.get(pid)):
                    raise TwinError(self._daemon_failure(node, daemon, "exited during start-up"))
            pending = [n for n in pending if not (self.node_dir(n) / filename).exists()]
            if pending and time.monotonic() > deadline:
                raise TwinError(self._daemon_failure(pending[0], daemon, f"no {filename} after {timeout:.0f} s"))
            if pending:
                time.sleep(0.01)

    def _daemon_failure(self, node: str, daemon: str, what: str) -> str:
        d = self.node_dir(node)
        return (
            f"{daemon} of {node} ({self._ns[node]}) {what}; log {d / f'{daemon}.log'}:\n"
            f"{_tail(d / f'{daemon}.log')}\n{_tail(d / f'{daemon}.out', 5)}"
        )

    def _start_daemons(self, nodes: list[str]) -> dict[str, float]:
        """zebra everywhere, wait for the zserv sockets, then bgpd, wait until each bgpd answers."""
        phases: dict[str, float] = {}
        if not nodes:
            return {"zebra": 0.0, "bgpd": 0.0}
        timeout = 20.0 + 0.1 * len(nodes)
        t = time.monotonic()
        for node in nodes:
            self._spawn(node, "zebra")
        self._save_state("starting")
        self._wait_files(nodes, "zebra", "zserv.api", timeout)
        phases["zebra"] = time.monotonic() - t
        t = time.monotonic()
        for node in nodes:
            self._spawn(node, "bgpd")
        self._save_state("starting")
        self._wait_files(nodes, "bgpd", "bgpd.vty", timeout)
        # an answer on the vty means the start-up config has been read (it is read before any vty input)
        pending = list(nodes)
        deadline = time.monotonic() + timeout
        while pending:
            pending = [n for n in pending if self._vty_json(n, "bgpd", "show bgp summary json") is None]
            for node in pending:
                pid = self._pids[node]["bgpd"]
                if not _alive(pid, self._procs.get(pid)):
                    raise TwinError(self._daemon_failure(node, "bgpd", "exited during start-up"))
            if pending and time.monotonic() > deadline:
                raise TwinError(self._daemon_failure(pending[0], "bgpd", "does not answer on its vty socket"))
            if pending:
                time.sleep(0.02)
        phases["bgpd"] = time.monotonic() - t
        return phases

    def _config_warnings(self, nodes: list[str]) -> list[str]:
        found = []
        for node in nodes:
            for daemon in DAEMONS:
                log = self.node_dir(node) / f"{daemon}.log"
                if log.exists():
                    for line in log.read_text(errors="replace").splitlines():
                        if "on config line" in line:
                            found.append(f"{node} {daemon}: {line.split('] ', 1)[-1]}")
        return found

    def _daemon_pids(self, node: str) -> list[int]:
        """Recorded PIDs of a node's daemons that are still its daemons (guards against PID reuse)."""
        d = str(self.node_dir(node))
        pids = []
        for pid in self._pids.get(node, {}).values():
            ours = pid in self._procs or any(d in arg for arg in _cmdline(pid))
            if ours and _alive(pid, self._procs.get(pid)):
                pids.append(pid)
        return pids

    def daemon_rss(self) -> dict[str, int]:
        """Resident memory (bytes) of each switch's zebra+bgpd."""
        rss: dict[str, int] = {}
        for node in self.switches:
            total = 0
            for pid in self._daemon_pids(node):
                try:
                    status = Path(f"/proc/{pid}/status").read_text()
                except FileNotFoundError:
                    continue
                m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
                total += int(m.group(1)) * 1024 if m else 0
            rss[node] = total
        return rss

    # ---------------------------------------------------------------- queries

    def vtysh(self, node: str, cmd: str) -> str:
        """Run vtysh command(s) (one per line) against a switch; TwinError on failure."""
        self._switch(node)
        args = ["vtysh", "--vty_socket", str(self.node_dir(node))]
        for line in cmd.splitlines():
            if line.strip():
                args += ["-c", line.strip()]
        res = subprocess.run(args, check=False, capture_output=True, text=True, timeout=30)
        if res.returncode != 0:
            raise TwinError(
                f"vtysh on {node} ({cmd!r}) failed (rc {res.returncode}): {(res.stdout + res.stderr).strip()}"
            )
        return res.stdout

    def _vty_json(self, node: str, daemon: str, cmd: str, timeout: float = 2.0) -> dict[str, Any] | None:
        """JSON answer of one daemon, None if it does not answer (not running, stopped, refused)."""
        try:
            status, out = vty_command(self.node_dir(node) / f"{daemon}.vty", cmd, timeout)
        except OSError:
            return None
        if status != 0:
            return None
        try:
            return json.loads(out) if out.strip() else {}
        except json.JSONDecodeError:
            return None

    def _json(self, node: str, daemon: str, cmd: str) -> dict[str, Any]:
        self._switch(node)
        try:
            status, out = vty_command(self.node_dir(node) / f"{daemon}.vty", cmd, timeout=10)
        except OSError as exc:
            raise TwinError(f"{daemon} of {node} does not answer: {exc}") from exc
        try:  # "show ip route X json" answers "{}" with a failure status when there is no such route
            return json.loads(out) if out.strip() else {}
        except json.JSONDecodeError as exc:
            raise TwinError(f"{daemon} of {node}: {cmd!r} failed (status {status}): {out.strip()[:300]}") from exc

    def bgp_summary(self, node: str) -> dict[str, Any]:
        """``show bgp summary json`` of a switch's bgpd."""
        return self._json(node, "bgpd", "show bgp summary json")

    def routes(self, node: str, prefix: str) -> dict[str, Any]:
        """FRR's RIB entry for `prefix` (``show ip[v6] route PREFIX json``)."""
        family = "ipv6" if ipaddress.ip_network(prefix, strict=False).version == 6 else "ip"
        return self._json(node, "zebra", f"show {family} route {prefix} json")

    def kernel_routes(self, node: str, prefix: str) -> list[dict[str, Any]]:
        family = "-6" if ipaddress.ip_network(prefix, strict=False).version == 6 else "-4"
        out = _run(["ip", "-n", self.netns(node), family, "-j", "route", "show", prefix])
        return json.loads(out) if out.strip() else []

    def kernel_nexthops(self, node: str, prefix: str) -> int:
        """Number of next hops the kernel of `node` has for exactly `prefix` (0: no route)."""
        count = 0
        for route in self.kernel_routes(node, prefix):
            if route.get("type", "unicast") != "unicast":
                continue
            if route.get("nexthops"):
                count += len(route["nexthops"])
            elif "nhid" in route and "gateway" not in route:
                out = _run(["ip", "-n", self.netns(node), "-j", "nexthop", "show", "id", str(route["nhid"])])
                nh = json.loads(out)[0] if out.strip() else {}
                count += len(nh.get("group", [])) or 1
            elif route.get("gateway") or route.get("dev"):
                count += 1
        return count

    @staticmethod
    def established_peers(summary: dict[str, Any]) -> set[str]:
        """Unique peers in state Established over ipv4Unicast and ipv6Unicast."""
        peers: set[str] = set()
        for af in ("ipv4Unicast", "ipv6Unicast"):
            for peer, info in (summary.get(af) or {}).get("peers", {}).items():
                if info.get("state") == "Established":
                    peers.add(peer)
        return peers

    def wait_converged(self, expected_sessions: dict[str, int], timeout: float) -> float:
        """Poll until every named switch has exactly the expected number of Established peers; seconds taken."""
        for node in expected_sessions:
            self._switch(node)
        t0 = time.monotonic()
        pending = dict(expected_sessions)
        seen: dict[str, int] = {}
        while True:
            names = list(pending)
            for name in names:
                summary = self._vty_json(name, "bgpd", "show bgp summary json")
                seen[name] = -1 if summary is None else len(self.established_peers(summary))
                if seen[name] == pending[name]:
                    del pending[name]
            if not pending:
                if len(names) == len(expected_sessions):
                    return time.monotonic() - t0
                pending = dict(expected_sessions)  # confirm all in one round: none may have dropped meanwhile
                continue
            if time.monotonic() - t0 > timeout:
                missing = ", ".join(f"{n}: {seen.get(n)}/{want}" for n, want in sorted(pending.items()))
                raise TwinError(f"not converged after {timeout} s (Established/expected; -1: no answer): {missing}")
            time.sleep(0.02)

    def ping(self, node: str, src: str, dst: str, count: int = 1, timeout: float = 1.0) -> bool:
        """Ping `dst` from inside `node` with source address (or plan interface) `src`; True if all replies came."""
        self._node(node)
        if src and not _is_address(src):
            src = linux_ifname(src)
        cmd = ["ip", "netns", "exec", self.netns(node), "ping", "-n", "-q", "-c", str(count), "-W", f"{timeout:g}"]
        if count > 1:
            cmd += ["-i", "0.05"]
        if src:
            cmd += ["-I", src]
        cmd.append(dst)
        res = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=count * 0.05 + timeout + 10)
        m = re.search(r"(\d+) (?:packets )?received", res.stdout)
        return res.returncode == 0 and m is not None and int(m.group(1)) == count

    # ---------------------------------------------------------------- failure injection

    def _link_ends(self, node: str, interface: str) -> list[tuple[str, str]]:
        self._node(node)
        link = self._ends.get((node, interface))
        if link is None:
            if interface not in {i.name for i in self._nodes[node].interfaces}:
                raise TwinError(f"{node} has no interface {interface!r}")
            return [(node, interface)]
        return [(link.a_node, link.a_if), (link.b_node, link.b_if)]

    def set_link(self, a_node: str, a_if: str, up: bool) -> None:
        """Set a link (both ends) administratively up or down."""
        self._set_ends(self._link_ends(a_node, a_if), up)

    def _set_ends(self, ends: Iterable[tuple[str, str]], up: bool) -> None:
        """ip link set up/down on many interfaces: one `ip -batch` per namespace, all namespaces at once."""
        state = "up" if up else "down"
        per_ns: dict[str, list[str]] = {}
        for node, itf in ends:
            per_ns.setdefault(self._ns[node], []).append(f"link set dev {linux_ifname(itf)} {state}\n")
        names = sorted(per_ns)
        results = _run_all([["ip", "-n", ns, "-batch", "-"] for ns in names], ["".join(per_ns[ns]) for ns in names])
        bad = [f"{ns}: {r.stderr.strip()}" for ns, r in zip(names, results, strict=True) if r.returncode]
        if bad:
            raise TwinError(f"link {state} failed: {'; '.join(bad)}")

    def _node_links(self, node: str) -> list[tuple[str, str]]:
        return sorted(
            {(n, i) for (n, i), link in self._ends.items() if node in (link.a_node, link.b_node) and n == node}
        )

    def stop_node(self, node: str, how: str | None = None) -> None:
        """Fail a node.  how: "kill" (TERM its daemons: peers see the sessions close at once; default for a switch),
        "freeze" (SIGSTOP: peers notice only when the hold timer expires) or "links" (all its links down; default
        for a host)."""
        n = self._node(node)
        how = how or ("kill" if n.kind == "switch" else "links")
        if how not in _STOP_MODES:
            raise TwinError(f"stop_node: how must be one of {_STOP_MODES}")
        if how != "links":
            self._switch(node)
        if node in self._stopped:
            raise TwinError(f"{node} is already stopped ({self._stopped[node]})")
        if how == "kill":
            pids = self._daemon_pids(node)
            bgpd = self._pids.get(node, {}).get("bgpd")
            if bgpd in pids:  # bgpd first: it says goodbye to its peers, then zebra takes its routes out
                _terminate([bgpd], self._procs)
            _terminate([p for p in pids if p != bgpd], self._procs)
            self._pids.pop(node, None)
        elif how == "freeze":
            for pid in self._daemon_pids(node):
                _signal(pid, signal.SIGSTOP)
        else:
            self._set_ends([e for n_, i in self._node_links(node) for e in self._link_ends(n_, i)], False)
        self._stopped[node] = how
        self._save_state("up")

    def start_node(self, node: str) -> None:
        """Undo stop_node (restart the daemons, continue them, or bring the node's links back up)."""
        self._node(node)
        how = self._stopped.pop(node, None)
        if how == "freeze":
            for pid in self._daemon_pids(node):
                _signal(pid, signal.SIGCONT)
        elif how == "links":
            ends = []
            for n_, i in self._node_links(node):
                link = self._ends[(n_, i)]
                other = link.b_node if link.a_node == node else link.a_node
                if self._stopped.get(other) != "links":  # a neighbour that is still "stopped" keeps the link down
                    ends += self._link_ends(n_, i)
            self._set_ends(ends, True)
        elif self._nodes[node].kind == "switch" and not self._daemon_pids(node):
            self._start_daemons([node])
        self._save_state("up")

    # ---------------------------------------------------------------- down

    def down(self, keep_logs: bool = False) -> None:
        """Stop the daemons (TERM, then KILL), delete the namespaces, restore global sysctls, remove the state."""
        self._teardown(keep_logs=keep_logs)

    def _teardown(self, keep_logs: bool) -> None:
        pids: list[int] = []
        for node in list(self._pids):
            pids += self._daemon_pids(node)
        ours = [ns for ns in _list_netns() if ns in set(self._ns.values())]
        for ns in ours:  # anything else still running in our namespaces (a stray ping ...)
            out = subprocess.run(["ip", "netns", "pids", ns], check=False, capture_output=True, text=True).stdout
            pids += [int(p) for p in out.split()]
        _terminate(pids, self._procs)
        self._procs.clear()
        self._pids.clear()
        self._stopped.clear()
        if ours:
            batch = "".join(f"netns del {ns}\n" for ns in ours)
            res = subprocess.run(
                ["ip", "-force", "-batch", "-"], input=batch, check=False, capture_output=True, text=True
            )
            left = [ns for ns in _list_netns() if ns in set(ours)]
            if left:
                raise TwinError(f"could not delete namespaces {left}: {res.stderr.strip()}")
        _restore_neigh_thresholds_if_idle()
        self._neigh_raised = False
        if keep_logs:
            self.state_file.unlink(missing_ok=True)
            return
        for node in self._nodes:
            shutil.rmtree(self.node_dir(node), ignore_errors=True)
        for name in ("state.json", "state.tmp", "root.batch"):
            (self.state_dir / name).unlink(missing_ok=True)
        try:
            self.state_dir.rmdir()
        except OSError:
            pass


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _frr_processes(prefix: str) -> dict[int, str]:
    """FRR daemons (not zombies) whose --vty_socket directory is named like a twin namespace starting with prefix."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        args = _cmdline(pid)
        if not args or not args[0].startswith(str(FRR_BIN) + "/"):
            continue
        for flag, value in itertools.pairwise(args):
            if flag == "--vty_socket" and Path(value).name.startswith(prefix) and _alive(pid):
                found[pid] = Path(args[0]).name
    return found


def twin_processes(prefix: str = NETNS_PREFIX) -> dict[int, str]:
    """Live FRR daemons that belong to twins whose namespaces start with `prefix` (pid -> daemon name)."""
    return _frr_processes(prefix)


def cleanup_leftovers(prefix: str = NETNS_PREFIX) -> list[str]:
    """Remove every namespace starting with `prefix` and every FRR daemon of such a twin; no state needed.

    `prefix` must start with "tt-" (all twins: "tt-", one twin: "tt-<plan>-").  Returns what was removed, as
    "netns <name>" and "pid <pid> <daemon>" strings.  Restores the neighbour-table thresholds once no twin is left.
    """
    if not prefix.startswith(NETNS_PREFIX):
        raise ValueError(f"prefix must start with {NETNS_PREFIX!r}, got {prefix!r}")
    removed: list[str] = []
    namespaces = [ns for ns in _list_netns() if ns.startswith(prefix)]
    victims = _frr_processes(prefix)
    for ns in namespaces:
        out = subprocess.run(["ip", "netns", "pids", ns], check=False, capture_output=True, text=True).stdout
        for p in out.split():
            if _alive(int(p)):
                victims.setdefault(int(p), Path((_cmdline(int(p)) or ["?"])[0]).name)
    _terminate(victims, {})
    removed += [f"pid {pid} {name}" for pid, name in sorted(victims.items())]
    if namespaces:
        batch = "".join(f"netns del {ns}\n" for ns in namespaces)
        subprocess.run(["ip", "-force", "-batch", "-"], input=batch, check=False, capture_output=True, text=True)
        removed += [f"netns {ns}" for ns in namespaces if ns not in set(_list_netns())]
    _restore_neigh_thresholds_if_idle()
    return removed
