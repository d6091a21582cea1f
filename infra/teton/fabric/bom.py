"""The bill of materials of a fabric: what to order and what each rack's PDUs carry, all from the Fabric.

Switches per model, transceivers per part class, DACs and AOCs per length, fibre patch cords per type and length (all
from `teton.fabric.cables`, so they equal the run list's and the plan's), NICs per speed and network, GPUs per model,
servers per platform and role, and every rack's load against its budget (`floor.rack_power_kw` and
`floor.rack_power`; rule `rack-power` fails a rack over it).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, NamedTuple

from teton.fabric.cables import Cable, cables, counts
from teton.fabric.floor import FloorPlan, places
from teton.fabric.model import Fabric
from teton.fabric.roles import LINK_KINDS, server_roles

NETWORK_OF_KIND = {k.name: k.network for k in LINK_KINDS}
NIC_NETWORK = {"roce": "backend", "infiniband": "backend", "frontend": "front end"}


class RackLoad(NamedTuple):
    rack: str
    row: int
    position: int
    devices: int
    load_w: int
    budget_w: int | None
    budget_from: str          # the spec path of the budget ("" when the rack has none)

    @property
    def over(self) -> bool:
        return self.budget_w is not None and self.load_w > self.budget_w


def rack_loads(f: Fabric) -> list[RackLoad]:
    """Every rack's load (the sum of its devices' power) and budget, by rack name."""
    plan = f.floor or FloorPlan()
    load: Counter[str] = Counter()
    n: Counter[str] = Counter()
    for d in f.devices.values():
        load[d.rack] += d.power_w
        n[d.rack] += 1
    where = places(plan, set(load))
    out = []
    for rack in sorted(load):
        budget, source = plan.budget_w(rack)
        out.append(RackLoad(rack, where[rack].row, where[rack].position, n[rack], load[rack], budget, source))
    return out


def bom(f: Fabric, found: list[Cable] | None = None) -> dict[str, Any]:
    """The bill of materials as plain data (what `plan --json` prints under "bom")."""
    found = cables(f) if found is None else found
    parts = counts(found)
    servers = server_roles()
    switches: Counter[str] = Counter()
    gpus: Counter[str] = Counter()
    platforms: Counter[str] = Counter()
    nics: Counter[str] = Counter()
    for d in f.devices.values():
        if d.role in servers:
            platforms[f"{d.model} ({d.role})"] += 1
            if d.attrs.get("gpus"):
                gpus[str(d.attrs.get("gpu_model", "gpu"))] += int(d.attrs["gpus"])
            for i in d.interfaces:
                nics[f"{i.speed_gbps}G {NIC_NETWORK.get(NETWORK_OF_KIND.get(i.kind, ''), 'other')} NIC port"] += 1
        else:
            model = f.models.get(d.model)
            switches[f"{d.model} ({model.vendor})" if model is not None else d.model] += 1
    racks = rack_loads(f)
    plan = f.floor or FloorPlan()
    numbers = dict(plan.parts)
    media_w = sum(parts.specs.get(p, (0.0, 0.0))[1] * n for group in (parts.optics, parts.aecs)
                  for p, n in group.items())
    return {
        "switches": dict(sorted(switches.items())),
        "optics": parts.optics,
        "dacs": parts.dacs,
        "aecs": parts.aecs,
        "aocs": parts.aocs,
        "fibres": parts.fibres,
        "nics": dict(sorted(nics.items())),
        "gpus": dict(sorted(gpus.items())),
        "servers": dict(sorted(platforms.items())),
        "parts": {p: {"reach_m": r, "power_w": w, "part_number": numbers.get(_class(p), "")}
                  for p, (r, w) in parts.specs.items()},
        "media_power_kw": round(media_w / 1000, 1),
        "part_numbers": numbers,
        "power": {"total_kw": round(sum(r.load_w for r in racks) / 1000, 1),
                  "racks": len(racks), "budgeted": sum(1 for r in racks if r.budget_w is not None),
                  "over_budget": [{"rack": r.rack, "load_w": r.load_w, "budget_w": r.budget_w,
                                   "budget": r.budget_from} for r in racks if r.over],
                  "peak_rack": max(({"rack": r.rack, "load_w": r.load_w} for r in racks),
                                   key=lambda x: (x["load_w"], x["rack"]), default=None)},
    }


BOM_COLUMNS = ("category", "item", "quantity", "part_number", "reach_m", "power_w_each")
CATEGORIES = ("switches", "optics", "dacs", "aecs", "aocs", "fibres", "nics", "gpus", "servers")


def _class(part: str) -> str:
    """A part's class without its length ("400G QSFP-DD 8x50G to OSFP 4x100G AEC, 2.5 m": the part before ", ")."""
    return part.split(", ")[0]
RACK_COLUMNS = ("rack", "row", "position", "devices", "load_w", "budget_w", "headroom_w", "budget", "over_budget")


def bom_rows(b: dict[str, Any]) -> list[list[Any]]:
    """The BOM as (category, item, quantity, the site's part number, reach, power of one) rows, in category
    order; the last three are blank where they do not apply."""
    rows: list[list[Any]] = []
    numbers = b.get("part_numbers", {})
    for category in CATEGORIES:
        for item, qty in b[category].items():
            spec = b["parts"].get(item)
            rows.append([category, item, qty, spec["part_number"] if spec else numbers.get(_class(item), ""),
                         "" if not spec or not spec["reach_m"] else f"{spec['reach_m']:g}",
                         "" if not spec or not spec["power_w"] else f"{spec['power_w']:g}"])
    return rows


def rack_rows(racks: list[RackLoad]) -> list[list[Any]]:
    return [[r.rack, r.row, r.position, r.devices, r.load_w, "" if r.budget_w is None else r.budget_w,
             "" if r.budget_w is None else r.budget_w - r.load_w, r.budget_from, "yes" if r.over else ""]
            for r in racks]
