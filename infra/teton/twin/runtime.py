"""Runtime of a fabric twin: makes a `TwinPlan` real in network namespaces on this machine, and tears it down.

One namespace per node (``tt-<plan>-<node>``), veth pairs for links, zebra then bgpd per switch, each instance with
its own directory ``<state_dir>/<netns>/`` holding its configs, logs, vty sockets, zserv socket and pid files, all
owned by ``frr:frr``.  ``<state_dir>/state.json`` records namespaces and daemon PIDs so that another process can call
``Twin.load(state_dir).down()``; `cleanup_leftovers` needs nothing but the name prefix (it works after a crash that
lost the state directory).  `Twin` orchestrates; the work is done by
  - `teton.twin.frrconf`: writing frr.conf and its parts per daemon (split by `teton.frr.conf`; what it must
    contain), the ``vtysh -C`` check, config complaints in the daemons' logs,
  - `teton.twin.netns`: namespaces, veths, addresses, routes, link up/down (``ip -batch``), kernel route queries,
  - `teton.twin.processes`: spawning, signalling and finding the FRR daemons,
  - `teton.twin.sysctl`: the machine-wide neighbour-table thresholds,
  - `teton.frr.vty`: queries over the daemons' vty sockets (~1 ms each instead of ~35 ms of CPU for ``vtysh``).

``state_dir`` must be reachable by user ``frr`` (every parent directory searchable: pytest's ``tmp_path`` is not)
and short enough for unix socket paths (107 characters for ``<state_dir>/<netns>/zserv.api``); both are checked.

The integrated frr.conf is checked first with ``vtysh -C``; once the daemons have read their parts, any line a
daemon refused (which ``vtysh -C`` may accept, e.g. ``timers bgp 1 1``) fails `Twin.up` (and `Twin.start_node`,
`Twin.ensure_running`) naming the node, the daemon and its log line.  `UpReport.warnings` holds harmless remarks only.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from teton.findings import TetonError
from teton.frr import vty
from teton.frr.conf import DAEMONS, split_frr_conf
from teton.frr.vty import vty_command
from teton.twin import frrconf, processes, sysctl
from teton.twin import netns as ns_ops
from teton.twin.plan import (
    NETNS_PREFIX,
    TwinLink,
    TwinNode,
    TwinPlan,
    netns_name,
    plan_from_dict,
    plan_to_dict,
    validate_plan,
)

__all__ = [
    "Twin", "TwinError", "UpReport", "cleanup_leftovers", "split_frr_conf", "twin_processes", "vty_command",
]  # fmt: skip

_T = TypeVar("_T")
_SUN_PATH_MAX = 107
_STOP_MODES = ("kill", "freeze", "links")


class TwinError(RuntimeError, TetonError):
    """A twin operation failed; the message says what and where to look."""


@dataclass(frozen=True)
class UpReport:
    seconds: float  # wall time of up()
    phases: dict[str, float]  # seconds per phase: prepare, namespaces, interfaces, zebra, bgpd
    namespaces: dict[str, str]  # node -> netns
    pids: dict[str, dict[str, int]]  # switch -> {"zebra": pid, "bgpd": pid}
    neigh_thresholds_raised: bool
    warnings: tuple[str, ...] = field(default=())  # harmless: static routes without staticd, missing advice


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
        self._daemons = processes.Daemons()
        self._stopped: dict[str, str] = {}
        self._marks: dict[str, dict[str, tuple[int, int]]] = {}  # node -> daemon -> log_marks at its last spawn
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
            self._daemons.pids = {n: dict(d) for n, d in state.get("pids", {}).items()}
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

    # ---------------------------------------------------------------- names, paths, state file

    @property
    def state_file(self) -> Path:
        return self.state_dir / "state.json"

    @property
    def prefix(self) -> str:
        """Every namespace of this twin starts with this."""
        return f"{NETNS_PREFIX}{self.plan.name}-"

    def netns(self, node: str) -> str:
        return self._ns[self._node(node).name]

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

    def _read_state(self) -> dict[str, Any] | None:
        try:
            state = json.loads(self.state_file.read_text())
        except FileNotFoundError:
            return None
        if not isinstance(state, dict):
            raise TwinError(f"{self.state_file} is not a twin state (a JSON object)")
        return state

    def _save_state(self, status: str) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        state = {
            "version": 1,
            "status": status,
            "plan": plan_to_dict(self.plan),
            "namespaces": self._ns,
            "node_dirs": {n: self._ns[n] for n in self._nodes},  # relative to the state dir
            "pids": self._daemons.pids,
            "stopped": self._stopped,
            "neigh_thresholds_raised": self._neigh_raised,
        }
        tmp = self.state_file.with_suffix(".tmp")
        frrconf.write_private(tmp, json.dumps(state, indent=1))     # the plan holds the resolved configs
        tmp.replace(self.state_file)

    # ---------------------------------------------------------------- up

    def up(self, validate: bool = True) -> UpReport:
        """Create everything, start the daemons and wait until each answers on its vty socket.

        On failure (including a config line that a daemon refused), whatever was made is removed (logs stay in the
        node directories) and TwinError is raised.
        """
        existing = [ns for ns in ns_ops.list_netns() if ns.startswith(self.prefix)]
        if existing:
            raise TwinError(
                f"namespaces of twin {self.plan.name!r} already exist ({', '.join(existing[:5])}...): call down() or "
                f"cleanup_leftovers({self.prefix!r}) first"
            )
        if missing := processes.missing_tools(DAEMONS):
            raise TwinError("; ".join(missing))
        t0 = time.monotonic()
        phases: dict[str, float] = {}
        warnings: list[str] = []
        try:
            t = time.monotonic()
            warnings += self._prepare_dirs(validate)
            self._save_state("creating")
            phases["prepare"] = time.monotonic() - t

            t = time.monotonic()
            self._neigh_raised = sysctl.raise_neigh_thresholds(sysctl.neigh_needed(self.plan))
            self._save_state("creating")
            if bad := ns_ops.make_namespaces(self.plan, self._ns, self.state_dir / "root.batch"):
                raise TwinError(f"ip -batch (namespaces, veths) failed: {bad[0]}")
            phases["namespaces"] = time.monotonic() - t

            t = time.monotonic()
            if bad := ns_ops.configure_interfaces(self.plan, self._ns, self.node_dir):
                raise TwinError("ip -batch (interfaces, routes) failed:\n  " + "\n  ".join(bad[:20]))
            phases["interfaces"] = time.monotonic() - t

            phases.update(self._start_daemons(self.switches))
            if refused := self._refused(self.switches):
                raise TwinError(frrconf.refusal_text(refused))
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
            pids={n: dict(d) for n, d in self._daemons.pids.items()},
            neigh_thresholds_raised=self._neigh_raised,
            warnings=tuple(warnings),
        )

    def _prepare_dirs(self, validate: bool) -> list[str]:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        blocked = processes.frr_cannot_reach(self.state_dir)
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
            d.mkdir(mode=0o700)
            d.chmod(0o700)              # its configs hold the secrets resolved: the daemons' user (frr) only
            if node.frr_conf is not None:
                warnings += [f"{node.name}: {w}" for w in frrconf.write_node_configs(d, node.frr_conf)]
                confs[node.name] = node.frr_conf
            processes.chown_frr(d)
        if validate and (bad := frrconf.check_configs(confs, self.state_dir)):
            raise TwinError("frr.conf rejected by `vtysh -C`:\n  " + "\n  ".join(bad))
        return warnings

    # ---------------------------------------------------------------- daemons

    def _spawn(self, node: str, daemon: str) -> int:
        d = self.node_dir(node)
        self._marks.setdefault(node, {})[daemon] = frrconf.log_marks(d, daemon)
        return self._daemons.spawn(node, daemon, self._ns[node], d)

    def _wait(self, nodes: list[str], daemon: str, ready: Callable[[str], bool], what: str, timeout: float) -> None:
        """Poll until ready(node) holds for every node; TwinError if that daemon of one exits or time runs out."""
        pending = list(nodes)
        deadline = time.monotonic() + timeout
        while pending := [n for n in pending if not ready(n)]:
            for node in pending:
                if not self._daemons.alive(node, daemon):
                    raise TwinError(self._daemon_failure(node, daemon, "exited during start-up"))
            if time.monotonic() > deadline:
                raise TwinError(self._daemon_failure(pending[0], daemon, what))
            time.sleep(0.01)

    def _daemon_failure(self, node: str, daemon: str, what: str) -> str:
        return f"{daemon} of {node} ({self._ns[node]}) {what}; {processes.daemon_tails(self.node_dir(node), daemon)}"

    def _start_daemons(self, nodes: list[str]) -> dict[str, float]:
        """zebra everywhere, wait for the zserv sockets, then bgpd, wait until each bgpd and zebra answers."""
        if not nodes:
            return {"zebra": 0.0, "bgpd": 0.0}
        timeout = 20.0 + 0.1 * len(nodes)
        t0 = time.monotonic()
        for node in nodes:
            self._spawn(node, "zebra")
        self._save_state("starting")
        no_zserv = f"no zserv.api after {timeout:.0f} s"
        self._wait(nodes, "zebra", lambda n: (self.node_dir(n) / "zserv.api").exists(), no_zserv, timeout)
        t1 = time.monotonic()
        for node in nodes:
            self._spawn(node, "bgpd")
        self._save_state("starting")
        # an answer on the vty means the start-up config has been read (it is read before any vty input)
        for daemon in ("bgpd", "zebra"):
            answers = functools.partial(self._answers, daemon=daemon)
            self._wait(nodes, daemon, answers, "does not answer on its vty socket", timeout)
        return {"zebra": t1 - t0, "bgpd": time.monotonic() - t1}

    def _answers(self, node: str, daemon: str) -> bool:
        return vty.vty_answers(self.node_dir(node) / f"{daemon}.vty")

    def _refused(self, nodes: list[str]) -> dict[str, list[str]]:
        """switch -> what its daemons, since they were last spawned, said about config lines they refused."""
        found = {node: frrconf.refused_config(self.node_dir(node), self._marks.get(node, {})) for node in nodes}
        return {node: lines for node, lines in found.items() if lines}

    def _running(self, node: str) -> bool:
        """Both daemons of a switch are there (a frozen one counts)."""
        return set(self._daemons.live(node, self.node_dir(node))) == set(DAEMONS)

    def _restart(self, nodes: list[str]) -> None:
        """Stop what is left of the switches' daemons, start zebra then bgpd, check their configs again; a switch
        whose daemons refuse part of it is stopped again (as by ``stop_node(node, "kill")``) and TwinError raised."""
        for node in nodes:
            self._daemons.stop(node, self.node_dir(node))
        self._start_daemons(nodes)
        refused = self._refused(nodes)
        for node in refused:
            self._daemons.stop(node, self.node_dir(node))
            self._stopped[node] = "kill"
        self._save_state("up")
        if refused:
            raise TwinError(f"{frrconf.refusal_text(refused)}\n(stopped again: {', '.join(sorted(refused))})")

    def _daemon_pids(self, node: str) -> list[int]:
        return list(self._daemons.live(node, self.node_dir(node)).values())

    def daemon_rss(self) -> dict[str, int]:
        """Resident memory (bytes) of each switch's zebra+bgpd."""
        return {node: sum(processes.rss(pid) for pid in self._daemon_pids(node)) for node in self.switches}

    def ensure_running(self) -> list[str]:
        """Restart the daemons (zebra, then bgpd) of every switch whose zebra or bgpd is gone (killed outside teton,
        crashed), except switches stopped on purpose with `stop_node`; returns the switches restarted.

        TwinError if the twin is not up, a daemon does not start, or a restarted daemon refuses part of its config
        (that switch is then left stopped, as by ``stop_node(node, "kill")``).
        """
        missing = sorted(set(self._ns.values()) - set(ns_ops.list_netns()))
        if missing:
            raise TwinError(f"twin {self.plan.name!r} is not up: no namespace {', '.join(missing[:5])}")
        dead = [node for node in self.switches if node not in self._stopped and not self._running(node)]
        if dead:
            self._restart(dead)
        return dead

    # ---------------------------------------------------------------- queries

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
        """The kernel's routes in `node` for exactly `prefix` (``ip -j route show PREFIX``)."""
        return self._kernel(ns_ops.kernel_routes, node, prefix)

    def kernel_nexthops(self, node: str, prefix: str) -> int:
        """Number of next hops the kernel of `node` has for exactly `prefix` (0: no route)."""
        return self._kernel(ns_ops.kernel_nexthops, node, prefix)

    def _kernel(self, query: Callable[[str, str], _T], node: str, prefix: str) -> _T:
        try:
            return query(self.netns(node), prefix)
        except ns_ops.IpError as exc:
            raise TwinError(str(exc)) from exc

    established_peers = staticmethod(vty.established_peers)

    def wait_converged(self, expected_sessions: dict[str, int], timeout: float) -> float:
        """Poll until every named switch has exactly the expected number of Established peers; seconds taken."""
        sockets = {node: self.node_dir(self._switch(node).name) / "bgpd.vty" for node in expected_sessions}
        try:
            return vty.wait_established(sockets, expected_sessions, timeout)
        except TimeoutError as exc:
            raise TwinError(str(exc)) from None

    def ping(self, node: str, src: str, dst: str, count: int = 1, timeout: float = 1.0) -> bool:
        """Ping `dst` from inside `node` with source address (or plan interface) `src`; True if all replies came."""
        self._node(node)
        return ns_ops.ping(self.netns(node), src, dst, count, timeout)

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

    def set_links(self, links: Iterable[tuple[str, str]], up: bool) -> None:
        """Set links (each named by one end: node, interface) up or down together: a server's static routes come
        back once all of them are up (its ECMP default route needs every next hop's link up: one link of two
        brought up alone fails it)."""
        self._set_ends([end for node, itf in links for end in self._link_ends(node, itf)], up)

    def _set_ends(self, ends: Iterable[tuple[str, str]], up: bool) -> None:
        ends = list(ends)
        if bad := ns_ops.set_links([(self._ns[node], itf) for node, itf in ends], up):
            raise TwinError(f"link {'up' if up else 'down'} failed: {'; '.join(bad)}")
        # an interface set down loses the kernel's static routes over it: a server gets its own back (a switch's
        # come from zebra again)
        hosts = sorted({n for n, _ in ends if up and (self._nodes[n].routes or self._nodes[n].source_routes)})
        results = processes.run_all([["ip", "-n", self._ns[n], "-batch", "-"] for n in hosts],
                                    [ns_ops.route_lines(self._nodes[n], rules=False) for n in hosts])
        if bad := [f"{n}: {r.stderr.strip()}" for n, r in zip(hosts, results, strict=True) if r.returncode]:
            raise TwinError(f"routes over the links brought up failed: {'; '.join(bad)}")

    def swap(self, one: tuple[str, str], other: tuple[str, str]) -> tuple[TwinLink, TwinLink]:
        """Cross two cables: the interfaces `one` and `other` (node, interface) trade their far ends, keeping their
        addresses (swap the same two again to undo).  Returns the two new links."""
        old = []
        for node, itf in (one, other):
            link = self._ends.get((node, itf))
            if link is None:
                raise TwinError(f"{node}:{itf} is no end of a link of twin {self.plan.name!r}")
            old.append(link)
        if old[0] == old[1]:
            raise TwinError(f"{one[0]}:{one[1]} and {other[0]}:{other[1]} are the two ends of one cable")
        far = [(lk.b_node, lk.b_if) if (lk.a_node, lk.a_if) == end else (lk.a_node, lk.a_if)
               for lk, end in zip(old, (one, other), strict=True)]
        new = [TwinLink(*one, *far[1], min(old[0].mtu, old[1].mtu)),
               TwinLink(*other, *far[0], min(old[0].mtu, old[1].mtu))]
        if bad := ns_ops.recable(old, new, self._nodes, self._ns):
            raise TwinError("recabling failed:\n  " + "\n  ".join(bad[:20]))
        links = [lk for lk in self.plan.links if lk not in old] + new
        self.plan = replace(self.plan, links=tuple(links))
        for lk in old:
            for end in ((lk.a_node, lk.a_if), (lk.b_node, lk.b_if)):
                self._ends.pop(end, None)
        for lk in new:
            self._ends[(lk.a_node, lk.a_if)] = self._ends[(lk.b_node, lk.b_if)] = lk
        self._save_state("up")
        return new[0], new[1]

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
            self._daemons.stop(node, self.node_dir(node))
        elif how == "freeze":
            for pid in self._daemon_pids(node):
                processes.signal_pid(pid, signal.SIGSTOP)
        else:
            self._set_ends([e for n_, i in self._node_links(node) for e in self._link_ends(n_, i)], False)
        self._stopped[node] = how
        self._save_state("up")

    def start_node(self, node: str) -> None:
        """Undo stop_node (restart the daemons, continue them, or bring the node's links back up).

        For a switch, daemons that are gone whatever the stop mode (killed outside teton while stopped) are
        restarted, and a restarted daemon that refuses part of its config is a TwinError (see `ensure_running`).
        """
        n = self._node(node)
        how = self._stopped.pop(node, None)
        if how == "freeze":
            for pid in self._daemon_pids(node):
                processes.signal_pid(pid, signal.SIGCONT)
        elif how == "links":
            ends = []
            for n_, i in self._node_links(node):
                link = self._ends[(n_, i)]
                other = link.b_node if link.a_node == node else link.a_node
                if self._stopped.get(other) != "links":  # a neighbour that is still "stopped" keeps the link down
                    ends += self._link_ends(n_, i)
            self._set_ends(ends, True)
        if n.kind == "switch" and not self._running(node):
            self._restart([node])
        self._save_state("up")

    # ---------------------------------------------------------------- down

    def down(self, keep_logs: bool = False) -> None:
        """Stop the daemons (TERM, then KILL), delete the namespaces, restore global sysctls, remove the state."""
        self._teardown(keep_logs=keep_logs)

    def _teardown(self, keep_logs: bool) -> None:
        pids: list[int] = []
        for node in list(self._daemons.pids):
            pids += self._daemon_pids(node)
        ours = [ns for ns in ns_ops.list_netns() if ns in set(self._ns.values())]
        for ns in ours:  # anything else still running in our namespaces (a stray ping ...)
            pids += ns_ops.netns_pids(ns)
        self._daemons.terminate(pids)
        self._daemons.clear()
        self._stopped.clear()
        if ours:
            said = ns_ops.delete_namespaces(ours)
            left = [ns for ns in ns_ops.list_netns() if ns in set(ours)]
            if left:
                raise TwinError(f"could not delete namespaces {left}: {said}")
        sysctl.restore_neigh_thresholds_if_idle()
        self._neigh_raised = False
        if keep_logs:                   # the logs stay; the configs (secrets resolved) do not
            self.state_file.unlink(missing_ok=True)
            for node in self._nodes:
                for f in frrconf.config_files(self.node_dir(node)):
                    f.unlink(missing_ok=True)
            return
        for node in self._nodes:
            shutil.rmtree(self.node_dir(node), ignore_errors=True)
        for name in ("state.json", "state.tmp", "root.batch"):
            (self.state_dir / name).unlink(missing_ok=True)
        try:
            self.state_dir.rmdir()
        except OSError:
            pass


def twin_processes(prefix: str = NETNS_PREFIX) -> dict[int, str]:
    """Live FRR daemons that belong to twins whose namespaces start with `prefix` (pid -> daemon name)."""
    return processes.frr_processes(prefix)


def cleanup_leftovers(prefix: str = NETNS_PREFIX) -> list[str]:
    """Remove every namespace starting with `prefix` and every FRR daemon of such a twin; no state needed.

    `prefix` must start with "tt-" (all twins: "tt-", one twin: "tt-<plan>-").  Returns what was removed, as
    "netns <name>" and "pid <pid> <daemon>" strings.  Restores the neighbour-table thresholds once no twin is left.
    """
    if not prefix.startswith(NETNS_PREFIX):
        raise ValueError(f"prefix must start with {NETNS_PREFIX!r}, got {prefix!r}")
    removed: list[str] = []
    namespaces = [ns for ns in ns_ops.list_netns() if ns.startswith(prefix)]
    victims = processes.frr_processes(prefix)
    for ns in namespaces:
        for p in ns_ops.netns_pids(ns):
            if processes.alive(p):
                victims.setdefault(p, Path((processes.cmdline(p) or ["?"])[0]).name)
    processes.terminate(victims, {})
    removed += [f"pid {pid} {name}" for pid, name in sorted(victims.items())]
    if namespaces:
        ns_ops.delete_namespaces(namespaces)
        removed += [f"netns {ns}" for ns in namespaces if ns not in set(ns_ops.list_netns())]
    sysctl.restore_neigh_thresholds_if_idle()
    return removed
