"""The EOS target validates each switch's structured config once per render: the startup-config and the ANTA catalog
are both made from that validation."""

from __future__ import annotations

from typing import Any

import pyavd
import pytest

from teton.buildfolder import ANTA_INVENTORY, anta_catalog_path, device_path
from teton.fabric.model import Fabric
from teton.targets import RenderContext
from teton.targets.eos import STARTUP, TARGET, checks
from teton.targets.eos.structured import STRUCTURED


def test_a_whole_render_validates_each_switch_once(lab_fabric: Fabric, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    checked: list[str] = []
    validate = pyavd.validate_structured_config
    teton_checks = checks.teton_checks

    def counting(cfg: dict[str, Any]) -> Any:
        calls.append(str(cfg.get("hostname")))
        return validate(cfg)

    def counting_checks(device: str, cfg: dict[str, Any], *clean: bool) -> Any:
        checked.append(device)
        return teton_checks(device, cfg, *clean)

    monkeypatch.setattr(pyavd, "validate_structured_config", counting)
    monkeypatch.setattr("teton.targets.eos.avd.teton_checks", counting_checks)
    monkeypatch.setenv("TETON_WORKERS", "1")
    files = TARGET.render(lab_fabric, RenderContext())
    names = [d.name for d in lab_fabric.switches("eos")]
    assert sorted(calls) == sorted(checked) == sorted(names) and len(names) == 16
    assert set(files) == {ANTA_INVENTORY, *(anta_catalog_path(n) for n in names),
                          *(device_path(n, f) for n in names for f in (STRUCTURED, STARTUP))}


def test_a_render_of_some_devices_writes_no_catalog(lab_fabric: Fabric) -> None:
    name = lab_fabric.switches("eos")[0].name
    files = TARGET.render(lab_fabric, RenderContext(devices=frozenset({name})))
    assert set(files) == {device_path(name, STRUCTURED), device_path(name, STARTUP)}
