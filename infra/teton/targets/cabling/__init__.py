"""cabling.csv: the cable run list, one row per link, both ends with device, port, rack and rack unit."""

from __future__ import annotations

import csv
import io

from teton.fabric.model import Fabric
from teton.targets.base import Files, RenderContext, Target

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
        for n, link in enumerate(fabric.links, start=1):
            a, b = devices[link.a.device], devices[link.b.device]
            optic = "" if link.medium in ("dac", "aoc") else f"{link.speed_gbps}G-{link.medium}"
            w.writerow((f"C{n:06d}", link.kind, a.name, link.a.port, a.rack, a.ru, b.name, link.b.port, b.rack, b.ru,
                        link.speed_gbps, link.medium, optic, "" if link.zone is None else link.zone, link.rack))
        return {"cabling.csv": buf.getvalue()}


TARGET = CablingTarget()
