"""Each link's medium, decided once: where a tier's `medium_down` is `auto`, the cheapest medium that joins the
link's two ends at the run's length on the floor (`teton.catalogue.media.choose`); and the tiers' `optics_down`,
by link kind, for the cables and rule `physical`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from teton.catalogue.media import choose
from teton.fabric.floor import FloorPlan, OpticRule, link_m, places
from teton.fabric.model import Device, Link
from teton.fabric.physical import Ends
from teton.spec.model import Cluster, SwitchModel

AUTO = "auto"


def tier_of(cluster: Cluster, role: str) -> object | None:
    """The spec's tier whose downlinks end on a switch of `role` (None: not a switch tier)."""
    section = cluster.frontend if role in ("fe-rsw", "fsw", "ssw") else cluster.backend
    return getattr(section, "rsw" if role == "fe-rsw" else role, None) if section is not None else None


def optic_rules(cluster: Cluster, links: list[Link], devices: Mapping[str, Device]) -> tuple[OpticRule, ...]:
    """The spec's `optics_down` of each link kind's upper tier."""
    out: dict[str, OpticRule] = {}
    for link in links:
        if link.kind in out:
            continue
        choice = getattr(tier_of(cluster, devices[link.b.device].role), "optics_down", None)
        if choice is not None:
            out[link.kind] = OpticRule(link.kind, choice.pmd or "", choice.cord or "", choice.connector or "")
    return tuple(sorted(out.values()))


def resolve_media(links: list[Link], devices: dict[str, Device], models: Mapping[str, SwitchModel],
                  plan: FloorPlan) -> tuple[list[Link], dict[str, Device]]:
    """The links with every `auto` medium decided, and the devices with their interfaces' media to match."""
    if not any(link.medium == AUTO for link in links):
        return links, devices
    where = places(plan, {d.rack for d in devices.values()})
    ends = Ends(models)
    decided: dict[tuple[str, str], str] = {}
    out = []
    for link in links:
        if link.medium == AUTO:
            da, db = devices[link.a.device], devices[link.b.device]
            medium = choose(ends.electrical(da, link.a.port), ends.electrical(db, link.b.port), link.speed_gbps,
                            link_m(plan, where, da, db))
            link = link._replace(medium=medium)
            decided[(link.a.device, link.a.port)] = decided[(link.b.device, link.b.port)] = medium
        out.append(link)
    touched = {name for name, _ in decided}
    return out, {name: d if name not in touched else _with_media(d, decided) for name, d in devices.items()}


def _with_media(d: Device, decided: dict[tuple[str, str], str]) -> Device:
    return replace(d, interfaces=tuple(i._replace(medium=decided[(d.name, i.name)]) if (d.name, i.name) in decided
                                       else i for i in d.interfaces))
