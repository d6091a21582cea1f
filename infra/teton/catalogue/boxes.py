"""A box's front panel: every cage as printed on it, its form factor, the SerDes lanes behind it and the speeds it
runs, from the vendor's machine-readable map where there is one.

Minipack2 (FBOSS's `fuji`, 16Q PIMs) and Wedge400 come from FBOSS's own platform mappings, through the committed
table `fboss_ports.yaml` (generated from the pinned mappings by `python -m teton.targets.fboss.catalogue`, checked
against them by tests/targets/test_fboss_catalogue.py): a cage is a port whose name ends in `/1`; its lanes are the
ASIC's SerDes lanes of its fastest profile, its cage lanes those the transceiver carries, and a cage whose lanes another
cage takes at that cage's top speed (Minipack2's even cages, under a 400G odd cage) names that cage as `of`.  Every
NOS reads the same map (teton.catalogue.ports), so a cable id lands on the same cage whatever NOS the spec picks.

Boxes without such a map (Arista 7800R3 line cards, 7060DX5-64S, NVIDIA QM9700) have one cage per port group entry,
as the vendor's data sheet gives them (docs/sources.md); `teton.catalogue.ports` lays those out from the catalogue.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import yaml

TABLE = Path(__file__).with_name("fboss_ports.yaml")

# The cage by the lanes its transceiver carries at the cage's top speed [I from the mapping's lane counts: an 8-lane
# QSFP-family cage is a QSFP-DD, a 4-lane one a QSFP56 (docs/sources.md, section 10)].
FORM_BY_CAGE_LANES = {8: "QSFP-DD", 4: "QSFP56"}

# The table is read by libyaml where PyYAML has it (0.12 -> 0.02 s of every build's serial start: the spec's checks
# ask for the boxes); it is committed, and tests/targets/test_fboss_catalogue.py checks both loaders read it the same.
TABLE_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Cage(NamedTuple):
    """One front-panel cage of a box."""

    label: str                  # as printed: "<slot>/<cage>" on a box of port modules, "<cage>" on a fixed one
    slot: int                   # port module (PIM) or 1
    number: int                 # cage number on its slot, 1-based
    form_factor: str
    cage_lanes: int             # lanes the cage's module carries at its top speed
    lanes: tuple[int, ...]      # the ASIC's SerDes lanes at its top speed
    speeds: tuple[int, ...]     # Gb/s the cage runs, fastest first
    of: str | None              # the cage whose top speed takes this one's lanes (None: its own)


@cache
def fboss_table() -> dict[str, dict[str, dict[str, Any]]]:
    """{FBOSS platform: {port name: entry}} of the committed table."""
    data = yaml.load(TABLE.read_text(encoding="utf-8"), Loader=TABLE_LOADER)
    return {platform: dict(ports) for platform, ports in data["platforms"].items()}


def _place(name: str) -> tuple[int, int]:
    slot, cage = name.removeprefix("eth").split("/")[:2]
    return int(slot), int(cage)


@cache
def box_map(box: str) -> tuple[Cage, ...]:
    """The cages of `box` (an FBOSS platform: fuji, wedge400) in front-panel order; KeyError if teton has no map."""
    ports = fboss_table()[box]
    slots = {_place(n)[0] for n in ports}
    out = []
    for name, e in ports.items():
        if not name.endswith("/1"):
            continue
        slot, number = _place(name)
        lanes = tuple(int(x) for x in e.get("lanes", []))
        cage_lanes = int(e.get("cage_lanes", len(lanes)))
        label = f"{slot}/{number}" if len(slots) > 1 else str(number)
        of = _label(str(e["of"]), len(slots) > 1) if e.get("of") else None
        out.append(Cage(label, slot, number, FORM_BY_CAGE_LANES.get(cage_lanes, "QSFP-DD"), cage_lanes, lanes,
                        tuple(int(g) for g in e["gbps"]), of))
    return tuple(sorted(out, key=lambda c: (c.slot, c.number)))


def _label(name: str, modular: bool) -> str:
    slot, number = _place(name)
    return f"{slot}/{number}" if modular else str(number)


def boxes() -> list[str]:
    return sorted(fboss_table())
