"""The floor plan: every rack's place in the hall (row and position), each cable run's length and length class, and
each rack's power budget.

`FloorPlan` is what the design decided from the spec's `floor:` (`teton.spec.floor`), carried in the Fabric; the
places are a pure function of the racks' names and the plan, so a build folder's fabric.json gives the same lengths
as the spec.  The layout (sensible defaults, not any site's drawing):

- zone *z* takes block *z* of rows: `rows_per_zone` compute rows (rack *r* in row `(r-1) // racks_per_row` of the
  block, at position `(r-1) % racks_per_row + 1`), with the zone's network racks (`zNN-nMM`: its spines, its
  front-end FSWs) in rows of their own in the middle of the block, so the uplinks of both halves are short;
- then, after the room's zones, the racks of no zone (aggregation, spine planes, storage groups, the service rack,
  InfiniBand cores), each group of one name prefix (`agg`, `fe-p01`, `s1`, `svc`, `core`) from a new row.

Inside a group a rack's place follows its number (racks numbered from 90, the front end's FSW racks, from a row of
their own), so an aggregator, a spine or a storage rack added moves no other rack of its group.

A run inside one rack goes from one device's middle to the other's, plus half a metre of dressing.  A run between racks
climbs from each device to the rack's top and the tray (`tray_m`), follows the trays along the rows and across them
(Manhattan distance: positions x `rack_width_m`, rows x `row_pitch_m`) and has `slack_m` of service loop.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import NamedTuple, Protocol

from teton.spec.floor import Floor

RU_M = 0.04445          # one rack unit, 1.75 in
RACK_UNITS = 48         # the ORv3 rack the design places devices in (teton.design.roce.RACK_UNITS)
IN_RACK_SLACK_M = 0.5   # dressing of a run inside one rack
DAC_LENGTHS_M = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 5.0, 7.0)
FIBRE_LENGTHS_M = (1, 2, 3, 5, 7, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100, 120, 150, 200, 250, 300, 400,
                   500, 750, 1000, 1500, 2000)

_COMPUTE = re.compile(r"^z([0-9]+)-r([0-9]+)$")
_NETWORK = re.compile(r"^z([0-9]+)-n([0-9]+)$")
_GROUPED = re.compile(r"^(.*?)-?[nr]?([0-9]+)$")
_SITE_TIER = re.compile(r"^bag-n([0-9]+)$")    # teton.design.site.bag_rack
SITE_SEPARATOR = "--"     # between a cluster's name and its device's or rack's in a site's builds (teton.design.site)


class OpticRule(NamedTuple):
    """The spec's optics for the links of one kind (its tier's `optics_down`); "" where teton chooses."""

    kind: str
    pmd: str
    cord: str
    connector: str


@dataclass(frozen=True)
class FloorPlan:
    """The floor as the design laid it out (the spec's `floor:` with its defaults and the rows a zone takes)."""

    hall: str = "hall1"
    racks_per_row: int = 16
    row_pitch_m: float = 3.0
    rack_width_m: float = 0.6
    tray_m: float = 0.6
    slack_m: float = 2.0
    rows_per_zone: int = 0                         # 0: what the largest zone's compute racks fill
    zones: int = 0                                 # zone blocks laid out before the zone-less racks (0: those there)
    rack_power_w: int | None = None                # every rack's budget (None: no budget)
    rack_power: tuple[tuple[str, int], ...] = ()   # (rack name or fnmatch pattern, budget in W)
    optics: tuple[OpticRule, ...] = ()             # the spec's optics per link kind
    parts: tuple[tuple[str, str], ...] = ()        # (part class, the site's part number)

    def optic_rule(self, kind: str) -> OpticRule | None:
        return next((r for r in self.optics if r.kind == kind), None)

    def budget_w(self, rack: str) -> tuple[int | None, str]:
        """(the rack's budget in W, where it comes from: "floor.rack_power.<pattern>", "floor.rack_power_kw" or "")."""
        for pattern, watts in self.rack_power:
            if pattern == rack:
                return watts, f"floor.rack_power.{pattern}"
        matches = sorted((p for p, _ in self.rack_power if fnmatchcase(rack, p)), key=lambda p: (-len(p), p))
        if matches:
            return dict(self.rack_power)[matches[0]], f"floor.rack_power.{matches[0]}"
        return self.rack_power_w, "floor.rack_power_kw" if self.rack_power_w is not None else ""


def floor_plan(floor: Floor | None, racks_per_zone: int, zones: int = 0,
               optics: tuple[OpticRule, ...] = ()) -> FloorPlan:
    """The plan of the spec's `floor:` (None: the defaults) for a cluster of up to `zones` zones of up to
    `racks_per_zone` racks (the room: a zone added within it moves no other rack), with the tiers' `optics`."""
    f = floor or Floor()
    rows = f.rows_per_zone or max(1, math.ceil(racks_per_zone / f.racks_per_row))
    return FloorPlan(hall=f.hall, racks_per_row=f.racks_per_row, row_pitch_m=f.row_pitch_m,
                     rack_width_m=f.rack_width_m, tray_m=f.tray_m, slack_m=f.slack_m, rows_per_zone=rows, zones=zones,
                     rack_power_w=None if f.rack_power_kw is None else round(f.rack_power_kw * 1000),
                     rack_power=tuple((p, round(kw * 1000)) for p, kw in sorted(f.rack_power.items())),
                     optics=tuple(sorted(optics)), parts=tuple(sorted(f.parts.items())))


class Place(NamedTuple):
    row: int           # 1-based, in hall order
    position: int      # 1-based, along the row


HIGH = 90   # rack numbers from 90 (`z01-n90`, `agg-n90`: the front end's FSW racks) take a row of their own


def _spread(racks: list[tuple[int, str]], per_row: int) -> tuple[dict[str, tuple[int, int]], int]:
    """({rack: (row offset, position)}, rows) of one group: a rack's place is a function of its number (racks 1-89
    from the group's first row, racks 90 and up from a row after them), so a rack added moves none of the others."""
    low = [(i, n) for i, n in racks if i < HIGH]
    high = [(i - HIGH + 1, n) for i, n in racks if i >= HIGH]
    out: dict[str, tuple[int, int]] = {}
    rows = 0
    for part in (low, high):
        if not part:
            continue
        for i, name in part:
            out[name] = (rows + (max(i, 1) - 1) // per_row, (max(i, 1) - 1) % per_row + 1)
        rows += (max(i for i, _ in part) - 1) // per_row + 1
    return out, rows


def places(plan: FloorPlan, racks: set[str] | list[str]) -> dict[str, Place]:
    """Every rack's place on the floor."""
    per_row = plan.racks_per_row
    compute: dict[int, list[tuple[int, str]]] = {}
    network: dict[int, list[tuple[int, str]]] = {}
    other: dict[str, list[tuple[int, str]]] = {}
    last: dict[str, list[tuple[int, str]]] = {}      # a site's tier: after every rack of the cluster's own
    others: dict[str, list[tuple[int, str]]] = {}    # a site's clusters' racks (`<cluster>--<rack>`): after the tier's
    for name in sorted(racks):
        if m := _SITE_TIER.match(name):
            last.setdefault("bag", []).append((int(m.group(1)), name))
        elif SITE_SEPARATOR in name:
            g = _GROUPED.match(name)
            prefix, index = (g.group(1), int(g.group(2))) if g else (name, 0)
            others.setdefault(prefix, []).append((index, name))
        elif m := _COMPUTE.match(name):
            compute.setdefault(int(m.group(1)), []).append((int(m.group(2)), name))
        elif m := _NETWORK.match(name):
            network.setdefault(int(m.group(1)), []).append((int(m.group(2)), name))
        else:
            g = _GROUPED.match(name)
            prefix, index = (g.group(1), int(g.group(2))) if g else (name, 0)
            other.setdefault(prefix, []).append((index, name))
    rows_c = plan.rows_per_zone or max([math.ceil(max(i for i, _ in rs) / per_row) for rs in compute.values()] or [1])
    half = math.ceil(rows_c / 2)
    rows_c = max([rows_c] + [(i - 1) // per_row + 1 for rs in compute.values() for i, _ in rs])
    spread = {z: _spread(rs, per_row) for z, rs in network.items()}
    rows_n = max([rows for _, rows in spread.values()] or [0])
    block = rows_c + rows_n
    out: dict[str, Place] = {}
    zones = sorted(set(compute) | set(network))
    for zone in zones:
        base = 1 + (zone - 1) * block
        for index, name in compute.get(zone, []):
            row = (index - 1) // per_row
            out[name] = Place(base + row + (rows_n if row >= half else 0), (index - 1) % per_row + 1)
        for name, (row, position) in spread.get(zone, ({}, 0))[0].items():
            out[name] = Place(base + half + row, position)
    base = 1 + max([plan.zones] + zones) * block
    # a cluster's own racks, then the site's tier, then the site's clusters' racks (in the tier's build): a cluster
    # joining a site moves none of its racks, and one more cluster in the tier's build moves no BAG rack
    for prefix in [*sorted(other), *last, *sorted(others)]:
        placed, rows = _spread({**other, **last, **others}[prefix], per_row)
        for name, (row, position) in placed.items():
            out[name] = Place(base + row, position)
        base += rows
    return out


def run_m(plan: FloorPlan, a: Place, ru_a: float, b: Place, ru_b: float, same_rack: bool) -> float:
    """Length of one cable between two devices whose middles are at rack units `ru_a` and `ru_b`."""
    if same_rack:
        return abs(ru_a - ru_b) * RU_M + IN_RACK_SLACK_M
    climb = (max(0.0, RACK_UNITS - ru_a) + max(0.0, RACK_UNITS - ru_b)) * RU_M + 2 * plan.tray_m
    along = abs(a.position - b.position) * plan.rack_width_m + abs(a.row - b.row) * plan.row_pitch_m
    return climb + along + plan.slack_m


def length_class(metres: float, dac: bool) -> float | None:
    """The shortest stock length that reaches `metres` (copper or fibre); None past the longest."""
    for stock in DAC_LENGTHS_M if dac else FIBRE_LENGTHS_M:
        if metres <= stock + 1e-9:
            return float(stock)
    return None


class Racked(Protocol):
    @property
    def rack(self) -> str: ...
    @property
    def ru(self) -> int: ...
    @property
    def height_ru(self) -> int: ...


def link_m(plan: FloorPlan, where: dict[str, Place], a: Racked, b: Racked) -> float:
    """The run between two devices (their middles), to 0.1 m."""
    return round(run_m(plan, where[a.rack], a.ru + a.height_ru / 2, where[b.rack], b.ru + b.height_ru / 2,
                       a.rack == b.rack), 1)
