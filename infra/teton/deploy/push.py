"""What a push sends to one device: its files from the build folder, with every secret reference resolved the way
its NOS expects (`Target.resolve_secrets`).  Held in memory for the push only: the build folder, the logs and the
Pulumi state carry references, never values."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from teton import targets
from teton.buildfolder import BuildFolder, device_of, device_path
from teton.findings import TetonError
from teton.targets import Files


def pushable_files(build: BuildFolder | Path, device: str, secrets: Mapping[str, str]) -> Files:
    """{path: text} of `device`'s files in the build folder `build`, secrets resolved for its NOS."""
    build = build if isinstance(build, BuildFolder) else BuildFolder(build)
    fabric = build.fabric()
    d = fabric.devices.get(device)
    if d is None or d.nos is None:
        raise TetonError(f"{device!r} is no switch of the build in {build}")
    target = targets.nos_target(d.nos)
    if target is None:
        raise TetonError(f"no target renders {d.nos!r}")
    files = {device_path(device, name): text for name, text in build.device_files(device).items()}
    try:
        return target.resolve_secrets(files, secrets)
    except KeyError as exc:
        raise TetonError(f"{device}: {exc.args[0]}") from None


def resolve_files(nos: str, files: Files, secrets: Mapping[str, str]) -> Files:
    """`files` ({path: text} of one device, paths as in the build folder) resolved as `nos` expects, without
    reading the build's Fabric (what a deploy of thousands of devices calls, once per device)."""
    target = targets.nos_target(nos)
    if target is None:
        raise TetonError(f"no target renders {nos!r}")
    try:
        return target.resolve_secrets(files, secrets)
    except KeyError as exc:
        device = (device_of(next(iter(files))) if files else None) or "?"
        raise TetonError(f"{device}: {exc.args[0]}") from None
