"""`teton verify cabling`: what the devices' LLDP saw against the expected neighbours of a build
(`cabling/neighbours.json`), by device, port and cable id.

- **swapped**: two cables crossed: each end of cable C sees the far end of cable X and the other way round (reported
  once, with both cable ids);
- **miswired**: a port that sees another device or port than designed (the cable whose far end it sees is named when
  the design has one);
- **missing**: a designed cable that neither end sees (both ends' files were collected; a cable only one end sees
  is `one_way`);
- **extra**: a neighbour on a port the design leaves unused (a switch's management port, `eth0` or `Management1`,
  is not a fabric port and is left out), or a second neighbour beside the designed one on a point-to-point port
  (something between the two ends forwards LLDP: a hub, a media converter, a tap).

A port sees what it was designed to see when the neighbour's system name and port id are what that neighbour
announces (teton.fabric.neighbours).  A device without a file is listed as `not_collected`, and its cables are
judged from their other end alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from teton.fabric.neighbours import Neighbour
from teton.targets.cabling.lldp import Seen

MANAGEMENT_PORT = re.compile(r"^(eth0|mgmt[0-9]*|Management[0-9/]*|ma[0-9]+)$")
"""A switch's out-of-band port (SONiC eth0, EOS Management1 ...): not a fabric port, never an extra cable."""


@dataclass
class CablingReport:
    devices: int = 0                     # devices whose LLDP was compared
    ports: int = 0                       # expected ports on them
    as_designed: int = 0
    swapped: list[dict[str, Any]] = field(default_factory=list)
    miswired: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)
    one_way: list[dict[str, Any]] = field(default_factory=list)
    extra: list[dict[str, Any]] = field(default_factory=list)
    not_collected: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.swapped or self.miswired or self.missing or self.extra)

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "devices": self.devices, "ports": self.ports, "as_designed": self.as_designed,
                "swapped": self.swapped, "miswired": self.miswired, "missing": self.missing,
                "one_way": self.one_way, "extra": self.extra, "not_collected": self.not_collected}


def _end(device: str, port: str) -> str:
    return f"{device} {port}"


def compare(expected: dict[str, dict[str, Neighbour]], seen: dict[str, list[Seen]]) -> CablingReport:
    """The report of `seen` ({device: what its file says}) against `expected` ({device: {port: Neighbour}})."""
    r = CablingReport()
    # (system, announced port id) -> (device, port, cable): who a seen neighbour is
    announced = {(d, n.local_id): (d, p, n.cable) for d, ports in expected.items() for p, n in ports.items()}
    r.not_collected = sorted(set(expected) - set(seen))
    seen_ok: set[tuple[str, str]] = set()
    heard: set[tuple[str, str]] = set()          # (device, port) ends that see something
    wrong: list[dict[str, Any]] = []
    for device in sorted(seen):
        ports = expected.get(device, {})
        by_id = {n.local_id: p for p, n in ports.items()}
        r.devices += device in expected
        r.ports += len(ports)
        found: dict[str, list[Seen]] = {}
        for s in seen[device]:
            local = s.port if s.port in ports else by_id.get(s.port, s.port)
            found.setdefault(local, []).append(s)
        for port in sorted(found):
            heard.add((device, port))
            n = ports.get(port)
            if n is None and MANAGEMENT_PORT.match(port):
                continue                     # the out-of-band port sees the management network, not the fabric
            if n is None:
                for s in found[port]:
                    r.extra.append({"device": device, "port": port, "found": _end(s.system, s.port_id),
                                    "found_cable": announced.get((s.system, s.port_id), ("", "", ""))[2]})
                continue
            if any(s.system == n.system and s.port_id == n.port_id for s in found[port]):
                r.as_designed += 1
                seen_ok.add((device, port))
                for s in found[port]:        # a second neighbour on a point-to-point port: something forwards LLDP
                    if (s.system, s.port_id) != (n.system, n.port_id):
                        r.extra.append({"device": device, "port": port, "found": _end(s.system, s.port_id),
                                        "found_cable": announced.get((s.system, s.port_id), ("", "", ""))[2],
                                        "beside": _end(n.system, n.port_id)})
                continue
            s = found[port][0]
            far = announced.get((s.system, s.port_id))
            wrong.append({"device": device, "port": port, "cable": n.cable,
                          "expected": _end(n.system, n.port_id), "found": _end(s.system, s.port_id),
                          "found_cable": far[2] if far else "", "found_end": _end(far[0], far[1]) if far else ""})
    _pair_swaps(r, wrong)
    cables: dict[str, list[tuple[str, str, Neighbour]]] = {}
    for device, ports in expected.items():
        for port, n in ports.items():
            cables.setdefault(n.cable, []).append((device, port, n))
    for cable in sorted(cables):
        ends = sorted(cables[cable])
        collected = [(d, p) for d, p, _ in ends if d in seen]
        if not collected:
            continue
        listening = [(d, p) for d, p in collected if (d, p) in heard]
        if not listening:
            d, p, n = ends[0]
            r.missing.append({"cable": cable, "a": _end(d, p), "b": _end(n.peer, n.peer_port), "kind": n.kind,
                              "collected": [_end(*e) for e in collected]})
        elif len(collected) == 2 and len(listening) == 1 and listening[0] in seen_ok:
            other = next(e for e in collected if e != listening[0])
            r.one_way.append({"cable": cable, "seen_by": _end(*listening[0]), "not_seen_by": _end(*other)})
    return r


def _pair_swaps(r: CablingReport, wrong: list[dict[str, Any]]) -> None:
    """Wrong neighbours that are two cables crossed: reported once as swapped; the rest as miswired."""
    by_cables: dict[frozenset[str], list[dict[str, Any]]] = {}
    for w in wrong:
        if w["found_cable"] and w["found_cable"] != w["cable"]:
            by_cables.setdefault(frozenset((w["cable"], w["found_cable"])), []).append(w)
    used: set[int] = set()
    for pair, ws in sorted(by_cables.items(), key=lambda kv: sorted(kv[0])):
        directions = {(w["cable"], w["found_cable"]) for w in ws}
        a, b = sorted(pair)
        if (a, b) in directions and (b, a) in directions:
            r.swapped.append({"cables": [a, b], "ends": sorted(f"{w['device']} {w['port']} sees {w['found']} "
                                                                f"(cable {w['found_cable']})" for w in ws)})
            used.update(id(w) for w in ws)
    r.miswired = [w for w in wrong if id(w) not in used]
