"""Both ends of a link as the media model sees them: a switch's cage from its box's port map, a server's NIC port
from its platform (`teton.catalogue.media.Electrical`), and the spec path of the tier whose downlinks a link is."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from teton.catalogue.hosts import nic_port
from teton.catalogue.media import Electrical, rates_up_to
from teton.catalogue.ports import Port, port_map
from teton.fabric.roles import BY_NAME, server_roles
from teton.spec.model import SwitchModel

_SERVERS = server_roles()


class Placed(Protocol):
    @property
    def role(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def nos(self) -> str | None: ...


def tier_path(role: str) -> str:
    """The spec path of the tier a switch of `role` belongs to (fe-rsw: frontend.rsw, rtsw: backend.rtsw)."""
    r = BY_NAME.get(role)
    if role == "fe-rsw":
        return "frontend.rsw"
    return f"{'frontend' if r is not None and r.network == 'frontend' else 'backend'}.{role}"


def switch_end(port: Port) -> Electrical:
    return Electrical(port.form_factor, len(port.lanes), rates_up_to(port.lane_gbps), port.speeds, port.twin,
                      port.cage)


class Ends:
    """Each device's ends by port name (a switch's port map per model and NOS is read once)."""

    def __init__(self, models: Mapping[str, SwitchModel]):
        self.models = models
        self._ports: dict[tuple[str, str | None], dict[str, Port]] = {}
        self._ends: dict[tuple[bool, str, str | None, str], Electrical] = {}    # (server?, model, nos, port name)
        self._both: dict[tuple[bool, str, str | None, str], tuple[Electrical, Port | None]] = {}

    def port(self, d: Placed, name: str) -> Port | None:
        model = self.models.get(d.model) if d.role not in _SERVERS else None
        if model is None:
            return None
        key = (d.model, d.nos)
        ports = self._ports.get(key)
        if ports is None:
            ports = self._ports[key] = {p.name: p for p in port_map(model, d.nos)}
        return ports.get(name)

    def electrical(self, d: Placed, name: str) -> Electrical:
        """The end `d`:`name`: its cage, or its platform's NIC port (each asked for once: an Electrical is a value)."""
        key = (d.role in _SERVERS, d.model, d.nos, name)
        end = self._ends.get(key)
        if end is None:
            port = self.port(d, name)
            end = self._ends[key] = switch_end(port) if port is not None else nic_port(d.model)
        return end

    def both(self, d: Placed, name: str) -> tuple[Electrical, Port | None]:
        """(`electrical`, `port`) of `d`:`name` in one look-up (both follow from the same key: a server's port is
        None), for a loop over every end of every link."""
        key = (d.role in _SERVERS, d.model, d.nos, name)
        found = self._both.get(key)
        if found is None:
            found = self._both[key] = (self.electrical(d, name), self.port(d, name))
        return found
