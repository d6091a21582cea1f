"""The design's working copy of a fabric: mutable drafts of devices that the designers wire, frozen once at the end.

Only the designers see drafts; `teton.design.design` turns them into the frozen `teton.fabric.Fabric`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from teton.catalogue.ports import port_map
from teton.fabric.model import Device, Interface, Link, Plane
from teton.spec.model import SwitchModel


@dataclass(slots=True)
class Draft:
    """A device while the design builds it: placement, numbering, and the interfaces wired so far."""

    name: str
    role: str
    model: str
    nos: str | None
    zone: int | None
    rack: str
    ru: int
    height_ru: int
    plane: Plane = "backend"
    asn: int | None = None
    loopback4: str | None = None
    loopback6: str | None = None
    router_id: str | None = None
    mgmt: str | None = None
    prefixes4: list[str] = field(default_factory=list)
    prefixes6: list[str] = field(default_factory=list)
    power_w: int = 0
    interfaces: list[Interface] = field(default_factory=list)
    attrs: dict[str, Any] = field(default_factory=dict)
    slot: int = 0                     # a switch's place in its plane's room: its loopback and management address


@dataclass(slots=True)
class DraftFabric:
    name: str
    site: str
    backend: str
    devices: dict[str, Draft] = field(default_factory=dict)      # in design order
    links: list[Link] = field(default_factory=list)
    models: dict[str, SwitchModel] = field(default_factory=dict)
    oversubscription_goals: dict[str, float] = field(default_factory=dict)
    duplicate_names: list[str] = field(default_factory=list)
    slot_room: dict[str, int] = field(default_factory=dict)      # switch places per plane ("backend", "frontend")

    def add(self, device: Draft) -> Draft:
        if device.name in self.devices:
            self.duplicate_names.append(device.name)
        else:
            self.devices[device.name] = device
        return device

    def by_role(self, role: str) -> list[Draft]:
        return [d for d in self.devices.values() if d.role == role]

    def frozen(self) -> dict[str, Device]:
        """Every device as the Fabric's frozen record, by name (sorted), before the intents are attached: switches
        get their model's full port map."""
        out: dict[str, Device] = {}
        for name in sorted(self.devices):
            d = self.devices[name]
            model = self.models.get(d.model)
            out[name] = Device(d.name, d.role, d.model, d.nos, d.zone, d.rack, d.ru, d.height_ru, d.plane, d.asn,
                               d.loopback4, d.loopback6, d.router_id, d.mgmt, tuple(d.prefixes4), tuple(d.prefixes6),
                               d.power_w, tuple(d.interfaces),
                               port_map(model, d.nos) if model is not None and d.nos is not None else (),
                               MappingProxyType(d.attrs))
        return out
