"""What `teton plan` shows of a designed spec: the fabric's figures (`teton.fabric.plan`), its room to grow (each
dimension's room and every address pool's blocks: held, taken at the room, taken now) and its bill of materials."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from teton.catalogue import catalogue_for
from teton.design.capacity import room_report
from teton.design.room import room_of
from teton.fabric.bom import bom
from teton.fabric.plan import plan

if TYPE_CHECKING:
    from teton.pipeline import Designed


def plan_figures(designed: Designed) -> dict[str, Any]:
    """Exactly what `teton plan --json` prints: the plan's figures with `room` and `bom` added."""
    figures = plan(designed.fabric)
    figures["room"] = room_report(designed.cluster, room_of(designed.cluster, catalogue_for(designed.cluster)),
                                  designed.fabric)
    figures["bom"] = bom(designed.fabric)
    return figures
