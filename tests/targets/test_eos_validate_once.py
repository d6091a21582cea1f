"""The EOS target validates each switch's structured config once per render: the startup-config and the ANTA catalog
are both made from that validation."""

from __future__ import annotations

import contextlib
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


@pytest.mark.parametrize("devices", [frozenset(), frozenset({"z01-r001-rtsw"}), None, frozenset({"z01-ctsw01"})])
def test_prepare_warms_the_templates_only_where_a_switchs_files_are_rendered(lab_fabric: Fabric, devices,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A diff renders its fabric-wide files (`devices` names none) and the files of changed devices that may not be
    EOS switches: the templar's 1.5 s of templates loaded before the workers fork only where some switch needs them."""
    warmed: list[bool] = []
    monkeypatch.setattr("teton.targets.eos.warm_templar", lambda: warmed.append(True))
    monkeypatch.setattr("teton.targets.eos.warm_catalogs", lambda: None)
    TARGET.prepare(lab_fabric, RenderContext(devices=devices))
    assert warmed == ([True] if devices is None or "z01-ctsw01" in devices else [])


def test_two_processes_making_the_catalogs_at_once_share_them(lab_fabric: Fabric, tmp_path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The two sides of a diff make the same catalogs at once (a switch's catalog is its slice's cache entry): the one
    that takes the cache's lock goes from the first switch, the other from the last back, each taking what the
    other stored, so together they validate each switch about once, not twice; the files are a lone render's."""
    import multiprocessing as mp

    from teton.pipeline.cache import RenderCache
    from teton.targets.eos import catalogs

    monkeypatch.setenv("TETON_WORKERS", "1")            # each process makes its catalogs in place, as a diff's side
    alone = catalogs.render_catalogs(lab_fabric, RenderContext(), {})
    cache = RenderCache(tmp_path / "cache", key=b"k" * 32)
    ctx = RenderContext(cache=cache)
    made = mp.Value("i", 0)
    both = mp.Barrier(2)
    validate, make = catalogs.validated_structured_config, catalogs._make

    def counting(name: str, cfg: dict[str, Any]) -> Any:
        with made.get_lock():
            made.value += 1
        return validate(name, cfg)

    def together(*args: Any) -> Any:
        both.wait(timeout=60)       # both have looked every catalog up and missed
        return make(*args)

    monkeypatch.setattr(catalogs, "validated_structured_config", counting)
    monkeypatch.setattr(catalogs, "_make", together)
    context = mp.get_context("fork")
    out = context.Queue()
    procs = [context.Process(target=lambda: out.put(catalogs.render_catalogs(lab_fabric, ctx, {}))) for _ in "ab"]
    for p in procs:
        p.start()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(timeout=60)
    n = len(lab_fabric.switches("eos"))
    assert results[0] == results[1] == alone and n == 16
    assert n <= made.value <= n + 2, made.value       # each switch once, the two meeting halfway at most twice


def test_catalogs_made_from_the_last_switch_back_give_their_errors_in_switch_order(lab_fabric: Fabric, tmp_path,
                                                                                  monkeypatch) -> None:
    """The process that finds the catalogs' lock held makes them in reverse: its error is the same as the other's."""
    from teton.findings import SpecError
    from teton.pipeline.cache import RenderCache
    from teton.targets.eos import catalogs
    from teton.targets.eos.issues import AvdIssue

    monkeypatch.setenv("TETON_WORKERS", "1")
    bad = [d.name for d in lab_fabric.switches("eos")][1::5]
    validate = catalogs.validated_structured_config

    def refusing(name: str, cfg: dict[str, Any]) -> Any:
        return ([AvdIssue(name, "hostname", f"{name} refused")], None) if name in bad else validate(name, cfg)

    monkeypatch.setattr(catalogs, "validated_structured_config", refusing)
    errors = []
    for held in (False, True):
        cache = RenderCache(tmp_path / f"cache-{held}", key=b"k" * 32)
        with cache.one_at_a_time("eos-anta") if held else contextlib.nullcontext():
            with pytest.raises(SpecError) as err:
                catalogs.render_catalogs(lab_fabric, RenderContext(cache=cache), {})
        errors.append([f.message for f in err.value.findings])
    assert errors[0] == errors[1] == [f"{n} refused" for n in bad] and len(bad) > 1
