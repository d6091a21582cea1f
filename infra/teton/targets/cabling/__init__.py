"""cabling.csv: the cable run list, one row per link, both ends with device, port, rack and rack unit.

A cable's id is its rack's name, the rack unit of the switch in that rack it plugs into, and that switch's port
(`z01-r001-45-016`: rack z01-r001, the switch at RU 45, port 16 of its model's port list): short enough for a label,
unique (no two devices share a rack unit, no two cables a port), and a function of the cable's place alone.  The
design gives every upper-tier port by the identity of what it joins (`teton.design.room`), so adding or removing a
zone, a rack, a host, an aggregator or a spine renumbers no existing cable: a pull request's cabling diff shows the
cables that change, not every row after them.
"""

from __future__ import annotations

import csv
import io

from teton.fabric.model import Fabric, Link
from teton.targets.base import Files, RenderContext, Target
from teton.targets.tokens import csv_cell

COLUMNS = ("cable_id", "kind", "a_device", "a_port", "a_rack", "a_ru", "b_device", "b_port", "b_rack", "b_ru",
           "speed_gbps", "medium", "transceiver", "zone", "rack")


def cable_id(fabric: Fabric, link: Link) -> str:
    """`<rack>-<RU>-<port>` of the switch end in the link's rack (the lower end when both are), else the lower end."""
    ends = [e for e in (link.a, link.b) if fabric.devices[e.device].rack == link.rack
            and fabric.devices[e.device].nos is not None] or [link.a]
    device = fabric.devices[ends[0].device]
    port = device.interface(ends[0].port)
    return f"{link.rack}-{device.ru:02d}-{port.ordinal if port is not None else 0:03d}"


class CablingTarget(Target):
    name = "cabling"
    summary = "cabling.csv: the cable run list (both ends, rack, RU, medium, transceiver)"

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(COLUMNS)
        devices = fabric.devices
        for link in fabric.links:
            a, b = devices[link.a.device], devices[link.b.device]
            optic = "" if link.medium in ("dac", "aoc") else f"{link.speed_gbps}G-{link.medium}"
            w.writerow([csv_cell(v) for v in (
                cable_id(fabric, link), link.kind, a.name, link.a.port, a.rack, a.ru, b.name, link.b.port, b.rack,
                b.ru, link.speed_gbps, link.medium, optic, "" if link.zone is None else link.zone, link.rack)])
        return {"cabling.csv": buf.getvalue()}


TARGET = CablingTarget()
