"""cabling.csv: the cable run list, one row per link, both ends with device, port, rack and rack unit.

A cable's id is its rack's name and its place among that rack's cables (`z01-r001-0007`): short enough for a label,
unique, and stable under changes elsewhere: adding or removing a rack, a host or a zone renumbers no cable of another
rack, so a pull request's cabling diff shows the cables that change, not every row after them.
"""

from __future__ import annotations

import csv
import io

from teton.fabric.model import Fabric
from teton.targets.base import Files, RenderContext, Target
from teton.targets.tokens import csv_cell

COLUMNS = ("cable_id", "kind", "a_device", "a_port", "a_rack", "a_ru", "b_device", "b_port", "b_rack", "b_ru",
           "speed_gbps", "medium", "transceiver", "zone", "rack")


class CablingTarget(Target):
    name = "cabling"
    summary = "cabling.csv: the cable run list (both ends, rack, RU, medium, transceiver)"

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(COLUMNS)
        devices = fabric.devices
        per_rack: dict[str, int] = {}
        for link in fabric.links:
            a, b = devices[link.a.device], devices[link.b.device]
            optic = "" if link.medium in ("dac", "aoc") else f"{link.speed_gbps}G-{link.medium}"
            n = per_rack[link.rack] = per_rack.get(link.rack, 0) + 1
            w.writerow([csv_cell(v) for v in (
                f"{link.rack}-{n:04d}", link.kind, a.name, link.a.port, a.rack, a.ru, b.name, link.b.port, b.rack,
                b.ru, link.speed_gbps, link.medium, optic, "" if link.zone is None else link.zone, link.rack)])
        return {"cabling.csv": buf.getvalue()}


TARGET = CablingTarget()
