"""The front-panel port map of a switch model: every port with its NOS name, slot, position, lanes and speed."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from teton.catalogue.naming import PortNaming, PortPlace, port_naming
from teton.spec.model import SwitchModel


class Port(NamedTuple):
    """One front-panel port of a switch model, used or not."""

    name: str                  # as the NOS names it (the model's naming for it, see teton.catalogue.naming)
    ordinal: int               # position in the model's port list, 0-based
    slot: int                  # line card or port module (PIM) holding it; 1 on a fixed switch
    position: int              # port number on that slot, 1-based
    speed_gbps: int            # native speed
    lanes: tuple[int, ...]     # SerDes lanes
    form_factor: str
    breakouts: tuple[str, ...]


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
    out: list[Port] = []
    lane = 0
    index = 0
    per_slot = max(1, model.ports // model.slots)
    for group in model.port_groups:
        for _ in range(group.count):
            slot, position = model.first_slot + index // per_slot, index % per_slot + 1
            if model.slots == 1:
                slot, position = 1, index + 1
            name = naming(PortPlace(index, lane, slot, position))
            out.append(Port(name, index, slot, position, group.speed_gbps, tuple(range(lane, lane + group.lanes)),
                            group.form_factor, tuple(group.breakouts)))
            lane += group.lanes
            index += 1
    return tuple(out)
