"""Running Debian's Slurm and munge for the tests, and reading what they say.

- The daemons are this machine's packages (scripts/setup): `stop` ends one, `wait_until` polls for a state.
- `Scontrol` is how a test asks Slurm anything: a function running a client command (`scontrol`, `sinfo`) where the
  cluster's controller is reachable (this machine with SLURM_CONF, or inside a host of the twin) and returning its
  output; `topology`, `partitions` and `node_states` parse what it prints.
- `install` stands in for the packages on a host's root directory (tests/hosts/harness.make_root): the daemons and
  clients hard-linked with their libraries and plugins, and the folders and device nodes the packages' scripts (and,
  for the GPUs, the driver) would make.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from tests.hosts import harness as h

Scontrol = Callable[..., str]
BINARIES = ["/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/slurmstepd", "/usr/bin/sinfo",
            "/usr/bin/scontrol", "/usr/bin/srun", "/usr/bin/squeue", "/usr/bin/hostname"]
PLUGINS = Path("/usr/lib/x86_64-linux-gnu/slurm-wlm")
NVIDIA_MAJOR = 195      # the NVIDIA driver's character devices: /dev/nvidia<N> is (195, N)


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """End a daemon this test started (SIGTERM, then SIGKILL after 10 s)."""
    if proc is not None and proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


def wait_until(what: str, check: Callable[[], bool], timeout: float, step: float = 0.2) -> float:
    """Seconds until `check()` holds; AssertionError naming `what` after `timeout` seconds."""
    t0 = time.monotonic()
    while not check():
        if time.monotonic() - t0 > timeout:
            raise AssertionError(f"not within {timeout} s: {what}")
        time.sleep(step)
    return time.monotonic() - t0


def expand(scontrol: Scontrol, expr: str) -> list[str]:
    return scontrol("scontrol", "show", "hostnames", expr).split()


def topology(scontrol: Scontrol) -> tuple[list[tuple[str, int]], list[str], dict[str, list[str]]]:
    """`scontrol show topology`: (switches with their levels, the leaf switches' nodes, each switch's children)."""
    switches: list[tuple[str, int]] = []
    nodes: list[str] = []
    children: dict[str, list[str]] = {}
    for line in scontrol("scontrol", "show", "topology").splitlines():
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if "SwitchName" not in fields:
            continue
        switches.append((fields["SwitchName"], int(fields["Level"])))
        if fields.get("Nodes", "(null)") != "(null)" and fields["Level"] == "0":
            nodes += expand(scontrol, fields["Nodes"])
        if fields.get("Switches", "(null)") != "(null)":
            children[fields["SwitchName"]] = expand(scontrol, fields["Switches"])
    return switches, nodes, children


def partitions(scontrol: Scontrol) -> dict[str, tuple[list[str], bool]]:
    """`scontrol show partition`: {partition: (its nodes, whether it is the default)}."""
    parts = {}
    for line in scontrol("scontrol", "show", "partition", "--oneliner").splitlines():
        fields = dict(re.findall(r"(\w+)=(\S+)", line))
        if "PartitionName" in fields:
            parts[fields["PartitionName"]] = (expand(scontrol, fields["Nodes"]), fields["Default"] == "YES")
    return parts


def node_states(scontrol: Scontrol) -> dict[str, str]:
    """{node: its state as `sinfo` spells it}: `idle`, `down*` (`*`: not responding), `alloc` ..."""
    out = scontrol("sinfo", "-h", "-N", "-o", "%N %T")
    return dict(sorted(line.split() for line in out.splitlines() if line.strip()))  # type: ignore[misc]


def munged_argv(key: Path, socket: Path, state: Path) -> list[str]:
    """munged in the foreground with its key and socket, its pid, log and seed files in `state` (the caller runs it
    as user munge: `runuser -u munge --`, or `chroot --userspec=munge:munge <root>`)."""
    return ["munged", "--foreground", "--key-file", str(key), "--socket", str(socket),
            "--pid-file", str(state / "munged.pid"), "--log-file", str(state / "munged.log"),
            "--seed-file", str(state / "munged.seed")]


def install(root: Path, gpus: int = 0) -> None:
    """What the packages (munge, slurmctld, slurmd, slurm-client) and the GPU driver leave on a host, on `root`:
    the programs with their libraries and Slurm's plugins (hard links), the folders the packages' scripts create
    with their owners (/var/lib/munge, /var/log/munge, /run/munge; /var/lib/slurm/*, /var/log/slurm), and `gpus`
    NVIDIA device nodes (/dev/nvidia<N>, never opened: they let slurmd read the build's gres.conf unchanged)."""
    h.link_programs(root, BINARIES, trees=[PLUGINS])
    for path, owner, mode in (("var/lib/munge", "munge", 0o700), ("var/log/munge", "munge", 0o700),
                              ("run/munge", "munge", 0o755), ("var/lib/slurm/slurmctld", "slurm", 0o755),
                              ("var/lib/slurm/slurmd", "root", 0o755), ("var/log/slurm", "slurm", 0o755)):
        d = root / path
        d.mkdir(parents=True, exist_ok=True)
        d.chmod(mode)
        shutil.chown(d, owner, owner)
    for n in range(gpus):
        node = root / "dev" / f"nvidia{n}"
        if not node.exists():
            os.mknod(node, 0o20666, os.makedev(NVIDIA_MAJOR, n))
