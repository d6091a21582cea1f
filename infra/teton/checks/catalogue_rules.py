"""Catalogue self-checks: a switch model must be a switch that can exist.  For the built-in models a spec uses and
for every model the spec brings (`switch_models:`) alike:

- a port's speed is its lanes times the ASIC's lane speed (a 400G port on Tomahawk4's 50G SerDes is 8 lanes);
- all the ports' lanes fit in the ASIC's SerDes;
- the ports together stay within the ASIC's capacity, unless the model says it is oversubscribed.

These checks need the model's `serdes` and `serdes_gbps`; every built-in model has them, and a user model without them
is only checked for capacity.
"""

from __future__ import annotations

from collections.abc import Iterator

from teton.catalogue import builtin_models
from teton.catalogue.boxes import boxes
from teton.fabric.roles import tier_roles
from teton.findings import Finding
from teton.spec.model import Cluster, InfinibandBackend, RoceBackend, SwitchModel


def _models(c: Cluster) -> Iterator[tuple[str, SwitchModel]]:
    """(spec path to point at, model) for each user model and each built-in model a tier uses."""
    for i, m in enumerate(c.switch_models):
        yield f"switch_models[{i}]", m
    own = {m.name for m in c.switch_models}
    builtin = builtin_models()
    tiers: list[tuple[str, str]] = []
    if isinstance(c.backend, RoceBackend):
        tiers += [(f"backend.{t}.model", getattr(c.backend, t).model) for t in tier_roles("roce")]
    elif isinstance(c.backend, InfinibandBackend):
        tiers += [(f"backend.{t}.model", getattr(getattr(c.backend, t, None), "model", ""))
                  for t in tier_roles("infiniband")]
    if c.frontend is not None:
        tiers += [("frontend.rsw.model", c.frontend.rsw.model), ("frontend.fsw.model", c.frontend.fsw.model)]
    seen: set[str] = set()
    for path, name in tiers:
        if name in builtin and name not in own and name not in seen:
            seen.add(name)
            yield path, builtin[name]


def model_consistent(c: Cluster, file: str) -> Iterator[Finding]:
    """Lanes x lane speed = port speed; lanes within the SerDes; port capacity within the ASIC's."""
    for path, m in _models(c):
        who = f"switch model {m.name!r}" + ("" if path.startswith("switch_models") else " (built-in)")
        if m.serdes_gbps is not None:
            for j, g in enumerate(m.port_groups):
                if g.lanes * m.serdes_gbps != g.speed_gbps:
                    where = f"{path}.port_groups[{j}]" if path.startswith("switch_models") else path
                    yield Finding(file, where, f"{who}: a {g.speed_gbps}G port of {g.lanes} lanes of "
                                  f"{m.serdes_gbps}G runs at {g.lanes * m.serdes_gbps}G, not {g.speed_gbps}G",
                                  rule="catalogue")
        lanes = sum(g.count * g.lanes for g in m.port_groups)
        if m.serdes is not None and lanes > m.serdes:
            yield Finding(file, path, f"{who}: its ports take {lanes} lanes but the {m.asic} has {m.serdes} SerDes",
                          rule="catalogue")
        gbps = sum(g.count * g.speed_gbps for g in m.port_groups)
        if gbps > m.asic_tbps * 1000 and not m.oversubscribed:
            yield Finding(file, path, f"{who}: its ports add up to {gbps / 1000:g} Tb/s but the {m.asic} switches "
                          f"{m.asic_tbps:g} Tb/s (set oversubscribed: true if the front panel is meant to carry more)",
                          rule="catalogue")


def box_known(c: Cluster, file: str) -> Iterator[Finding]:
    """A model's `box` names a front-panel map teton has (teton.catalogue.boxes)."""
    known = boxes()
    for path, m in _models(c):
        if m.box is not None and m.box not in known:
            yield Finding(file, f"{path}.box" if path.startswith("switch_models") else path,
                          f"switch model {m.name!r}: no front-panel map {m.box!r} (known: {', '.join(known)}); leave "
                          "box out to lay its ports out from its port groups", rule="catalogue")


CATALOGUE_RULES = (box_known, model_consistent)
