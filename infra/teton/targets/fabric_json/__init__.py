"""fabric.json: the whole Fabric, intents included (`teton.fabric.serialize`), so that validate, the twin, diff and
deploy read the design from the build folder, never from the spec."""

from __future__ import annotations

from teton.buildfolder import FABRIC_JSON
from teton.fabric.model import Fabric
from teton.fabric.serialize import dump_fabric
from teton.targets.base import Files, RenderContext, Target

PATH = FABRIC_JSON


class FabricJsonTarget(Target):
    name = "fabric"
    cost_per_device = 0.00017
    summary = "fabric.json: every device, link, address, ASN and intent of the design"

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        return {PATH: dump_fabric(fabric)}


TARGET = FabricJsonTarget()
