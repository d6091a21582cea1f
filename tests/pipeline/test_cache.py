"""The incremental render: devices whose inputs did not change come from the cache, output stays byte-identical with
and without it, and the cache is safe to delete, damage or outgrow (a new target version)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, write_spec
from teton import targets
from teton.fabric import Device, Fabric
from teton.findings import Finding, SpecError
from teton.pipeline import build, load_and_design
from teton.pipeline.cache import ENV_DIR, ENV_SWITCH, RenderCache, code_fingerprint
from teton.targets import DeviceTarget, Files, RenderContext


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def spec(tmp_path: Path, lab_data: dict) -> Path:
    """The lab with 6 racks per zone (one rack less one host stays within the oversubscription targets)."""
    lab_data["racks_per_zone"] = 6
    lab_data["backend"]["addressing"]["ipv4"]["host_links"] = "10.64.0.0/22"
    lab_data["backend"]["ctsw"]["oversubscription"] = 3.0
    return write_spec(tmp_path, lab_data, "lab6.yaml")


def switches(folder: Path) -> int:
    return len([p for p in (folder / "devices").iterdir() if p.is_dir()])


def cache_entries(folder: Path) -> int:
    """Cache entries of a render: one per switch, and one per EOS switch's ANTA catalog (`anta/<switch>.yml`, kept
    by the switch's slice digest as its files are)."""
    return switches(folder) + len([p for p in (folder / "anta").iterdir() if p.name != "inventory.yml"])


def test_output_is_byte_identical_without_the_cache_cold_warm_and_replayed(tmp_path, spec):
    cache = RenderCache(tmp_path / "cache")
    plain = build(spec, tmp_path / "plain")
    cold = build(spec, tmp_path / "cold", cache=cache)
    assert cache.stats()["misses"] == cache.stats()["stored"] == cache_entries(plain.path) > switches(plain.path)
    assert not cold.replayed
    cache.reset_stats()
    replayed = build(spec, tmp_path / "replayed", cache=cache)      # same spec: its record, no design
    # the catalogs are fabric-wide files: replayed with the record's
    assert replayed.replayed and cache.stats()["misses"] == 0 and cache.stats()["hits"] == switches(plain.path)
    for records in (cache.root / "v1" / "records").iterdir():          # no record: designed, every device a hit
        for r in records.iterdir():
            r.unlink()
    cache.reset_stats()
    warm = build(spec, tmp_path / "warm", cache=cache)
    assert not warm.replayed and cache.stats()["misses"] == 0 and cache.stats()["hits"] == cache_entries(plain.path)
    expected = tree(plain.path)
    for other in (cold, replayed, warm):
        assert tree(other.path) == expected
    assert (replayed.figures, replayed.files) == (plain.figures, plain.files)


def test_another_hash_seed_in_another_process_reads_the_same_cache_and_writes_the_same_bytes(tmp_path, spec):
    code_fingerprint.cache_clear()      # this process's fingerprint of the code, as the child will see it
    cache = tmp_path / "cache"
    plain = build(spec, tmp_path / "plain")
    build(spec, tmp_path / "first", cache=RenderCache(cache))
    env = {**os.environ, ENV_DIR: str(cache), "PYTHONHASHSEED": "4242"}
    env.pop(ENV_SWITCH, None)
    done = subprocess.run([sys.executable, "-m", "teton.cli", "render", str(spec), "-o", str(tmp_path / "second")],
                          env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "from the cache" in done.stderr and "replayed" in done.stderr
    assert tree(tmp_path / "second") == tree(plain.path)


def test_after_a_one_rack_change_only_that_racks_switches_are_rendered_again(tmp_path, spec, lab_data):
    cache = RenderCache(tmp_path / "cache")
    build(spec, tmp_path / "before", cache=cache)
    lab_data.update(racks_per_zone=6, racks={"z02-r004": {"hosts": 1}})
    lab_data["backend"]["addressing"]["ipv4"]["host_links"] = "10.64.0.0/22"
    lab_data["backend"]["ctsw"]["oversubscription"] = 3.0
    changed = write_spec(tmp_path, lab_data, "lab6-rack.yaml")
    cache.reset_stats()
    after = build(changed, tmp_path / "after", cache=cache)
    rack_switches = {"z02-r004-rtsw", "z02-r004-frsw"}
    assert cache.stats()["misses"] == len(rack_switches)                     # no EOS switch's catalog changed
    assert cache.stats()["hits"] == cache_entries(after.path) - len(rack_switches)
    assert tree(after.path) == tree(build(changed, tmp_path / "plain").path)
    before, now = tree(tmp_path / "before"), tree(after.path)
    differing = {rel.split("/")[1] for rel in before.keys() | now.keys()
                 if rel.startswith("devices/") and before.get(rel) != now.get(rel)}
    assert differing == rack_switches


def test_a_new_target_version_is_never_served_old_entries(tmp_path, spec, monkeypatch):
    cache = RenderCache(tmp_path / "cache")
    build(spec, tmp_path / "a", cache=cache)
    eos = targets.get("eos")
    monkeypatch.setattr(type(eos), "version", f"{eos.version}-next")
    cache.reset_stats()
    build(spec, tmp_path / "b", cache=cache)
    assert cache.stats()["misses"] == len(eos.devices(load_and_design(spec).fabric)) > 0


def test_a_damaged_or_deleted_cache_is_only_slower(tmp_path, spec):
    cache = RenderCache(tmp_path / "cache")
    plain = build(spec, tmp_path / "plain", cache=None)
    build(spec, tmp_path / "a", cache=cache)
    entries = sorted((cache.root / "v1" / "devices").rglob("*"))
    entries = [p for p in entries if p.is_file()]
    entries[0].write_bytes(entries[0].read_bytes()[:-10])                       # truncated
    data = bytearray(entries[1].read_bytes())
    data[-1] ^= 0xFF                                                             # one flipped byte
    entries[1].write_bytes(bytes(data))
    entries[2].write_bytes(b"not an entry")
    for blob in (cache.root / "v1" / "blobs").rglob("*"):
        if blob.is_file():
            blob.write_text("damaged")
            break
    cache.reset_stats()
    damaged = build(spec, tmp_path / "b", cache=cache)
    assert not damaged.replayed                                                  # a blob or entry failed its check
    assert cache.stats()["misses"] == 3
    assert tree(damaged.path) == tree(plain.path)
    import shutil

    shutil.rmtree(cache.root)
    cache.reset_stats()
    assert tree(build(spec, tmp_path / "c", cache=cache).path) == tree(plain.path)
    assert cache.stats()["misses"] == cache_entries(plain.path)


def test_the_cache_is_turned_off_by_env_or_flag_and_moved_by_env(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_DIR, str(tmp_path / "here"))
    monkeypatch.delenv(ENV_SWITCH, raising=False)
    on = RenderCache.from_env()
    assert on is not None and on.root == tmp_path / "here"
    monkeypatch.setenv(ENV_SWITCH, "off")
    assert RenderCache.from_env() is None


class Flaky(DeviceTarget):
    """Fails its vendor check on one switch: what fails validation must never be stored."""

    name = "flaky"
    summary = "test"
    nos = "sonic"
    files = ("flaky.txt",)

    def render_device(self, fabric: Fabric, device: Device, ctx: RenderContext,
                      state: Any) -> tuple[Files, list[Finding]]:
        bad = device.name == "z01-r001-rtsw"
        return ({self.path(device.name, "flaky.txt"): device.name + "\n"},
                [Finding("flaky.txt", "", "refused by the vendor")] if bad else [])


def test_files_that_fail_validation_are_not_stored(tmp_path, spec):
    cache = RenderCache(tmp_path / "cache")
    flaky = targets.register(Flaky())
    try:
        with pytest.raises(SpecError, match="refused by the vendor"):
            build(spec, tmp_path / "a", cache=cache)
        fabric = load_and_design(spec).fabric
        stored = {d.name: cache.read_entry(cache.entry_key(flaky, RenderContext(), cache.digest(fabric, d.name)))
                  is not None for d in flaky.devices(fabric)}
        assert stored.pop("z01-r001-rtsw") is False
        assert stored and all(stored.values())
    finally:
        targets.unregister("flaky")


def test_one_at_a_time_is_held_by_one_holder_and_refuses_a_name_outside_its_grammar(tmp_path):
    cache = RenderCache(tmp_path / "cache", key=b"k" * 32)
    with cache.one_at_a_time("eos-anta") as held:
        assert held
        with cache.one_at_a_time("eos-anta", wait=False) as second:     # another open file: another holder
            assert second is False
        with cache.one_at_a_time("other", wait=False) as other:
            assert other
    with cache.one_at_a_time("eos-anta", wait=False) as again:
        assert again
    for bad in ("../x", "", "A", "a/b", "a" * 65):
        with pytest.raises(ValueError):
            with cache.one_at_a_time(bad):
                pytest.fail(f"a lock named {bad!r} was taken")


def test_each_device_slice_is_digested_once_per_render_in_the_parent_before_the_workers_fork(tmp_path, spec,
                                                                                              monkeypatch):
    """A build with a cache makes every device's slice digest (its record's index) before the render's workers fork,
    and they inherit them for their lookups: each digest is made once, by the parent.  Before, the workers made the
    switches' digests for their lookups and the parent every device's again for the record, after the render."""
    import multiprocessing as mp

    import teton.pipeline.cache as cache_module
    from teton.targets import schedule

    monkeypatch.setattr(schedule, "MIN_FORK_COST", 0.0)     # the lab's tasks in the forked pool
    made = mp.Value("i", 0)
    parent = os.getpid()
    elsewhere = mp.Value("i", 0)
    real = cache_module.device_digest

    def counted(fabric: Fabric, name: str, memo: Any) -> str:
        with made.get_lock():
            made.value += 1
            elsewhere.value += os.getpid() != parent
        return real(fabric, name, memo)

    monkeypatch.setattr(cache_module, "device_digest", counted)
    cache = RenderCache(tmp_path / "cache")
    built = build(spec, tmp_path / "out", cache=cache)
    fabric = load_and_design(spec).fabric
    assert cache.stats()["stored"] == cache_entries(built.path)      # the workers did look every switch up
    assert (made.value, elsewhere.value) == (len(fabric.devices), 0)
    assert cache.digest(fabric, next(iter(fabric.devices))) == real(fabric, next(iter(fabric.devices)),
                                                                     cache_module.DigestMemo())
