"""Render targets: one module per target, each `render(fabric, ctx) -> {relative path: content}`.

A new target (a NOS, OpenSM files, Ansible inventory ...) is one new module listed in TARGETS.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType

from teton.design.fabric import Fabric
from teton.render import cabling, eos, fabric_json, hosts, sonic
from teton.render.artifacts import Files
from teton.render.context import RenderContext

TARGETS: tuple[ModuleType, ...] = (fabric_json, cabling, hosts, sonic, eos)


TARGET_NAMES = tuple(t.NAME for t in TARGETS)


def render_all(fabric: Fabric, ctx: RenderContext, progress: Callable[[str], None] | None = None,
               only: tuple[str, ...] | None = None) -> Files:
    """Every target's files (or only the named targets'), keyed by path relative to the build folder."""
    files: Files = {}
    for target in TARGETS:
        if only and target.NAME not in only:
            continue
        if progress:
            progress(target.NAME)
        files.update(target.render(fabric, ctx))
    return files
