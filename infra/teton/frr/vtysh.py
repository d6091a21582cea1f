"""The vtysh client: pushing an integrated frr.conf into a running FRR and reading its running config back, with
FRR's own tools (vtysh, frr-reload), and parsing what they print.

- `running_config`: ``vtysh --vty_socket D -c 'show running-config'`` without vtysh's "Building configuration..."
  header: what the daemons run now (zebra and bgpd merged).
- `reload`: ``frr-reload.py --vty_socket D --confdir T --rundir T --reload T/frr.conf``: FRR computes the lines to
  delete and add against the running config and applies only those (0.3 s).  Because the new file *is*
  ``<confdir>/frr.conf``, frr-reload does not `write` the result over the daemons' start-up files.
- `delta`: ``frr-reload.py --test --input RUNNING NEW``: the lines that would be deleted and added, offline.

A pushed config holds resolved secrets (BGP passwords in cleartext, as FRR stores them).  T is a private folder on
tmpfs (/dev/shm, mode 0700), removed as soon as the tool returns, so the resolved text never reaches a disk; the
tool's output (which repeats the lines it applies) is returned to the caller, never logged here: callers mask
secret values (`mask`) before showing any of it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from teton.findings import TetonError

FRR_RELOAD = Path("/usr/lib/frr/frr-reload.py")
SHM = Path("/dev/shm")
_HEADER = re.compile(r"^(Building configuration\.\.\.|Current configuration:)\s*$")


class PushError(TetonError):
    """FRR refused a push or could not be reached.  The message holds no secret value; `output` (the tool's own
    output) may, so callers mask it before showing it."""

    def __init__(self, message: str, output: str = ""):
        super().__init__(message)
        self.output = output


@dataclass(frozen=True)
class Delta:
    """What frr-reload would change: lines to delete and lines to add, in FRR's context notation."""

    delete: tuple[str, ...]
    add: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.delete or self.add)

    def lines(self) -> list[str]:
        return [f"- {x}" for x in self.delete] + [f"+ {x}" for x in self.add]


_KEY_VALUE = re.compile(r"\b(password|key|secret)( [0-9])? (?!TETON_SECRET_)(\S+)")


def mask(text: str, secrets: Iterable[tuple[str, str]]) -> str:
    """`text` with every secret value replaced by its reference token (longest values first), and any other value
    after `password`, `key` or `secret` (one the device runs that is no known secret) replaced by `<hidden>`."""
    from teton.secrets import secret_ref

    for name, value in sorted(secrets, key=lambda kv: -len(kv[1])):
        if value:
            text = text.replace(value, secret_ref(name))
    return _KEY_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2) or ''} <hidden>", text)


@contextmanager
def private_dir() -> Iterator[Path]:
    """A 0700 folder on tmpfs, removed afterwards (resolved configs must not reach a disk)."""
    base = SHM if SHM.is_dir() else None
    d = Path(tempfile.mkdtemp(prefix="teton-push-", dir=base))
    try:
        d.chmod(0o700)
        (d / "vtysh.conf").write_text("service integrated-vtysh-config\n")
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(cmd, 124, "", f"no answer within {timeout} s")


def strip_header(text: str) -> str:
    lines = text.splitlines()
    while lines and (not lines[0].strip() or _HEADER.match(lines[0])):
        lines.pop(0)
    return "\n".join(lines) + "\n"


def running_config(vty_dir: Path, timeout: float = 20.0) -> str:
    """The running config of the daemons whose vty sockets are in `vty_dir`."""
    res = _run(["vtysh", "--vty_socket", str(vty_dir), "-c", "show running-config"], timeout)
    if res.returncode != 0 or "end" not in res.stdout:
        raise PushError(f"cannot read the running config from {vty_dir}: rc {res.returncode}: "
                        f"{res.stderr.strip()[:300] or 'no end of config in its output'}", res.stdout)
    return strip_header(res.stdout)


def reload(vty_dir: Path, config: str, timeout: float = 60.0) -> str:
    """Apply `config` (a whole integrated frr.conf) to the running daemons; frr-reload's output (holds secrets).
    PushError when FRR refuses it (the config's syntax: `vtysh -m -f` inside frr-reload; a line a daemon refuses)."""
    with private_dir() as tmp:
        new = tmp / "frr.conf"
        new.write_text(config)
        new.chmod(0o600)
        res = _run(["python3", str(FRR_RELOAD), "--vty_socket", str(vty_dir), "--confdir", str(tmp),
                    "--rundir", str(tmp), "--bindir", "/usr/bin", "--stdout", "--reload", str(new)], timeout)
    if res.returncode != 0:
        raise PushError(f"frr-reload failed (rc {res.returncode})", res.stdout + res.stderr)
    return res.stdout + res.stderr


_DATACENTER_DEFAULTS = ("bgp log-neighbor-changes", "no bgp ebgp-requires-policy")
"""Lines FRR's `frr defaults datacenter` profile makes the default, so `show running-config` never shows them."""


def normalize(text: str, hostname: str) -> str:
    """What `show running-config` would show for `text`, as far as drift cares: without `frr version`, `line vty`
    blocks, vtysh's own `hostname` (the machine's, added by vtysh beside the daemons'), and the lines the datacenter
    defaults profile leaves out."""
    defaults = "frr defaults datacenter" in text
    out: list[str] = []
    skip_block = False
    for line in text.splitlines():
        s = line.strip()
        if skip_block:
            if s in ("exit", "!") or (line and not line[0].isspace()):
                skip_block = False
                if s in ("exit", "!"):
                    continue
            else:
                continue
        if s == "line vty":
            skip_block = True
            continue
        if s.startswith("frr version") or (s.startswith("hostname ") and s != f"hostname {hostname}"):
            continue
        if defaults and s in _DATACENTER_DEFAULTS:
            continue
        out.append(line)
    return "\n".join(out) + "\n"


def delta(running: str, intended: str, timeout: float = 60.0, hostname: str | None = None) -> Delta:
    """The lines frr-reload would delete from `running` and add to reach `intended` (no daemon is touched); with
    `hostname`, both are `normalize`d first, so only real differences remain."""
    if hostname is not None:
        running, intended = normalize(running, hostname), normalize(intended, hostname)
    with private_dir() as tmp:
        (tmp / "running.conf").write_text(running)
        (tmp / "frr.conf").write_text(intended)
        res = _run(["python3", str(FRR_RELOAD), "--confdir", str(tmp), "--rundir", str(tmp), "--bindir", "/usr/bin",
                    "--input", str(tmp / "running.conf"), "--test", str(tmp / "frr.conf")], timeout)
    if res.returncode != 0:
        raise PushError(f"frr-reload --test failed (rc {res.returncode})", res.stdout + res.stderr)
    return parse_test_output(res.stdout)


def parse_test_output(out: str) -> Delta:
    """frr-reload --test prints "Lines To Delete", a rule, lines, then "Lines To Add", a rule, lines."""
    section: list[str] | None = None
    delete: list[str] = []
    add: list[str] = []
    for line in out.splitlines():
        s = line.rstrip()
        if s.strip() == "Lines To Delete":
            section = delete
        elif s.strip() == "Lines To Add":
            section = add
        elif section is not None and s and not set(s.strip()) <= {"="}:
            section.append(s)
    return Delta(tuple(_running_line(x) for x in _contexts(delete)), _contexts(add))


def _running_line(entry: str) -> str:
    """frr-reload lists a line to delete as the command that deletes it ("no X" for X, "X" for "no X"): give back
    the line the device runs."""
    context, sep, leaf = entry.rpartition(" / ")
    leaf = leaf[3:] if leaf.startswith("no ") else f"no {leaf}"
    return f"{context}{sep}{leaf}"


def _contexts(lines: list[str]) -> tuple[str, ...]:
    """frr-reload prints a context line before each indented line; join them ("router bgp 1 / neighbor ...") and
    drop a context that is repeated with nothing under it."""
    out: list[str] = []
    context: str | None = None
    for line in lines:
        if line[:1].isspace():
            out.append(f"{context} / {line.strip()}" if context else line.strip())
        else:
            if context is not None and context not in out and not any(o.startswith(context + " / ") for o in out):
                out.append(context)
            context = line
    if context is not None and not any(o.startswith(context + " / ") for o in out) and context not in out:
        out.append(context)
    return tuple(out)
