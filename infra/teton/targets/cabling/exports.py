"""Topology files for the vendors' cable validators, from the same cables as the run list.

- `cabling/topology.dot`: the Graphviz graph NetQ's and Cumulus PTM's cable validation take (`"a":"port" --
  "b":"port";`, each device's own port names), one edge per Ethernet cable with its id as a comment;
- `cabling/ibdiagnet.topo` (InfiniBand): the IBDM topology file `ibdiagnet -t` checks a fabric against: one record
  per node (`<type> <name>`), then one line per cabled port, `P<n> -4x-100G-> <type> <name> P<m>` (NDR: four lanes
  of 100G); a switch's port n is its model's n-th port, an HCA (`<host>/<hca>`, one node per HCA) has port 1.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from teton.fabric.cables import Cable
from teton.fabric.model import Fabric
from teton.fabric.roles import link_kinds, server_roles

IB_KINDS = frozenset(link_kinds("infiniband"))
LANE_GBPS = {400: "4x-100G", 200: "4x-50G", 100: "4x-25G"}


_quote = json.encoder.encode_basestring_ascii


def _q(text: str) -> str:
    """`json.dumps(text)`: for a string, its encoder's own quoting, without building an encoder per call."""
    return _quote(text) if type(text) is str else json.dumps(text)


def dot(fabric: Fabric, found: Iterable[Cable]) -> str:
    lines = [f"graph {_q(fabric.name)} {{", f"  // {fabric.name}: every Ethernet cable, A end first; rendered by teton"]
    for c in found:
        if c.kind in IB_KINDS:
            continue
        lines.append(f"  {_q(c.a.device)}:{_q(c.a.port)} -- {_q(c.b.device)}:{_q(c.b.port)};   // {c.id}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node(fabric: Fabric, device: str, port: str) -> tuple[str, str, int]:
    """(node type, node name, port number) of one end of an InfiniBand cable."""
    d = fabric.devices[device]
    if d.role in server_roles():
        return "HCA", f"{device}/{port}", 1
    ordinal = next((i.ordinal for i in d.interfaces if i.name == port), 0)
    return d.model.upper().replace("NVIDIA-", "M"), device, ordinal + 1


def ibdiagnet_topo(fabric: Fabric, found: Iterable[Cable]) -> str:
    nodes: dict[tuple[str, str], list[tuple[int, str]]] = {}
    for c in found:
        if c.kind not in IB_KINDS:
            continue
        a, b = _node(fabric, c.a.device, c.a.port), _node(fabric, c.b.device, c.b.port)
        width = LANE_GBPS.get(c.speed_gbps, f"4x-{c.speed_gbps // 4}G")
        for (ta, na, pa), (tb, nb, pb) in ((a, b), (b, a)):
            nodes.setdefault((ta, na), []).append((pa, f"   P{pa} -{width}-> {tb} {nb} P{pb}   # {c.id}"))
    out = [f"# {fabric.name}: the InfiniBand fabric as designed, for ibdiagnet -t; rendered by teton"]
    for (kind, name), ports in sorted(nodes.items(), key=lambda kv: (kv[0][0] == "HCA", kv[0][1])):
        out += ["", f"{kind} {name}", *(line for _, line in sorted(ports))]
    return "\n".join(out) + "\n"
