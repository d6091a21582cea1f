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
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from teton import limits

LOCAL_PREFIX = 0x02 << 56
_LINE = re.compile(r'^\s*(0[xX][0-9a-fA-F]{1,16})\s+"([^"]{1,128})"(?:\s+(0[xX][0-9a-fA-F]{1,16}))?\s*$')


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
    path = Path(guid_map)
    return path if path.is_absolute() or spec_dir is None else spec_dir / path


def read_guid_map(path: Path) -> GuidMap:
    """The map at `path`; never raises (unreadable, too large or malformed input is a problem with its line)."""
    try:
        st = path.stat()
    except OSError as exc:
        return GuidMap({}, ((None, f"cannot be read: {exc.strerror or exc}"),), {})
    return _read(str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=8)
def _read(path: str, _mtime: int, size: int) -> GuidMap:
    if size > limits.MAX_GUID_MAP_BYTES:
        return GuidMap({}, ((None, f"is {size:,} bytes, more than MAX_GUID_MAP_BYTES = "
                                   f"{limits.MAX_GUID_MAP_BYTES:,}"),), {})
    try:
        with open(path, "rb") as fh:
            raw = fh.read(limits.MAX_GUID_MAP_BYTES + 1)
        text = raw.decode("utf-8")
    except OSError as exc:
        return GuidMap({}, ((None, f"cannot be read: {exc.strerror or exc}"),), {})
    except UnicodeDecodeError as exc:
        return GuidMap({}, ((raw.count(b"\n", 0, exc.start) + 1, "is not UTF-8 text"),), {})
    if len(raw) > limits.MAX_GUID_MAP_BYTES:
        return GuidMap({}, ((None, f"is more than MAX_GUID_MAP_BYTES = {limits.MAX_GUID_MAP_BYTES:,}"),), {})
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
            problems.append((n, f"expected 0x<node GUID> \"<name>\" [0x<port GUID>], got {line.strip()[:80]!r}"))
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
