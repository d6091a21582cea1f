from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def lab_report(lab_build, tmp_path_factory) -> Path:
    """The lab's report, written once per session from the lab's build (read-only)."""
    import teton.targets  # noqa: F401  (port namings, to read the build's Fabric)
    from teton.buildfolder import BuildFolder
    from teton.report import write_report

    folder = BuildFolder.open(lab_build)
    return write_report(folder.fabric(), tmp_path_factory.mktemp("report") / "lab", folder)
