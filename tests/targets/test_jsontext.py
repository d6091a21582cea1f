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
