"""Each link's medium, decided once: where a tier's `medium_down` is `auto`, the cheapest medium that joins the
link's two ends at the run's length on the floor (`teton.catalogue.media.choose`); and the tiers' `optics_down`,
by link kind, for the cables and rule `physical`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from teton.catalogue.media import choose
from teton.fabric.floor import FloorPlan, OpticRule, link_m, places
from teton.fabric.model import Device, Interface, Link
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
    """The links with every `auto` medium decided, and the devices with their interfaces' media to match.

    `choose` depends on both ends' `Electrical`, the speed and the run only: it is asked once per distinct
    (ends, speed, run), the ends keyed by identity (`Ends.electrical` gives one object per distinct end, kept alive by
    `ends` for the whole loop); the 24k RoCE's 67,000 links have a few thousand.  Each device's decided ports are
    gathered by device, so a device's interfaces are walked once with one look-up each (`_with_media`).  24k RoCE:
    0.33 s -> 0.22 s."""
    if not any(link.medium == AUTO for link in links):
        return links, devices
    where = places(plan, {d.rack for d in devices.values()})
    ends = Ends(models)
    chosen: dict[tuple[int, int, int, float], str] = {}
    decided: dict[str, dict[str, str]] = {}
    out = []
    for link in links:
        if link.medium == AUTO:
            a, b = link.a, link.b
            da, db = devices[a.device], devices[b.device]
            ea, eb, metres = ends.electrical(da, a.port), ends.electrical(db, b.port), link_m(plan, where, da, db)
            key = (id(ea), id(eb), link.speed_gbps, metres)
            medium = chosen.get(key)
            if medium is None:
                medium = chosen[key] = choose(ea, eb, link.speed_gbps, metres)
            link = link._replace(medium=medium)
            decided.setdefault(a.device, {})[a.port] = medium
            decided.setdefault(b.device, {})[b.port] = medium
        out.append(link)
    return out, {name: d if name not in decided else _with_media(d, decided[name]) for name, d in devices.items()}


_MEDIUM = Interface._fields.index("medium")


def _with_media(d: Device, decided: dict[str, str]) -> Device:
    """`d` with the media `decided` for its ports (by port name); each changed Interface is built as the tuple it is
    (what `Interface._replace(medium=...)` makes, without its keyword machinery)."""
    return replace(d, interfaces=tuple(
        i if (m := decided.get(i.name)) is None else Interface._make((*i[:_MEDIUM], m, *i[_MEDIUM + 1:]))
        for i in d.interfaces))
