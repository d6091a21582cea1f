"""Front-panel port names of a switch model, in the naming its NOS uses."""

from __future__ import annotations

from teton.spec.model import SwitchModel


def port_names(model: SwitchModel) -> list[tuple[str, int, int]]:
    """[(name, speed_gbps, first_lane)] for every port of `model`, in port order."""
    out: list[tuple[str, int, int]] = []
    lane = 0
    index = 0
    total = model.ports
    per_slot = max(1, total // model.slots)
    for group in model.port_groups:
        for _ in range(group.count):
            if model.port_naming == "sonic":
                name = f"Ethernet{lane}"
            elif model.port_naming == "eos-modular":
                name = f"Ethernet{model.first_slot + index // per_slot}/{index % per_slot + 1}/1"
            elif model.port_naming == "eos-fixed":
                name = f"Ethernet{index + 1}/1"
            else:  # ib: cage/port pairs of a QM9700, "1/<cage>/<n>"
                name = f"1/{index // 2 + 1}/{index % 2 + 1}"
            out.append((name, group.speed_gbps, lane))
            lane += group.lanes
            index += 1
    return out
