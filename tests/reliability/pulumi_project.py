"""A throwaway copy of the checkout's Pulumi project for tests that run the real engine (scripts/setup builds it):
Pulumi.yaml copied, infra/, scripts/, inventory/, playbooks/ and .venv linked, a HOME of its own (the engine cache
linked into it), so a user's relative paths resolve in it exactly as in the checkout and nothing leaves the folder."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.helpers import ROOT
from teton.deploy.engine import ENGINE_VERSION

ENGINE_CACHE = Path(os.environ.get("TETON_PULUMI_CACHE", Path.home() / ".cache/teton/pulumi"))
LINKED = ("infra", "scripts", "inventory", "playbooks", ".venv")


def engine_or_fail() -> Path:
    """The engine scripts/setup built: a test that needs it fails when it is missing (it never skips silently)."""
    engine = ENGINE_CACHE / ENGINE_VERSION / "bin" / "pulumi"
    if not engine.is_file():
        pytest.fail(f"no Pulumi engine at {engine}: run scripts/setup (scripts/build-pulumi-engine)")
    return engine


def make_project(tmp: Path) -> tuple[Path, dict[str, str]]:
    """(the project folder, the environment a user's shell would have in it)."""
    project = tmp / "project"
    project.mkdir()
    shutil.copy(ROOT / "Pulumi.yaml", project / "Pulumi.yaml")
    for name in LINKED:
        (project / name).symlink_to(ROOT / name)
    home = tmp / "home"
    (home / ".cache" / "teton").mkdir(parents=True)
    (home / ".cache" / "teton" / "pulumi").symlink_to(ENGINE_CACHE)
    render_cache = Path.home() / ".cache" / "teton" / "render"
    if render_cache.is_dir():
        (home / ".cache" / "teton" / "render").symlink_to(render_cache)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PULUMI_")}
    env.update({"HOME": str(home), "PULUMI_SKIP_UPDATE_CHECK": "true",
                "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true", "PYTHONPATH": f"{ROOT / 'infra'}:{ROOT}"})
    return project, env
