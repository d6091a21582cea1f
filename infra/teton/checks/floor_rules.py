"""Rules over the floor (`floor:`): no rack draws more than its power budget."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from teton.fabric.bom import rack_loads
from teton.fabric.model import Fabric
from teton.findings import Finding


def rack_power(f: Fabric, file: str) -> Iterator[Finding]:
    """A rack whose devices together draw more than its budget (`floor.rack_power_kw`, or a `floor.rack_power`
    entry naming it): the message names the rack, its load and budget, and what draws it."""
    over = [r for r in rack_loads(f) if r.over]
    if not over:
        return
    what: dict[str, Counter[str]] = {r.rack: Counter() for r in over}
    watts: dict[tuple[str, str], int] = {}
    for d in f.devices.values():
        if d.rack in what:
            what[d.rack][d.model] += 1
            watts[(d.rack, d.model)] = d.power_w
    for r in over:
        assert r.budget_w is not None
        parts = ", ".join(f"{n} x {m} ({watts[(r.rack, m)] / 1000:g} kW)" for m, n in sorted(what[r.rack].items()))
        yield Finding(file, r.budget_from, f"rack {r.rack} draws {r.load_w / 1000:g} kW ({parts}), over its budget "
                      f"of {r.budget_w / 1000:g} kW by {(r.load_w - r.budget_w) / 1000:g} kW: raise the budget, "
                      "or move devices out of the rack", rule="rack-power")
