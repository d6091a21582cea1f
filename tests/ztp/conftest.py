"""The lab's ZTP folder, written once per session from the session's lab build (read-only, as the build is): an
inventory of every switch but one."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.ztp.helpers import cli, inventory_text, switches

LEFT_OUT = "z02-r002-rtsw"      # a SONiC rack switch whose MAC is not known yet


@dataclass(frozen=True)
class LabZtp:
    build: Path
    inventory: Path
    folder: Path
    summary: dict[str, Any]                 # `teton ztp ... --json`
    switches: dict[str, dict[str, Any]]     # every switch of the build, as fabric.json has it
    macs: dict[str, str]                    # the inventory's rows: {device: MAC, normalised}


@pytest.fixture(scope="session")
def lab_ztp(tmp_path_factory, lab_build: Path) -> LabZtp:
    every = {d["name"]: d for d in switches(lab_build)}
    assert LEFT_OUT in every
    text, macs = inventory_text([n for n in every if n != LEFT_OUT])
    work = tmp_path_factory.mktemp("ztp")
    inventory = work / "inventory.csv"
    inventory.write_bytes(b"\xef\xbb\xbf" + text.encode())     # a spreadsheet's export: a BOM, CRLF
    folder = work / "lab-ztp"
    result = cli("ztp", lab_build, "--inventory", inventory, "-o", folder, "--json")
    assert result.exit_code == 0, result.output
    return LabZtp(lab_build, inventory, folder, json.loads(result.stdout), every, macs)
