"""The front-panel port map of a switch model: every port with its NOS name, its cage, lanes and speeds.

A model with a `box` (a vendor's machine-readable front-panel map, `teton.catalogue.boxes`) places its ports on that
box's cages: each port group, in order, takes the next free cages that run its speed with its lanes (a cage another
cage's top speed takes, such as a Minipack2 even cage under a 400G odd one, is no longer free); a port group the box
cannot hold takes the cages left over, and rule `physical` refuses a link on a cage that cannot run it.  A model
without a box has one cage per port (or per `ports_per_cage` ports), numbered along its slots.  Either way the
naming of every NOS spells the same place, so a cable lands on the same cage whatever NOS runs the switch.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from teton.catalogue.boxes import box_map
from teton.catalogue.media import STANDARD_GBPS
from teton.catalogue.naming import PortNaming, PortPlace, port_naming
from teton.spec.model import PortGroup, SwitchModel


class Port(NamedTuple):
    """One front-panel port of a switch model, used or not."""

    name: str                  # as the NOS names it (the model's naming for it, see teton.catalogue.naming)
    ordinal: int               # position in the model's port list, 0-based
    slot: int                  # line card or port module (PIM) holding it; 1 on a fixed switch
    position: int              # its cage's number on that slot, 1-based (as printed on the box)
    speed_gbps: int            # native speed
    lanes: tuple[int, ...]     # SerDes lanes
    form_factor: str
    breakouts: tuple[str, ...]
    cage: str = ""             # the cage's label as printed ("2/3" on a box of port modules, "17" on a fixed one)
    speeds: tuple[int, ...] = ()   # speeds the cage runs, fastest first
    lane_gbps: int = 0         # the SerDes lane rate at the native speed
    twin: bool = False         # the cage holds two logical ports (a twin-port OSFP)


def naming_of(model: SwitchModel, nos: str | None = None) -> str:
    """The naming of `model`'s ports on a switch running `nos`: the model's own for that NOS, else `port_naming`."""
    return model.nos_port_naming.get(nos, model.port_naming) if nos is not None else model.port_naming


def port_map(model: SwitchModel, nos: str | None = None) -> tuple[Port, ...]:
    """Every port of `model` as a switch running `nos` names them, in port order (one shared tuple per distinct
    model and naming)."""
    return _port_map(model.model_dump_json(), port_naming(naming_of(model, nos)))


@lru_cache(maxsize=64)
def _port_map(model_json: str, naming: PortNaming) -> tuple[Port, ...]:
    model = SwitchModel.model_validate_json(model_json)
    places = _box_places(model) if model.box else _regular_places(model)
    out: list[Port] = []
    for index, (group, slot, position, lanes, cage, speeds, twin) in enumerate(places):
        name = naming(PortPlace(index, lanes[0] if lanes else 0, slot, position))
        out.append(Port(name, index, slot, position, group.speed_gbps, lanes, group.form_factor if not model.box
                        else cage_form(model, group, cage), tuple(group.breakouts), cage, speeds,
                        group.speed_gbps // max(1, group.lanes), twin))
    return tuple(out)


Place = tuple[PortGroup, int, int, tuple[int, ...], str, tuple[int, ...], bool]


def cage_form(model: SwitchModel, group: PortGroup, label: str) -> str:
    cages = {c.label: c for c in box_map(model.box or "")}
    return cages[label].form_factor if label in cages else group.form_factor


def _regular_places(model: SwitchModel) -> list[Place]:
    out: list[Place] = []
    lane = 0
    index = 0
    cage0 = 0
    per_slot = max(1, model.ports // model.slots)
    for group in model.port_groups:
        for k in range(group.count):
            slot, position = model.first_slot + index // per_slot, index % per_slot + 1
            if model.slots == 1:
                slot, position = 1, index + 1
            cage_no = cage0 + k // group.ports_per_cage + 1
            label = f"{slot}/{position}" if model.slots > 1 else str(cage_no)
            speeds = tuple(s for s in STANDARD_GBPS if s <= group.speed_gbps)
            out.append((group, slot, position, tuple(range(lane, lane + group.lanes)), label, speeds,
                        group.ports_per_cage > 1))
            lane += group.lanes
            index += 1
        cage0 += -(-group.count // group.ports_per_cage)
    return out


def _box_places(model: SwitchModel) -> list[Place]:
    cages = box_map(model.box or "")
    taken: set[str] = set()
    used: set[int] = set()        # SerDes lanes the ports placed so far run on
    out: list[Place] = []
    for group in model.port_groups:
        fits = [c for c in cages if group.speed_gbps in c.speeds and len(c.lanes) >= group.lanes]
        for _ in range(group.count):
            cage = next((c for c in fits if c.label not in taken and used.isdisjoint(c.lanes[:group.lanes])), None)
            if cage is None:   # more ports than the box has cages for them: the cages left (rule physical refuses)
                cage = next((c for c in cages if c.label not in taken), cages[-1])
            lanes = cage.lanes[:group.lanes]
            taken.add(cage.label)
            used.update(lanes)
            out.append((group, cage.slot, cage.number, lanes, cage.label, cage.speeds, False))
    return out
