"""Rules over `racks:`, the compute racks that differ from the others: each names a rack of the spec and asks for no
more hosts than `hosts_per_rack`, which sizes every rack switch's ports and address block."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from teton.findings import Finding
from teton.spec.model import Cluster, RoceBackend

_NAME = re.compile(r"^z([0-9]{2})-r([0-9]{3})$")


def rack_overrides(c: Cluster, file: str) -> Iterator[Finding]:
    """A rack of `racks:` that is not a compute rack of the spec, has more hosts than hosts_per_rack, or is given
    with a backend whose design does not read it."""
    if c.racks and not isinstance(c.backend, RoceBackend):
        yield Finding(file, "racks", f"per-rack host counts are designed for the RoCE backend only; the "
                      f"{c.backend.kind} backend gives every rack hosts_per_rack hosts", rule="racks")
        return
    for name, rack in sorted(c.racks.items()):
        path = f"racks.{name}"
        m = _NAME.match(name)
        zone, index = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
        if not (1 <= zone <= c.zones and 1 <= index <= c.racks_per_zone):
            yield Finding(file, path, f"{name} is not a compute rack of this cluster (zones z01-z{c.zones:02d}, "
                          f"racks r001-r{c.racks_per_zone:03d} in each)", rule="racks")
        elif rack.hosts > c.hosts_per_rack:
            yield Finding(file, f"{path}.hosts", f"{rack.hosts} hosts in {name}, but hosts_per_rack is "
                          f"{c.hosts_per_rack}: it sizes every rack switch's host ports and address block, so a "
                          "rack may have fewer hosts, not more", rule="racks")


RACK_RULES: tuple[Callable[[Cluster, str], Iterator[Finding]], ...] = (rack_overrides,)
