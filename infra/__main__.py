"""The Pulumi program: a thin face like the CLI.

It reads the spec named in the stack config (`teton:spec`), designs and renders it, and will hand the artifacts to the
deploy layer (one resource per device) when the Pulumi issue lands.  Today it exports the plan's figures only.
"""

from __future__ import annotations

import pulumi  # type: ignore[import-not-found]

from teton.build import load_and_design
from teton.fabric.plan import plan

config = pulumi.Config("teton")
designed = load_and_design(config.require("spec"))
pulumi.export("plan", plan(designed.fabric))
