"""A simulated InfiniBand fabric for the tests and the benchmark: ibsim loaded with a rendered topology.net, and
clients (OpenSM, ibnetdiscover, smpquery) attached to it through ibsim's umad preload library.

Every client runs under `timeout` (a client waits forever when the simulator is gone); ibsim is stopped by its PID.
Each simulator has its own socket name, so runs in parallel do not meet.
"""

from __future__ import annotations

import itertools
import os
import re
import select
import signal
import subprocess
import time
from pathlib import Path

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
READY = b"Network simulator ready."
PROMPT = b"sim> "
_count = itertools.count()


class SimulatorError(RuntimeError):
    """ibsim or OpenSM did not start, or did not answer."""


class Simulator:
    """`with Simulator(topology, workdir) as sim:` ibsim running `topology`; `sim.client(...)` runs a tool on a node."""

    def __init__(self, topology: Path, workdir: Path, *, switches: int = 256, nodes: int = 2048, ports: int = 13312,
                 start_timeout: float = 120.0):
        self.topology, self.workdir = Path(topology), Path(workdir)
        self.switches, self.nodes, self.ports, self.start_timeout = switches, nodes, ports, start_timeout
        self.name = f"teton-{os.getpid()}-{next(_count)}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.output = b""
        self.errors = self.workdir / "ibsim.stderr"

    def __enter__(self) -> Simulator:
        self.workdir.mkdir(parents=True, exist_ok=True)
        with self.errors.open("wb") as err:
            self.proc = subprocess.Popen(
                ["ibsim", "-s", "-S", str(self.switches), "-N", str(self.nodes), "-P", str(self.ports),
                 str(self.topology)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, cwd=self.workdir,
                env={**os.environ, "IBSIM_SOCKNAME": self.name}, start_new_session=True)
        try:
            self._wait_for(READY, self.start_timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        p, self.proc = self.proc, None
        if p is None:
            return
        terminate(p, 5)
        for stream in (p.stdin, p.stdout):
            if stream is not None:
                stream.close()

    def _read(self, timeout: float) -> bool:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        if not select.select([fd], [], [], timeout)[0]:
            return False
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            tail = self.errors.read_bytes()[-2000:].decode(errors="replace")
            raise SimulatorError(f"ibsim exited (code {self.proc.wait()}): "
                                 f"{self.output[-1000:].decode(errors='replace')} {tail}")
        self.output += chunk
        return True

    def _wait_for(self, marker: bytes, timeout: float, after: int = 0) -> None:
        deadline = time.monotonic() + timeout
        while marker not in self.output[after:]:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SimulatorError(f"ibsim: no {marker!r} within {timeout} s")
            self._read(left)

    def console(self, command: str, timeout: float = 10.0) -> str:
        """Run an ibsim console command (`Unlink "leaf"[3]`) and return what it printed."""
        assert self.proc is not None and self.proc.stdin is not None
        start = len(self.output)
        self.proc.stdin.write(command.encode() + b"\n")
        self.proc.stdin.flush()
        self._wait_for(PROMPT, timeout, start)
        return self.output[start:].decode(errors="replace")

    def client(self, args: list[str], node: str, *, timeout: float = 60.0,
               env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """Run `args` as if on HCA `node` ("<host> <hca>") of the simulated fabric, under `timeout`."""
        run_env = {**os.environ, **(env or {}), "IBSIM_SOCKNAME": self.name, "SIM_HOST": node,
                   "LD_PRELOAD": UMAD2SIM}
        cwd = self.workdir / "clients"
        cwd.mkdir(exist_ok=True)
        return subprocess.run(["timeout", str(timeout), *args], cwd=cwd, env=run_env, capture_output=True, text=True)

    def daemon(self, args: list[str], node: str, *, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start `args` on HCA `node` in the background (a subnet manager that keeps running and answers SA
        queries); the caller stops it by its PID (`stop_daemon`)."""
        run_env = {**os.environ, **(env or {}), "IBSIM_SOCKNAME": self.name, "SIM_HOST": node,
                   "LD_PRELOAD": UMAD2SIM}
        cwd = self.workdir / "clients"
        cwd.mkdir(exist_ok=True)
        return subprocess.Popen(args, cwd=cwd, env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                start_new_session=True)


def stop_daemon(p: subprocess.Popen[bytes]) -> None:
    """Stop a process `Simulator.daemon` started, by its PID: SIGTERM, then SIGKILL after 10 s."""
    terminate(p, 10)


def terminate(p: subprocess.Popen[bytes], wait_s: float) -> None:
    """SIGTERM to `p` if it runs, then SIGKILL after `wait_s` seconds."""
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(wait_s)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def lids(dump: str) -> dict[str, int]:
    """{node description: LID} from an ibnetdiscover dump taken after the subnet manager assigned LIDs (a switch's
    LID is on its record's line, an HCA's on its port's)."""
    out: dict[str, int] = {}
    ca: str | None = None
    for line in dump.splitlines():
        m = re.match(r'^Switch\s+\d+\s+"[^"]*"\s+#\s+"([^"]+)".*\blid (\d+)', line)
        if m:
            out[m[1]], ca = int(m[2]), None
            continue
        m = re.match(r'^Ca\s+\d+\s+"[^"]*"\s+#\s+"([^"]+)"', line)
        if m:
            ca = m[1]
            continue
        m = re.match(r"^\[1\]\(\w+\)\s+\S+\s+#\s+lid (\d+)", line)
        if m and ca is not None:
            out[ca], ca = int(m[1]), None
    return out


def opensm_log_problems(log: str) -> list[str]:
    """Error lines of an OpenSM log: every line at level 0x01."""
    return [line for line in log.splitlines() if " 0x01 -> " in line]
