"""Shared mechanics of the designers: port allocation on a device and wiring a link between two devices."""

from __future__ import annotations

from collections import deque

from teton.catalogue.ports import Port, port_map
from teton.design.addressing import LinkNets
from teton.design.draft import Draft, DraftFabric
from teton.fabric.model import End, Interface, Link
from teton.findings import TetonError
from teton.spec.model import SwitchModel


class PortOverflow(TetonError):
    def __init__(self, device: str, model: str, needed: int, available: int, speed: int):
        super().__init__(f"{device} ({model}) needs {needed} ports of {speed}G but has {available}")
        self.device, self.model, self.needed, self.available, self.speed = device, model, needed, available, speed


Layout = tuple[list[tuple[str, int]], dict[int, list[tuple[str, int]]]]
_LAYOUTS: dict[int, tuple[tuple[Port, ...], Layout]] = {}


def _pairs(ports: list[tuple[str, int]]) -> Layout:
    """(name, speed) of every port in port order, and (name, index) of the ports of each speed in port order."""
    by_speed: dict[int, list[tuple[str, int]]] = {}
    for i, (name, speed) in enumerate(ports):
        by_speed.setdefault(speed, []).append((name, i))
    return ports, by_speed


def _layout(ports: tuple[Port, ...]) -> Layout:
    """`_pairs` of a switch's port map, worked out once per map (`port_map` hands out one shared tuple per model and
    naming; the entry holds that tuple, so its id is not reused while the entry lives).  Read-only: `Ports` copies
    what it changes."""
    hit = _LAYOUTS.get(id(ports))
    if hit is None or hit[0] is not ports:
        hit = _LAYOUTS[id(ports)] = (ports, _pairs([(p.name, p.speed_gbps) for p in ports]))
    return hit[1]


class Ports:
    """Hands out a device's ports in port order, from ports of exactly the asked speed first, then faster ones (`take`),
    or the port in a given place of that order (`at`)."""

    __slots__ = ("device", "model", "_free", "_total", "_ports", "_placed", "_orders")

    def __init__(self, device: str, model: SwitchModel | None, nic_names: list[tuple[str, int]] | None = None,
                 nos: str | None = None):
        self.device = device
        self.model = model.name if model else "host"
        ports, by_speed = _layout(port_map(model, nos)) if model else _pairs(list(nic_names or []))
        self._total = len(ports)
        self._ports = ports
        self._placed: set[int] = set()
        self._orders: dict[int, list[int]] = {}
        self._free: dict[int, deque[tuple[str, int]]] = {s: deque(free) for s, free in by_speed.items()}

    def take(self, speed: int) -> tuple[str, int]:
        """(port name, port index) of the next free port that runs at `speed`."""
        for native in sorted(s for s in self._free if s >= speed):
            queue = self._free[native]
            if queue:
                return queue.popleft()
        raise PortOverflow(self.device, self.model, self._total - self.free() + 1, self._total, speed)

    def free(self) -> int:
        return sum(len(q) for q in self._free.values())

    def at(self, speed: int, slot: int) -> tuple[str, int]:
        """(port name, port index) of the port in place `slot` of the order `take` hands out ports of `speed`
        (exactly that speed first, then faster ones), whatever was placed before: an identity's port is the same
        whether or not its neighbours exist (`teton.design.room`).  A device is wired by `take` or by `at`, never
        both; a place used twice is an overflow."""
        order = self._orders.get(speed)
        if order is None:
            order = self._orders[speed] = [i for native in sorted({s for _, s in self._ports if s >= speed})
                                           for i, (_, s) in enumerate(self._ports) if s == native]
        if slot >= len(order) or order[slot] in self._placed:
            raise PortOverflow(self.device, self.model, slot + 1, len(order), speed)
        index = order[slot]
        self._placed.add(index)
        return self._ports[index][0], index


def wire(fabric: DraftFabric, kind: str, south: Draft, sport: tuple[str, int], north: Draft, nport: tuple[str, int],
         *, speed: int, medium: str, mtu: int, nets: LinkNets | None, net_index: int, rack: str,
         zone: int | None) -> Link:
    """Connect south:sport to north:nport, addressing both ends from link net `net_index` of `nets`."""
    (n4, n6), (s4, s6) = nets.pair(net_index) if nets is not None else ((None, None), (None, None))
    north.interfaces.append(Interface(nport[0], nport[1], speed, mtu, kind, medium, south.name, sport[0],
                                      n4, n6, _host(s4), _host(s6), "down"))
    south.interfaces.append(Interface(sport[0], sport[1], speed, mtu, kind, medium, north.name, nport[0],
                                      s4, s6, _host(n4), _host(n6), "up"))
    link = Link(kind, End(south.name, sport[0], s4, s6), End(north.name, nport[0], n4, n6), speed, medium, mtu,
                zone, rack)
    fabric.links.append(link)
    return link


def _host(cidr: str | None) -> str | None:
    return None if cidr is None else cidr.split("/", 1)[0]
