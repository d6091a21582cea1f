"""`pretty_json` writes exactly what `json.dumps(data, indent=..., sort_keys=...)` writes: on the lab's rendered
Ansible host variables, on the same with non-ASCII strings, and on what orjson would spell otherwise (floats, NaN, big
integers, keys that are not strings, control characters, DEL, characters beyond the BMP)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from teton.targets.jsontext import pretty_json


def _same(data, indent: int, sort_keys: bool) -> None:
    assert pretty_json(data, indent=indent, sort_keys=sort_keys) == json.dumps(data, indent=indent,
                                                                               sort_keys=sort_keys)


def _json_files(build: Path) -> list[Path]:
    return sorted(p for p in build.rglob("*.json") if p.name != "manifest.json")


def test_the_labs_rendered_json_files_are_written_alike(lab_build):
    files = _json_files(lab_build)
    assert any("host_vars" in str(p) for p in files)
    for path in files:
        data = json.loads(path.read_text())
        for indent in (1, 2, 4):
            for sort_keys in (True, False):
                _same(data, indent, sort_keys)


def test_host_vars_of_the_lab_are_byte_identical_with_non_ascii_strings(lab_build):
    """The spec's names are ASCII (its grammar): non-ASCII strings are planted in the rendered data."""
    path = next(p for p in _json_files(lab_build) if "host_vars" in str(p))
    data = json.loads(path.read_text())
    data["planted"] = {"zürich": "Straße ✓ 😀", "del": "a\x7fb", "ctl": "\x00\x1f\t\n\"\\/", "é": ["ü", {"ñ": "日本"}]}
    for indent in (1, 2):
        _same(data, indent, True)
        _same(data, indent, False)


@pytest.mark.parametrize("data", [
    {"f": 1e16}, {"f": 1e-7}, {"f": 0.1}, {"f": 2.5}, {"f": float("nan")}, {"f": float("inf")}, {"f": -0.0},
    {"big": 2**70}, {1: "int key"}, {"b": True, "n": None, "e": [], "o": {}, "l": [[], {}, [1, [2]]]},
    [], {}, "plain", 7, {"t": (1, 2)}, {"x": "\u2028\u2029"},
])
def test_what_orjson_spells_otherwise_falls_back_to_json(data):
    for indent in (1, 2, 3):
        _same(data, indent, True)
        _same(data, indent, False)


def test_what_json_refuses_is_still_refused():
    from dataclasses import dataclass

    @dataclass
    class D:
        x: int

    with pytest.raises(TypeError):
        pretty_json({"d": D(1)}, sort_keys=True)


def _random_data(rng, depth: int = 0):
    """Data of every type `wrap_json_plain` may meet, strings with what json and orjson escape (or not) alike."""
    alphabet = ["a", "Z", " ", '"', "\\", "/", "\n", "\t", "\x00", "\x1f", "\x7f", "é", "日", "😀", "\u2028", "{"]
    kinds = ["str", "int", "big", "bool", "none", "float", "strsub"] + (["dict", "list", "tuple"] if depth < 3 else [])
    kind = rng.choice(kinds)
    if kind == "str":
        return "".join(rng.choices(alphabet if rng.random() < 0.3 else ["a", "b", "-", "1"], k=rng.randint(0, 5)))
    if kind == "int":
        return rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randint(-10**9, 10**9)])
    if kind == "big":
        return rng.choice([2**63, -(2**63) - 1, 2**64, 10**30])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "none":
        return None
    if kind == "float":
        return rng.choice([0.5, 1e-05, 1e16, -0.0])
    if kind == "strsub":
        class S(str):
            """A str subclass: not plain, json.dumps decides."""
        return S("sub")
    items = [_random_data(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    if kind == "list":
        return items
    if kind == "tuple":
        return tuple(items)
    keys = [rng.choice(["k", "é", "a\\b", 'q"', "Z", "_", "10"]) if rng.random() < 0.95 else 3 for _ in items]
    return dict(zip(keys, items, strict=True))


def test_the_plain_path_writes_json_dumps_text_on_random_data():
    """`wrap_json_plain` is `wrap_json`, says plain only for what `pretty_json(plain=True)` may skip json's text
    for, and that path writes json.dumps's text (the host_vars' writer, `teton.targets.ansible._json`)."""
    import random

    from teton.targets.ansible.unsafe import wrap_json, wrap_json_plain

    rng = random.Random(5)
    plain_seen = 0
    for _ in range(3000):
        data = {"v": _random_data(rng)}
        wrapped, plain = wrap_json_plain(data)
        assert wrapped == wrap_json(data)
        plain_seen += plain
        for indent in (1, 2):
            try:
                want = json.dumps(wrapped, indent=indent, sort_keys=True)
            except (TypeError, ValueError):
                continue
            assert pretty_json(wrapped, indent=indent, sort_keys=True, plain=plain) == want
    assert plain_seen > 500
