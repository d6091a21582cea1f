"""Processes of a fabric twin: running commands, spawning FRR daemons in a namespace, signalling, waiting, finding them.

Nothing here knows about plans: `teton.twin.runtime` decides what to start and stop.  A daemon is spawned with
``ip netns exec``, which execs it, so the PID of the `subprocess.Popen` is the daemon's; every daemon gets the node
directory as ``--vty_socket``, which is how `frr_processes` finds the daemons of a twin without any state.  The
daemons drop to user ``frr``, hence `frr_cannot_reach` and `chown_frr`.
"""

from __future__ import annotations

import grp
import itertools
import os
import pwd
import re
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

FRR_BIN = Path("/usr/lib/frr")
_CONCURRENCY = 32


def run(cmd: Sequence[str], *, input: str | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run a command, capturing its text output; a timeout gives return code 124 (as timeout(1) does)."""
    try:
        return subprocess.run(list(cmd), input=input, check=False, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(list(cmd), 124, "", f"no answer within {timeout} s")


def run_all(
    cmds: Sequence[Sequence[str]], inputs: Sequence[str | None] | None = None, timeout: float = 60.0
) -> list[subprocess.CompletedProcess[str]]:
    """Run commands concurrently (at most 32 at a time) with `run`; results in order."""
    if not cmds:
        return []
    ins = list(inputs) if inputs is not None else [None] * len(cmds)
    with ThreadPoolExecutor(max_workers=min(_CONCURRENCY, len(cmds))) as pool:
        return list(pool.map(lambda i: run(cmds[i], input=ins[i], timeout=timeout), range(len(cmds))))


def spawn_daemon(netns: str, daemon: str, node_dir: Path) -> subprocess.Popen[bytes]:
    """Start FRR `daemon` in `netns` with everything in `node_dir`: ``<daemon>.conf``, pid, log, vty socket, zserv.

    Stale pid/vty/zserv files are removed first; stdout and stderr (where FRR writes the reason of a rejected config
    line) are appended to ``<daemon>.out``.
    """
    d = node_dir
    for stale in (f"{daemon}.pid", f"{daemon}.vty") + (("zserv.api",) if daemon == "zebra" else ()):
        (d / stale).unlink(missing_ok=True)
    cmd = [
        "ip", "netns", "exec", netns, str(FRR_BIN / daemon),
        "-f", str(d / f"{daemon}.conf"),
        "-i", str(d / f"{daemon}.pid"),
        "-z", str(d / "zserv.api"),
        "--vty_socket", str(d),
        "-P", "0",
        "-u", "frr", "-g", "frr",
        "--log", f"file:{d / f'{daemon}.log'}",
    ]  # fmt: skip
    with (d / f"{daemon}.out").open("ab") as out:
        return subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=d, start_new_session=True
        )


def missing_tools(daemons: Iterable[str]) -> list[str]:
    """What a twin needs and this machine lacks: the tools, and FRR's `daemons` in /usr/lib/frr."""
    missing = [f"{tool} is not installed" for tool in ("ip", "vtysh", "sysctl", "ping") if shutil.which(tool) is None]
    return missing + [f"{FRR_BIN / d} is missing (apt-get install frr)" for d in daemons if not (FRR_BIN / d).exists()]


def daemon_tails(node_dir: Path, daemon: str) -> str:
    """The end of a daemon's log and of its stdout, to explain why it failed."""
    log, out = node_dir / f"{daemon}.log", node_dir / f"{daemon}.out"
    return f"log {log}:\n{_tail(log)}\n{_tail(out, 5)}"


def _tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return "(no file)"


class Daemons:
    """The FRR daemons of one twin: node -> daemon -> PID (what the twin's state file records), plus the `Popen` of
    those this process started (polled, which reaps them); others are judged by /proc."""

    def __init__(self) -> None:
        self.pids: dict[str, dict[str, int]] = {}
        self.procs: dict[int, subprocess.Popen[bytes]] = {}

    def spawn(self, node: str, daemon: str, netns: str, node_dir: Path) -> int:
        proc = spawn_daemon(netns, daemon, node_dir)
        self.procs[proc.pid] = proc
        self.pids.setdefault(node, {})[daemon] = proc.pid
        return proc.pid

    def alive(self, node: str, daemon: str) -> bool:
        pid = self.pids.get(node, {}).get(daemon)
        return pid is not None and alive(pid, self.procs.get(pid))

    def live(self, node: str, node_dir: Path) -> dict[str, int]:
        """daemon -> PID of the node's recorded daemons still running as its daemons (guards against PID reuse:
        a daemon not started by this process must have `node_dir` on its command line)."""
        d = str(node_dir)
        return {
            daemon: pid
            for daemon, pid in self.pids.get(node, {}).items()
            if (pid in self.procs or any(d in arg for arg in cmdline(pid))) and alive(pid, self.procs.get(pid))
        }

    def stop(self, node: str, node_dir: Path) -> None:
        """Terminate a node's daemons and forget them: bgpd first (it says goodbye to its peers, then zebra takes
        its routes out)."""
        live = self.live(node, node_dir)
        if "bgpd" in live:
            self.terminate([live.pop("bgpd")])
        self.terminate(live.values())
        self.pids.pop(node, None)

    def terminate(self, pids: Iterable[int]) -> None:
        terminate(pids, self.procs)

    def clear(self) -> None:
        self.pids.clear()
        self.procs.clear()


def proc_state(pid: int) -> str | None:
    """Process state letter, None if there is no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return text.rsplit(")", 1)[1].split()[0]


def alive(pid: int, popen: subprocess.Popen[bytes] | None = None) -> bool:
    """Running (or stopped), not a zombie; for our own child `popen`, polling it also reaps it."""
    if popen is not None:
        return popen.poll() is None
    return proc_state(pid) not in (None, "Z", "X")


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return []
    return [a.decode(errors="replace") for a in raw.split(b"\0") if a]


def signal_pid(pid: int, sig: int) -> None:
    """Send a signal; a process that is gone already is fine."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def terminate(pids: Iterable[int], popens: dict[int, subprocess.Popen[bytes]], grace: float = 5.0) -> None:
    """TERM (and CONT, for frozen ones) every pid, KILL what is still there after `grace` s, reap our children."""
    pids = list(pids)
    todo = sorted(set(pids))
    for pid in todo:
        signal_pid(pid, signal.SIGTERM)
        signal_pid(pid, signal.SIGCONT)
    deadline = time.monotonic() + grace
    while (todo := [p for p in todo if alive(p, popens.get(p))]) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in todo:
        signal_pid(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while (todo := [p for p in todo if alive(p, popens.get(p))]) and time.monotonic() < deadline:
        time.sleep(0.02)
    for pid in pids:
        if (p := popens.get(pid)) is not None:
            try:
                p.wait(timeout=1.0)
            except subprocess.TimeoutExpired:
                pass


def rss(pid: int) -> int:
    """Resident memory of a process in bytes, 0 if it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return 0
    m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else 0


def frr_processes(prefix: str) -> dict[int, str]:
    """FRR daemons (not zombies) whose --vty_socket directory is named like a twin namespace starting with prefix."""
    found: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        pid = int(entry.name)
        args = cmdline(pid)
        if not args or not args[0].startswith(str(FRR_BIN) + "/"):
            continue
        for flag, value in itertools.pairwise(args):
            if flag == "--vty_socket" and Path(value).name.startswith(prefix) and alive(pid):
                found[pid] = Path(args[0]).name
    return found


def frr_cannot_reach(path: Path) -> Path | None:
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


def chown_frr(path: Path) -> None:
    """Give `path` and everything below it to frr:frr."""
    for p in [path, *path.rglob("*")]:
        shutil.chown(p, "frr", "frr")
