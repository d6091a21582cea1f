"""InfiniBand GUIDs: the hardware's, from a GUID map file, or synthetic ones derived from the node names.

A node is a switch (named as its device) or a host's HCA, named as its node description reads: "<host> <hca>".

- Synthetic GUIDs are what the simulator uses: 0x02 (a locally administered EUI-64, so never a vendor's) followed by
  56 bits of BLAKE2b of the node's name, with the last bit clear; an HCA's port 1 is its node GUID + 1, as ibsim
  numbers ports.  Deterministic across runs, machines and hash seeds.
- A GUID map is an OpenSM node-name-map: one node a line, `0x<node GUID> "<name>"`, optionally followed by the port
  GUID of an HCA (`0x<port GUID>`; without it, port 1 has the node GUID, as on ConnectX adapters).  `#` starts a
  comment.  Every problem is reported with its line.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from teton import limits

LOCAL_PREFIX = 0x02 << 56
# a node's name is a device name, or '<host> <hca>': the grammar of names (teton.spec.model.NAME_PATTERN), so a name
# that is reported back is never other text of the file
_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}(?: [A-Za-z0-9_][A-Za-z0-9_.-]{0,63})?"
_LINE = re.compile(r'^\s*(0[xX][0-9a-fA-F]{1,16})\s+"(' + _NAME + r')"(?:\s+(0[xX][0-9a-fA-F]{1,16}))?\s*$')


def guid_text(guid: int) -> str:
    return f"0x{guid:016x}"


def synthetic(name: str) -> int:
    """The node GUID of node `name` (even: an HCA's port 1 is this + 1)."""
    digest = int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=7).digest(), "big")
    return LOCAL_PREFIX | (digest & ~1)


def hca_node_name(host: str, hca: str) -> str:
    """An HCA's node description, as Linux sets it: "<hostname> <hca>"."""
    return f"{host} {hca}"


@dataclass(frozen=True)
class GuidMap:
    """The nodes of a GUID map: name -> (node GUID, port GUID or None), and the problems found, by line."""

    nodes: dict[str, tuple[int, int | None]]
    problems: tuple[tuple[int | None, str], ...]
    lines: dict[str, int]


def resolve(spec_dir: Path | None, guid_map: str) -> Path:
    """Where `guid_map` (relative to the spec, as the schema requires) is: in the spec's folder (else the cwd)."""
    return (spec_dir or Path.cwd()) / guid_map


def _problem(message: str, line: int | None = None) -> GuidMap:
    return GuidMap({}, ((line, message),), {})


def read_guid_map(path: Path, root: Path | None = None) -> GuidMap:
    """The map at `path`; never raises.  The file must resolve inside `root` (the spec's folder, when given; a
    symbolic link may not lead out of it), be a regular file (a FIFO or a device is refused, never waited on) of at
    most MAX_GUID_MAP_BYTES.  Problems name the line, never its text: the file may be anything (/etc/shadow)."""
    try:
        real = path.resolve(strict=True)
        if root is not None and not real.is_relative_to(root.resolve()):
            return _problem("is outside the spec's folder: a GUID map is a file beside the spec or below it")
        fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop
        return _problem(f"cannot be read: {getattr(exc, 'strerror', None) or type(exc).__name__}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return _problem("cannot be read: it is not a regular file")
        if st.st_size > limits.MAX_GUID_MAP_BYTES:
            return _problem(f"is {st.st_size:,} bytes, more than MAX_GUID_MAP_BYTES = {limits.MAX_GUID_MAP_BYTES:,}")
        with os.fdopen(os.dup(fd), "rb") as fh:
            raw = fh.read(limits.MAX_GUID_MAP_BYTES + 1)
    except OSError as exc:
        return _problem(f"cannot be read: {exc.strerror or exc}")
    finally:
        os.close(fd)
    if len(raw) > limits.MAX_GUID_MAP_BYTES:
        return _problem(f"is more than MAX_GUID_MAP_BYTES = {limits.MAX_GUID_MAP_BYTES:,}")
    return _parse(raw)


@lru_cache(maxsize=2)
def _parse(raw: bytes) -> GuidMap:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return _problem("is not UTF-8 text", raw.count(b"\n", 0, exc.start) + 1)
    nodes: dict[str, tuple[int, int | None]] = {}
    lines: dict[str, int] = {}
    owner: dict[int, str] = {}
    problems: list[tuple[int | None, str]] = []
    for n, line in enumerate(text.splitlines(), start=1):
        body = _strip_comment(line)
        if not body.strip():
            continue
        m = _LINE.match(body)
        if m is None:
            problems.append((n, "has a malformed line: expected 0x<node GUID> \"<name>\" [0x<port GUID>] "
                                "(a name of letters, digits, '_', '.', '-' and at most one space)"))
            continue
        node, name, port = int(m[1], 16), m[2], int(m[3], 16) if m[3] else None
        if node == 0 or port == 0:
            problems.append((n, f"{name}: GUID 0 is not a GUID"))
            continue
        if name in nodes:
            problems.append((n, f"{name!r} is listed twice (first on line {lines[name]})"))
            continue
        for g in (node,) if port is None or port == node else (node, port):
            if g in owner:
                first = owner[g]
                problems.append((n, f"{name!r}: GUID {guid_text(g)} is already {first!r} (line {lines[first]})"))
            owner[g] = name
        nodes[name] = (node, port)
        lines[name] = n
    return GuidMap(nodes, tuple(problems), lines)


def _strip_comment(line: str) -> str:
    """The line without a trailing comment (a '#' outside the quoted name)."""
    if "#" not in line:
        return line
    quoted = False
    for i, ch in enumerate(line):
        if ch == '"':
            quoted = not quoted
        elif ch == "#" and not quoted:
            return line[:i]
    return line
