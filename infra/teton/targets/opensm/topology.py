"""The subnet's topology in the ibnetdiscover format: written for the expected fabric (`ib/topology.net`, which ibsim
also loads) and read back from it or from a real `ibnetdiscover` dump.

Written: one record per node, switches then HCAs, each port on both ends of its link:

    switchguid=0x02...
    Switch	64 "z01-leaf0"
    [1]	"z01-r001-h1 mlx5_0"[1]

    caguid=0x02...
    Hca	1 "z01-r001-h1 mlx5_0"
    [1]	"z01-leaf0"[1]

Read: the same, or what `ibnetdiscover` prints (nodes named "S-<guid>"/"H-<guid>", a port GUID in parentheses after
a port, comments after '#').  Nodes are known by GUID, so a dump from real hardware compares by identity, not by the
names its firmware reports.  Switch port n is the model's n-th port (`1/<cage>/<port>` on a QM9700); an HCA's port 1
is the host's HCA.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from teton.fabric.model import Fabric
from teton.fabric.roles import link_kinds
from teton.findings import TetonError

HCA_PORTS = 1
_HEADER = re.compile(r'^(Switch|Ca|Hca|Rt)\s+(\d+)\s+"([^"]*)"')
_GUID = re.compile(r"^(switchguid|caguid|rtguid)=(0x[0-9a-fA-F]{1,16})")
_PORT = re.compile(r'^\[(\d+)\](?:\(([0-9a-fA-FxX]+)\))?\s*"([^"]*)"\[(\d+)\](?:\(([0-9a-fA-FxX]+)\))?')


class TopologyError(ValueError, TetonError):
    """The text is no ibnetdiscover topology; `line` is where (1-based)."""

    def __init__(self, line: int | None, message: str):
        super().__init__(f"line {line}: {message}" if line else message)
        self.line, self.message = line, message


@dataclass
class Node:
    ident: str                 # the quoted name of its record: a name, or "S-<guid>" in an ibnetdiscover dump
    kind: str                  # "switch" or "hca"
    guid: int | None
    ports: int
    line: int
    links: dict[int, tuple[str, int]] = field(default_factory=dict)   # local port -> (remote ident, remote port)


def _guid(text: str) -> int:
    return int(text, 16)


def parse(text: str, max_nodes: int | None = None, max_links: int | None = None) -> dict[str, Node]:
    """Every node record of `text`, by its ident; TopologyError on anything that is no topology, or when it holds
    more than `max_nodes` node records or `max_links` port lines (read line by line: the bound holds before the
    records take memory)."""
    nodes: dict[str, Node] = {}
    guid: int | None = None
    current: Node | None = None
    links = 0
    for n, m_line in enumerate(re.finditer(r"[^\n]*(?:\n|$)", text), start=1):
        raw = m_line[0]
        if not raw:
            break
        line = raw.strip()
        if not line:
            current = None
            continue
        if line.startswith("#"):
            continue
        m = _GUID.match(line)
        if m:
            guid, current = _guid(m[2]), None
            continue
        if re.match(r"^(vendid|devid|sysimgguid)=", line):
            continue
        m = _HEADER.match(line)
        if m:
            kind = "switch" if m[1] == "Switch" else "hca"
            ident = m[3]
            if ident in nodes:
                raise TopologyError(n, f"node {ident!r} is described twice (first on line {nodes[ident].line})")
            if max_nodes is not None and len(nodes) >= max_nodes:
                raise TopologyError(n, f"more than {max_nodes} node records: not a dump of this fabric")
            current = nodes[ident] = Node(ident, kind, guid, int(m[2]), n)
            guid = None
            continue
        m = _PORT.match(line)
        if m:
            if current is None:
                raise TopologyError(n, "a port line outside a node record")
            port = int(m[1])
            if port in current.links:
                raise TopologyError(n, f"{current.ident} port {port} is listed twice")
            links += 1
            if max_links is not None and links > max_links:
                raise TopologyError(n, f"more than {max_links} port lines: not a dump of this fabric")
            current.links[port] = (m[3], int(m[4]))
            continue
        raise TopologyError(n, f"not a topology line: {line[:80]!r}")
    if not nodes:
        raise TopologyError(None, "no node records (Switch/Ca lines): is this an ibnetdiscover dump?")
    return nodes


# ----------------------------------------------------------------------------------------------------------- writing


@dataclass(frozen=True)
class Names:
    """How the fabric's InfiniBand nodes and ports are known: GUIDs, idents (node descriptions), port numbers."""

    ends: dict[tuple[str, str], tuple[int, int]]       # (device, port name) -> (node GUID, port number)
    nodes: dict[int, tuple[str, str]]                   # node GUID -> (ident, kind)
    ports: dict[tuple[int, int], str]                   # (node GUID, port number) -> "device port-name"

    @staticmethod
    def of(f: Fabric) -> Names:
        ends: dict[tuple[str, str], tuple[int, int]] = {}
        nodes: dict[int, tuple[str, str]] = {}
        ports: dict[tuple[int, int], str] = {}
        for d in f.devices.values():
            if d.nos is None and "hca_guids" in d.attrs:          # GPU hosts, subnet manager service hosts
                for hca, g in sorted(d.attrs["hca_guids"].items()):
                    guid = _guid(g)
                    nodes[guid] = (f"{d.name} {hca}", "hca")
                    ends[(d.name, hca)] = (guid, 1)
                    ports[(guid, 1)] = f"{d.name} {hca}"
            elif d.nos is not None and "guid" in d.attrs:
                guid = _guid(d.attrs["guid"])
                nodes[guid] = (d.name, "switch")
                for p in d.ports:
                    ends[(d.name, p.name)] = (guid, p.ordinal + 1)
                    ports[(guid, p.ordinal + 1)] = f"{d.name} {p.name}"
        return Names(ends, nodes, ports)

    def links(self, f: Fabric) -> Iterator[tuple[tuple[int, int], tuple[int, int]]]:
        """Both ends of every InfiniBand link of `f`, as (node GUID, port number), south end first."""
        for link in f.links:
            if link.kind in link_kinds("infiniband"):
                yield self.ends[(link.a.device, link.a.port)], self.ends[(link.b.device, link.b.port)]


def _records(f: Fabric, names: Names) -> Iterator[str]:
    peers: dict[tuple[int, int], tuple[int, int]] = {}
    for a, b in names.links(f):
        peers[a], peers[b] = b, a
    by_node: dict[int, list[tuple[int, tuple[int, int]]]] = {}
    for (guid, port), remote in peers.items():
        by_node.setdefault(guid, []).append((port, remote))
    order = sorted(names.nodes.items(), key=lambda kv: (kv[1][1] != "switch", kv[1][0]))
    for guid, (ident, kind) in order:
        if kind == "switch":
            yield f"switchguid=0x{guid:016x}"
            yield f'Switch\t{len(f.devices[ident].ports)} "{ident}"'
        else:
            yield f"caguid=0x{guid:016x}"
            yield f'Hca\t{HCA_PORTS} "{ident}"'
        for port, (rguid, rport) in sorted(by_node.get(guid, ())):
            yield f'[{port}]\t"{names.nodes[rguid][0]}"[{rport}]'
        yield ""


def topology_net(f: Fabric) -> str:
    head = (f"# {f.name}: the expected InfiniBand topology (ibnetdiscover format; `ibsim -s` loads it, `teton ib "
            "verify` compares a dump with it).  Rendered by teton.\n\n")
    return head + "\n".join(_records(f, Names.of(f))) + "\n"
