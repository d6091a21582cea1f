"""Expected LLDP neighbours: for every Ethernet port of every device, the system name and port id the far end
announces, as its NOS announces them, and the cable between them.

What each end announces (and so what the near end must see):

- a switch: its hostname as system name; as port id what its NOS's target registers
  (`teton.catalogue.naming.lldp_port_id`): SONiC's lldpmgrd announces the port's alias (`portidsubtype local
  <alias>`), EOS the interface name (no registration: the port's name);
- a server (GPU host, storage server, service host): its name, and the interface name as port id: the `lldpd` role
  writes `configure lldp portidsubtype ifname` and `configure system hostname <name>` (the NICs have their teton
  names from the `.link` files of `host_nics` and `backend_nics`).

InfiniBand links carry no LLDP (the subnet manager sees them: `teton ib verify`), so they have no entry here.  The
SONiC target writes these as `DEVICE_NEIGHBOR` and `DEVICE_NEIGHBOR_METADATA`, the EOS target into interface
descriptions, the Ansible target as each server's `teton_lldp`, and the cabling target as `cabling/neighbours.json`,
which `teton verify cabling` compares with what the devices saw.  A device's expected neighbours are part of its
slice (`teton.fabric.slice`): a per-device target that writes them is rendered again when a neighbour's port id or a
cable id changes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from itertools import chain
from typing import NamedTuple

import orjson

from teton.catalogue.naming import PortPlace, lldp_port_id
from teton.catalogue.ports import Port
from teton.fabric.cables import cable_end, cable_label, kept_cables
from teton.fabric.model import Device, Fabric
from teton.fabric.roles import LINK_KINDS

LLDP_KINDS = frozenset(k.name for k in LINK_KINDS if k.network != "infiniband")
NEIGHBOURS_FILE = "cabling/neighbours.json"


class Neighbour(NamedTuple):
    port: str          # the local port, as the device names it
    local_id: str      # the local port as this device announces it (what the far end sees)
    system: str        # the far end's system name
    port_id: str       # the far end's port, as its NOS announces it
    peer: str          # the far end's device
    peer_port: str     # the far end's port, as that device names it
    cable: str
    kind: str


class _Index:
    """Per fabric (once per process): the cable id of every LLDP link end, each switch's port ids as announced.

    The cable id is `teton.fabric.cables.cable_id`'s, from the same end (`cable_end`) with the port ordinal looked up
    once.  A switch's port ids are spelled once per port map: the switches of one model share their `ports` tuple
    (the 24k's 3,337 switches have 3), and the ids are a function of the NOS's spelling, each port's name and place
    and the model's slots, so a switch whose `ports` is the very tuple (`is`) of an already spelled switch of the same
    NOS and model gets that switch's ids (0.2 s of CPU for the 24k, per process that asks).  Where this process
    made the fabric's cables already (`kept_cables`: the cabling target's), their ids are taken: `_cables` names
    each link's cable as here (the same end, the same ordinals), one cable per link in link order (the 24k: 0.2 s ->
    0.04 s)."""

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.cables: dict[tuple[str, str], str] = {}
        kept = kept_cables(fabric)
        if kept is not None and len(kept) == len(fabric.links):
            for link, c in zip(fabric.links, kept, strict=True):
                if link.kind in LLDP_KINDS:
                    self.cables[(link.a.device, link.a.port)] = self.cables[(link.b.device, link.b.port)] = c.id
        else:
            ordinals = {(d.name, i.name): i.ordinal for d in fabric.devices.values() for i in d.interfaces}
            for link in fabric.links:
                if link.kind not in LLDP_KINDS:
                    continue
                own, device = cable_end(fabric, link)
                cid = cable_label(link, device, ordinals.get((own.device, own.port), 0))
                self.cables[(link.a.device, link.a.port)] = self.cables[(link.b.device, link.b.port)] = cid
        self._ids: dict[str, dict[str, str]] = {}
        self._by_ports: dict[tuple[int, str, str], tuple[tuple[Port, ...], dict[str, str]]] = {}

    def port_id(self, device: Device, port: str) -> str:
        """The port id `device` announces for its port `port`."""
        if device.nos is None:
            return port
        ids = self._ids.get(device.name)
        if ids is None:
            ids = self._ids[device.name] = self._spelled(device)
        return ids.get(port, port)

    def _spelled(self, device: Device) -> dict[str, str]:
        """{port name: port id} of every port of the switch `device` (shared by the switches of one port map)."""
        assert device.nos is not None
        key = (id(device.ports), device.nos, device.model)
        hit = self._by_ports.get(key)
        if hit is not None and hit[0] is device.ports:
            return hit[1]
        spell = lldp_port_id(device.nos)
        model = self.fabric.models.get(device.model)
        ids = {} if spell is None or model is None else {
            p.name: spell(p.name, PortPlace(p.ordinal, p.lanes[0] if p.lanes else 0, p.slot, p.position),
                          model.slots) for p in device.ports}
        self._by_ports[key] = (device.ports, ids)
        return ids


_INDEX: list[_Index] = []
_SEEDED: list[tuple[Fabric, str, tuple[Neighbour, ...]]] = []


def _index(fabric: Fabric) -> _Index:
    """The index of `fabric` (the last two fabrics' are kept: a diff compares two)."""
    for index in _INDEX:
        if index.fabric is fabric:
            return index
    _INDEX[:] = [*_INDEX[-1:], _Index(fabric)]
    return _INDEX[-1]


def seed(fabric: Fabric, device: str, neighbours: tuple[Neighbour, ...]) -> None:
    """`expected(fabric, device)` is `neighbours` from now on: a slice's Fabric (`teton.fabric.slice.slice_fabric`)
    has no links to compute them from (the last few seeds are kept)."""
    _SEEDED[:] = [*_SEEDED[-7:], (fabric, device, neighbours)]


def announced_port(fabric: Fabric, device: Device, port: str) -> str:
    """The port id `device` announces for its port `port`."""
    return _index(fabric).port_id(device, port)


def expected(fabric: Fabric, device: Device) -> list[Neighbour]:
    """The neighbour each LLDP port of `device` should see, in port order."""
    for f, name, found in _SEEDED:
        if f is fabric and name == device.name:
            return list(found)
    index = _index(fabric)
    out = []
    for i in sorted(device.interfaces, key=lambda i: i.ordinal):
        if i.kind not in LLDP_KINDS:
            continue
        peer = fabric.device(i.peer)
        out.append(Neighbour(i.name, index.port_id(device, i.name), peer.name, index.port_id(peer, i.peer_port),
                             peer.name, i.peer_port, index.cables.get((device.name, i.name), ""), i.kind))
    return out


def all_expected(fabric: Fabric) -> dict[str, list[Neighbour]]:
    """Every device with an LLDP port, by name."""
    out = {}
    for name, d in fabric.devices.items():
        found = expected(fabric, d)
        if found:
            out[name] = found
    return out


def neighbours_json(fabric: Fabric) -> str:
    """`cabling/neighbours.json`: {device: {port: {port_id, neighbour: {system, port_id}, peer, peer_port, cable,
    kind}}}, one device per line."""
    lines = []
    for name, found in sorted(all_expected(fabric).items()):
        ports = {n.port: {"port_id": n.local_id, "neighbour": {"system": n.system, "port_id": n.port_id},
                          "peer": n.peer, "peer_port": n.peer_port, "cable": n.cable, "kind": n.kind}
                 for n in found}
        lines.append(f"{json.dumps(name)}: {_ports_json(found, ports)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _ports_json(found: list[Neighbour], ports: Mapping[str, object]) -> str:
    """`json.dumps(ports, sort_keys=True, separators=(",", ":"))`, the same text, by orjson where that is proven the
    same (5x faster: 0.4 s of the 24k's 0.6 s for neighbours.json).

    `ports` is made of dicts (fixed keys) and the fields of the neighbours `found`; where every field is exactly a
    str, both write objects with the keys in code point order (orjson sorts by the UTF-8 bytes, the same order) and
    strings in quotes, and differ only in escaping: json escapes the quote, backslash and control characters (as
    orjson does, with a backslash), DEL and everything beyond ASCII (orjson writes these raw).  So orjson's text with
    no backslash, only ASCII and no DEL is json's; else (or where orjson refuses: a lone surrogate) json writes it.
    tests/fabric/test_neighbours_json.py compares both on random strings."""
    if set(map(type, chain.from_iterable(found))) == {str}:
        try:
            raw = orjson.dumps(ports, option=orjson.OPT_SORT_KEYS)
        except TypeError:       # orjson.JSONEncodeError is a TypeError
            raw = b"\\"
        if raw.isascii() and b"\\" not in raw and b"\x7f" not in raw:
            return raw.decode()
    return json.dumps(ports, sort_keys=True, separators=(",", ":"))


def load_neighbours(text: str) -> dict[str, dict[str, Neighbour]]:
    """neighbours.json back into {device: {port: Neighbour}} (ValueError, KeyError or TypeError if it is not what
    `neighbours_json` writes)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise TypeError("not an object of devices")
    return {str(dev): {str(p): Neighbour(str(p), str(v["port_id"]), str(v["neighbour"]["system"]),
                                         str(v["neighbour"]["port_id"]), str(v["peer"]), str(v["peer_port"]),
                                         str(v["cable"]), str(v["kind"])) for p, v in ports.items()}
            for dev, ports in data.items()}
