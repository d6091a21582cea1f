"""A switch's integrated frr.conf in a fabric twin: split per daemon, checked offline, complaints read back from logs.

What a switch's ``frr_conf`` must contain (nothing rewrites it; these settings come from the measured reference notes
"FRR fabric twin in network namespaces"; `write_node_configs` warns only about the first one):
  - ``no zebra nexthop kernel enable`` (with FRR 8.4 kernel nexthop groups a link flap leaves the kernel with one
    path while FRR reports two),
  - in ``router bgp``: a route map in and out on every session (teton's spelling: ``bgp ebgp-requires-policy`` with
    IMPORT_ and EXPORT_ route maps; without one on a session, ``no bgp ebgp-requires-policy``),
    ``bgp bestpath as-path multipath-relax``, ``maximum-paths N``
    under the address families, and for fast convergence ``timers bgp 1 3``, ``coalesce-time 10``,
    ``neighbor X timers connect 1``, ``neighbor X advertisement-interval 0`` and ``neighbor X passive`` on the upper
    tier,
  - interface names as the kernel sees them: ``teton.twin.plan.linux_ifname(name)``.

The twin runs zebra and bgpd only, each with its own part of the file (`teton.frr.conf.split_frr_conf`).
`check_configs` runs ``vtysh -C`` on many integrated files at once (it knows the syntax, not every range or dependency:
it accepts ``timers bgp 1 1``, which bgpd refuses).  What a daemon refuses at start-up is read back from its log and
its stdout (`teton.twin.processes.spawn_daemon` appends it to ``<daemon>.out``) by `refused_config`, from the byte
offsets `log_marks` took before it started.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from teton.frr.conf import DAEMONS, config_complaints, daemon_remarks, split_frr_conf
from teton.twin.processes import run_all

_CHECK_BATCH = 64  # integrated configs per `vtysh -C` call


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` readable by its owner only (0600 from the start, whatever the umask; a symlink in its
    place is refused): a twin's configs hold the secrets resolved."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w") as f:
        os.fchmod(f.fileno(), 0o600)
        f.write(text)


def config_files(node_dir: Path) -> list[Path]:
    """The files `write_node_configs` writes into `node_dir` (they hold resolved secrets; the logs do not)."""
    return [node_dir / "frr.conf", *(node_dir / f"{daemon}.conf" for daemon in DAEMONS)]


def write_node_configs(node_dir: Path, frr_conf: str) -> list[str]:
    """Write ``frr.conf`` and its per-daemon parts ``<daemon>.conf`` into `node_dir`, each 0600; harmless warnings."""
    write_private(node_dir / "frr.conf", frr_conf)
    parts, warnings = split_frr_conf(frr_conf)
    if "no zebra nexthop kernel enable" not in frr_conf:
        warnings.append("frr_conf lacks 'no zebra nexthop kernel enable' (see teton.twin.frrconf)")
    for daemon, text in parts.items():
        write_private(node_dir / f"{daemon}.conf", text)
    return warnings


def check_configs(confs: dict[str, str], scratch_dir: Path) -> list[str]:
    """`vtysh -C` on integrated configs (node -> text), many per call (35 ms of CPU per vtysh start), "end" between
    them; one "<node> line N: <complaint>" per rejected line, [] if all pass.  Scratch files go to `scratch_dir`."""
    names = list(confs)
    chunks = [names[i : i + _CHECK_BATCH] for i in range(0, len(names), _CHECK_BATCH)]
    files: list[Path] = []
    spans: list[list[tuple[int, int, str]]] = []  # per chunk: (first line, last line, node)
    for k, chunk in enumerate(chunks):
        text, span, line = [], [], 1
        for name in chunk:
            lines = confs[name].splitlines() + ["end"]
            span.append((line, line + len(lines) - 1, name))
            text += lines
            line += len(lines)
        path = scratch_dir / f"check-{k}.conf"
        write_private(path, "\n".join(text) + "\n")
        files.append(path)
        spans.append(span)
    try:
        results = run_all([["vtysh", "-C", "-f", str(f)] for f in files])
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
    return bad


def log_marks(node_dir: Path, daemon: str) -> tuple[int, int]:
    """Sizes of ``<daemon>.log`` and ``<daemon>.out`` (0 if missing): where a daemon started now begins to write."""
    return _size(node_dir / f"{daemon}.log"), _size(node_dir / f"{daemon}.out")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except FileNotFoundError:
        return 0


def refused_config(node_dir: Path, marks: dict[str, tuple[int, int]]) -> list[str]:
    """What the daemons of a switch said about config lines they refused since `marks` (daemon -> `log_marks` taken
    before it started): "<daemon>: <log line>" each, then "<daemon> said: <its remarks>"; [] if none."""
    found: list[str] = []
    for daemon in DAEMONS:
        log_at, out_at = marks.get(daemon, (0, 0))
        complaints = config_complaints(node_dir / f"{daemon}.log", log_at)
        found += [f"{daemon}: {c}" for c in complaints]
        if complaints and (said := daemon_remarks(node_dir / f"{daemon}.out", out_at)):
            found.append(f"{daemon} said: {' | '.join(said)}")
    return found


def refusal_text(refused: dict[str, list[str]]) -> str:
    """Error text for `refused_config` findings of several switches (switch -> findings)."""
    lines = [f"{node} {line}" for node, found in sorted(refused.items()) for line in found]
    return (
        f"configuration refused by the daemons of {', '.join(sorted(refused))} (line numbers are of "
        "<node dir>/<daemon>.conf):\n  " + "\n  ".join(lines[:40])
    )
