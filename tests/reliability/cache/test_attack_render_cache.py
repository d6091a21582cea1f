"""Attacks on the render cache: whoever can write the cache folder (a shared or CI cache) must not change what a build
holds.  A poisoned entry with its checksums fixed, a record pointing at a poisoned blob, and a cache poisoned by the
key's own holder under `render --check` are each caught; the key is the user's, kept outside the cache, private."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import zlib
from pathlib import Path

from click.testing import CliRunner

from tests.helpers import write_spec
from teton.cli import main
from teton.pipeline import build
from teton.pipeline.cache import ENV_KEY, RenderCache, key_file, load_key

POISON = " network 203.0.113.0/24\n"


def tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def _split_entry(data: bytes) -> tuple[bytes, bytes, dict, bytes]:
    """(prefix kept as it is: magic and any MAC line, the header JSON line parsed, body) of a device entry."""
    lines = data.split(b"\n", 3)
    head_at = next(i for i, line in enumerate(lines) if line.startswith(b"{"))
    prefix = b"".join(line + b"\n" for line in lines[:head_at])
    rest = b"\n".join(lines[head_at:])
    end = rest.index(b"\n")
    return prefix, rest[:end], json.loads(rest[:end]), rest[end + 1:]


def poison_frr_entries(cache_root: Path) -> int:
    """Add a line to every cached frr.conf, fixing sizes, sha256 and CRC in the header (what an attacker can do)."""
    poisoned = 0
    for path in (cache_root / "v1" / "devices").rglob("*"):
        if not path.is_file():
            continue
        prefix, _, head, body = _split_entry(path.read_bytes())
        out, at, files = b"", 0, []
        for rel, n, _sha in head["files"]:
            chunk = body[at:at + n]
            at += n
            if rel.endswith("frr.conf"):
                chunk = chunk.replace(b"router bgp", POISON.encode() + b"router bgp", 1)
                poisoned += 1
            files.append([rel, len(chunk), hashlib.sha256(chunk).hexdigest()])
            out += chunk
        new_head = dict(head, files=files)
        if "crc" in head:
            new_head["crc"] = zlib.crc32(out)
        path.write_bytes(prefix + json.dumps(new_head).encode() + b"\n" + out)
    return poisoned


def test_a_poisoned_device_entry_with_fixed_checksums_is_rendered_again_not_replayed(tmp_path, lab_data):
    spec = write_spec(tmp_path, lab_data)
    honest = build(spec, tmp_path / "honest")
    cache = RenderCache(tmp_path / "cache")
    build(spec, tmp_path / "first", cache=cache)
    assert poison_frr_entries(cache.root) > 0
    cache.reset_stats()
    again = build(spec, tmp_path / "again", cache=cache)
    assert not any(POISON.encode() in data for data in tree(again.path).values())
    assert tree(again.path) == tree(honest.path)
    assert cache.stats()["untrusted"] > 0 and not again.replayed


def test_a_record_pointing_at_a_poisoned_blob_is_not_replayed(tmp_path, lab_data):
    spec = write_spec(tmp_path, lab_data)
    honest = build(spec, tmp_path / "honest")
    cache = RenderCache(tmp_path / "cache")
    build(spec, tmp_path / "first", cache=cache)
    records = [p for p in (cache.root / "v1" / "records").rglob("*") if p.is_file()]
    assert len(records) == 1
    data = records[0].read_bytes()
    at = data.index(b"{")
    record = json.loads(data[at:])
    csv = next(rel for rel in record["files"]["cabling"] if rel.endswith(".csv"))
    evil = "=HYPERLINK(\"http://203.0.113.9\")\n"
    record["files"]["cabling"][csv] = cache.write_blob(evil)         # content-addressed: its sha256 is right
    records[0].write_bytes(data[:at] + json.dumps(record, sort_keys=True, separators=(",", ":")).encode())
    cache.reset_stats()
    again = build(spec, tmp_path / "again", cache=cache)
    assert (again.path / csv).read_text() != evil
    assert tree(again.path) == tree(honest.path)
    assert not again.replayed


def test_the_cli_says_once_that_untrusted_entries_were_rendered_again(tmp_path, lab_data):
    spec = write_spec(tmp_path, lab_data)
    cache_dir = tmp_path / "cache"
    env = {"TETON_CACHE_DIR": str(cache_dir)}
    assert CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "a")], env=env).exit_code == 0
    poison_frr_entries(cache_dir)
    r = CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "b")], env=env)
    assert r.exit_code == 0, r.output
    assert r.stderr.count("failed their MAC") == 1
    assert POISON not in "".join(p.read_text() for p in (tmp_path / "b").rglob("frr.conf"))


def test_render_check_trusts_nothing_replayed_even_from_the_keys_holder(tmp_path, lab_data):
    """A cache poisoned with the right key (a leaked key, the user's own mistake): `render --check` still calls the
    honest folder up to date and the poisoned one stale, because it renders what it compares against."""
    spec = write_spec(tmp_path, lab_data)
    cache_dir = tmp_path / "cache"
    env = {"TETON_CACHE_DIR": str(cache_dir)}
    honest = build(spec, tmp_path / "honest").path
    cache = RenderCache(cache_dir)
    build(spec, tmp_path / "first", cache=cache)
    for path in [p for p in (cache_dir / "v1" / "devices").rglob("*") if p.is_file()]:
        key = path.name
        files = cache.read_entry(key)
        assert files is not None
        cache.write_entry(key, {rel: text.replace("router bgp", POISON + "router bgp", 1)
                                for rel, text in files.items()})
    poisoned = build(spec, tmp_path / "poisoned", cache=cache).path
    assert POISON in "".join(p.read_text() for p in poisoned.rglob("frr.conf"))   # the key holder is trusted by render
    r = CliRunner().invoke(main, ["render", str(spec), "--check", str(honest)], env=env)
    assert r.exit_code == 0 and "up to date" in r.stderr, r.output
    r = CliRunner().invoke(main, ["render", str(spec), "--check", str(poisoned)], env=env)
    assert r.exit_code == 1 and "frr.conf" in r.stdout, r.output


def test_an_entry_written_under_another_key_is_a_miss(tmp_path, lab_data):
    spec = write_spec(tmp_path, lab_data)
    theirs = RenderCache(tmp_path / "cache", key=b"k" * 32)
    build(spec, tmp_path / "a", cache=theirs)
    mine = RenderCache(tmp_path / "cache", key=b"m" * 32)
    result = build(spec, tmp_path / "b", cache=mine)
    assert not result.replayed and mine.stats()["hits"] == 0 and mine.stats()["untrusted"] > 0


def test_the_key_is_created_private_outside_the_cache_and_a_readable_one_is_refused(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_KEY, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    key, problem = load_key()
    path = key_file()
    assert key is not None and problem == "" and path == tmp_path / "config" / "teton" / "cache.key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load_key() == (key, "")                                    # the same key on the next run
    os.chmod(path, 0o644)
    key, problem = load_key()
    assert key is None and "chmod 600" in problem
    cache = RenderCache(tmp_path / "cache")
    assert cache.stats()["problem"] and cache.read_json("records", "0" * 64) is None
    monkeypatch.setenv(ENV_KEY, "short")
    assert load_key()[0] is None
