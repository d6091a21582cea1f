"""Compare a discovered InfiniBand topology (an `ibnetdiscover` dump, or `ib/topology.net` read back) with the design.

Every link is named by its two ends, "device port" (a switch's port as the model names it, `1/3/1`; a host's HCA).
A link of the design is

- present when the dump has it;
- missing when neither of its ends is cabled to anything;
- miswired when one of its ends is cabled elsewhere (the report says to what);

and a link of the dump is extra when neither end belongs to a link of the design (a port the design leaves free, or a
node it does not know: those are named by the dump's GUID and description).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from teton.fabric.model import Fabric
from teton.findings import Finding, SpecError
from teton.targets.opensm.topology import Names, Node, TopologyError, parse

End = tuple[int, int]                 # (node GUID, port number)
DUMP = "--discovered"                 # where a problem of the dump is, for findings
_ID_GUID = re.compile(r"^[SHR]-([0-9a-fA-F]{16})$")


@dataclass
class Report:
    """What differs; each entry names both ends of a link."""

    links: int = 0                                                   # links of the design
    found: int = 0                                                   # of them, present in the dump
    missing: list[tuple[str, str]] = field(default_factory=list)
    extra: list[tuple[str, str]] = field(default_factory=list)
    miswired: list[dict[str, str]] = field(default_factory=list)     # expected a <-> b; found a <-> x, b <-> y
    unknown_nodes: list[str] = field(default_factory=list)           # nodes of the dump the design does not have

    @property
    def ok(self) -> bool:
        return not (self.missing or self.extra or self.miswired)

    def as_dict(self) -> dict[str, object]:
        return {"ok": self.ok, "links": self.links, "found": self.found,
                "missing": [list(x) for x in self.missing], "extra": [list(x) for x in self.extra],
                "miswired": self.miswired, "unknown_nodes": self.unknown_nodes}


def _discovered(nodes: dict[str, Node], names: Names) -> tuple[dict[End, End], dict[int, str]]:
    """The dump's links as GUID ends (both directions), and the idents of nodes the design does not know."""
    by_name = {ident: guid for guid, (ident, _) in names.nodes.items()}
    synthetic = 1 << 64                     # nodes with no GUID and no known name get numbers above any GUID

    def guid_of(ident: str) -> int:
        nonlocal synthetic
        node = nodes.get(ident)
        if node is not None and node.guid is not None:
            return node.guid
        m = _ID_GUID.match(ident)
        if m:
            return int(m[1], 16)
        if ident in by_name:
            return by_name[ident]
        synthetic += 1
        if node is not None:
            node.guid = synthetic
        return synthetic

    links: dict[End, End] = {}
    unknown: dict[int, str] = {}
    for node in nodes.values():
        local = guid_of(node.ident)
        if local not in names.nodes:
            unknown[local] = node.ident
        for port, (remote_ident, remote_port) in node.links.items():
            remote = guid_of(remote_ident)
            if remote not in names.nodes:
                unknown.setdefault(remote, remote_ident)
            links[(local, port)] = (remote, remote_port)
            links.setdefault((remote, remote_port), (local, port))
    return links, unknown


def compare(fabric: Fabric, text: str) -> Report:
    """`text` (an ibnetdiscover dump) against `fabric`'s InfiniBand links; TopologyError if it is no topology."""
    names = Names.of(fabric)
    # a dump of this fabric has its nodes and both ends of its links, and a margin for what is extra; a dump far
    # bigger is refused while it is read (a 200 MB dump took 7 GB and more than 300 s as records)
    slack = max(1024, len(names.nodes))
    disc, unknown = _discovered(parse(text, max_nodes=len(names.nodes) + slack,
                                      max_links=2 * len(names.ports) + 2 * slack), names)

    def say(end: End) -> str:
        name = names.ports.get(end)
        if name is not None:
            return name
        guid, port = end
        ident = unknown.get(guid) or names.nodes.get(guid, ("", ""))[0]
        label = ident if guid >= 1 << 64 else f"0x{guid:016x}" + (f" ({ident})" if ident else "")
        return f"{label} port {port}"

    report = Report()
    expected: dict[End, End] = {}
    for a, b in names.links(fabric):
        expected[a], expected[b] = b, a
        report.links += 1
        if disc.get(a) == b:
            report.found += 1
        elif a not in disc and b not in disc:
            report.missing.append((say(a), say(b)))
        else:
            report.miswired.append({"expected": f"{say(a)} <-> {say(b)}",
                                    "found": "; ".join(f"{say(e)} <-> {say(disc[e])}" if e in disc
                                                       else f"{say(e)} unconnected" for e in (a, b))})
    seen: set[End] = set()
    for a, b in disc.items():
        if a in seen:
            continue
        seen.update((a, b))
        if a not in expected and b not in expected:
            report.extra.append((say(a), say(b)))
    report.unknown_nodes = sorted(unknown.values())
    return report


MAX_DUMP_BYTES = 64 << 20   # an ibnetdiscover dump of the 24k cluster is about 12 MB


def read_dump(path: Path) -> str:
    """The text of a dump at `path`; SpecError (file, line) if it cannot be read, is not a regular file (a FIFO
    would hang the reader), is larger than MAX_DUMP_BYTES or is no text."""
    file = str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise SpecError([Finding(file, DUMP, "is not a regular file: not an ibnetdiscover dump", rule="io")])
            if st.st_size > MAX_DUMP_BYTES:
                raise SpecError([Finding(file, DUMP, f"is {st.st_size:,} bytes, larger than {MAX_DUMP_BYTES:,}: "
                                         "not an ibnetdiscover dump", rule="io")])
            raw = fh.read(MAX_DUMP_BYTES + 1)
    except OSError as exc:
        raise SpecError([Finding(file, DUMP, f"cannot be read: {exc.strerror or exc}", rule="io")]) from None
    if len(raw) > MAX_DUMP_BYTES:
        raise SpecError([Finding(file, DUMP, f"is larger than {MAX_DUMP_BYTES:,} bytes: not an ibnetdiscover dump",
                                 rule="io")])
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError([Finding(file, DUMP, "is not UTF-8 text: not an ibnetdiscover dump", rule="io",
                                 line=raw.count(b"\n", 0, exc.start) + 1)]) from None


def verify_dump(fabric: Fabric, path: Path) -> Report:
    """`teton ib verify`: the dump at `path` against `fabric`; SpecError naming the file and line of bad input."""
    text = read_dump(path)
    try:
        return compare(fabric, text)
    except TopologyError as exc:
        raise SpecError([Finding(str(path), DUMP, exc.message, rule="ib-topology", line=exc.line)]) from None
