"""teton.targets.eos.jsonout: orjson's fast path writes exactly the bytes of json.dumps(indent=1, sort_keys=True)."""

from __future__ import annotations

import enum
import json
import random
from typing import Any

import pytest

from teton.fabric.model import Fabric
from teton.targets.eos import jsonout
from teton.targets.eos.checks import PLAIN, plain_json
from teton.targets.eos.jsonout import dump_json, dump_json_reference
from teton.targets.eos.structured import structured_config


class _Colour(enum.IntEnum):
    RED = 1


def _random(rnd: random.Random, depth: int = 0) -> Any:
    kind = rnd.randrange(9 if depth < 4 else 5)
    if kind == 0:
        odd = rnd.random() < 0.05   # DEL or non-ASCII
        return "".join(chr(rnd.choice([0x7f, 0xe9, 0x2603]) if odd and k == 0 else rnd.randrange(0x7f))
                       for k in range(rnd.randrange(6)))
    if kind == 1:
        return rnd.choice([0, -1, 7, 2**31, 2**63 - 1, -2**63, 2**64, True, False])
    if kind == 2 and rnd.random() < 0.1:
        return rnd.choice([None, 1.5, 0.1, 1e16, 1e-7, -0.0, 100.0, float("nan"), float("inf")])
    if kind == 3:
        return rnd.choice(["", "a", "x: 1", '": 1.5', "null", "1e5", " lead", "tab\there", "\\"])
    if kind in (2, 4):
        return rnd.choice([[], {}, (), _Colour.RED])
    if kind in (5, 6):
        keys = ["a", "b", "k\n", "Z", "_", "name", "1", "é" if rnd.random() < 0.05 else "\x01"]
        return {rnd.choice(keys) + str(i): _random(rnd, depth + 1) for i in range(rnd.randrange(5))}
    return [_random(rnd, depth + 1) for _ in range(rnd.randrange(5))]


def test_the_fast_path_writes_json_dumps_bytes_on_random_data(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(2026)
    fallbacks = []
    monkeypatch.setattr(jsonout, "dump_json_reference", lambda cfg: fallbacks.append(1) or dump_json_reference(cfg))
    plain = 0
    for _ in range(3000):
        data = {"root": _random(rnd), "list": [_random(rnd) for _ in range(3)]}
        assert dump_json(data) == dump_json_reference(data), data
        shape = plain_json(data)
        assert dump_json(data, shape) == dump_json_reference(data), data   # the float and null searches skipped
        plain += shape == PLAIN
    assert 600 < len(fallbacks) < 5400   # both paths taken often
    assert 300 < plain < 2700


@pytest.mark.parametrize("data", [{1: "int key"}, {"big": 2**70}, {"f": float("nan")}, {"f": 1e16}, {"s": "é"},
                                  {"d": "\x7f"}, {"n": None}, [1.0], {"t": (1, "a")}, {"e": _Colour.RED}],
                         ids=repr)
def test_what_orjson_spells_differently_falls_back_to_json_dumps(data: Any) -> None:
    assert dump_json(data) == json.dumps(data, indent=1, sort_keys=True) + "\n"


def test_plain_data_takes_the_orjson_path(monkeypatch: pytest.MonkeyPatch) -> None:
    data = {"b": [1, {"x": "y", "e": [], "o": {}}, True], "a": "q\"\\\n\t\x01"}
    monkeypatch.setattr(jsonout, "dump_json_reference", lambda cfg: pytest.fail("fell back"))
    assert dump_json(data) == json.dumps(data, indent=1, sort_keys=True) + "\n"


def test_every_lab_structured_config_is_written_as_json_dumps_writes_it(lab_fabric: Fabric,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    configs = [structured_config(lab_fabric, d) for d in lab_fabric.switches("eos")]
    assert configs
    want = [dump_json_reference(c) for c in configs]
    monkeypatch.setattr(jsonout, "dump_json_reference", lambda cfg: pytest.fail("fell back"))
    assert [dump_json(c) for c in configs] == want
    assert [dump_json(c, plain_json(c)) for c in configs] == want


def test_the_possessive_float_patterns_find_what_the_backtracking_ones_find() -> None:
    import re

    rnd = random.Random(11)
    plain = {jsonout._FLOAT_VALUE: re.compile(rb'": -?[0-9]+[.eE]'),
             jsonout._FLOAT_ITEM: re.compile(rb"\n *-?[0-9]+[.eE]")}
    found = 0
    for _ in range(20000):
        text = b"".join(rnd.choice([b"\n", b" ", b"  ", b'": ', b"-", b"1", b"23", b".", b"e", b"E", b"x", b'"'])
                        for _ in range(rnd.randrange(12)))
        for fast, slow in plain.items():
            want = slow.search(text)
            got = fast.search(text)
            assert (got and got.span()) == (want and want.span()), text
            found += bool(want)
    assert found > 300


def _spaced(rnd: random.Random, depth: int) -> Any:
    """Nested dicts and lists (up to 40 deep) whose strings have runs of spaces anywhere, sometimes two or more."""
    kind = rnd.randrange(4 if depth < 40 else 2)
    if kind == 0:
        return "".join(rnd.choice([" ", "  ", "   ", "a", '"', "\\", "\n", "-1.5", ": "]) if rnd.random() < 0.3
                       else rnd.choice("ab c") for _ in range(rnd.randrange(8)))
    if kind == 1:
        return rnd.choice([0, -3, True, False, [], {}])
    if kind == 2:
        keys = ["k", " k", "k  ", "a b"]
        return {rnd.choice(keys) + str(i): _spaced(rnd, depth + 1) for i in range(rnd.randrange(4))}
    return [_spaced(rnd, depth + 1) for _ in range(rnd.randrange(4))]


def test_the_indent_halved_at_c_speed_is_the_indent_halved_line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import orjson

    rnd = random.Random(7)
    fast = 0
    replace = bytes.replace
    for _ in range(2000):
        data = orjson.dumps(_spaced(rnd, 0), option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
        lines = data.decode("ascii").split("\n")
        want = "\n".join(line[(len(line) - len(line.lstrip(" "))) // 2:] for line in lines)
        got = jsonout._halve_indent(data)
        assert got == want, data
        fast += got == replace(data, b"  ", b" ").decode("ascii")
    assert 200 < fast < 1800   # both the C-speed path and the line-by-line one taken
    monkeypatch.setattr(jsonout, "dump_json_reference", lambda cfg: pytest.fail("fell back"))
    for text in ("x y", "x  y"):   # 2 x 120 levels deep (orjson's limit is 255)
        deep: Any = text
        for k in range(120):
            deep = [deep, {"k": deep}] if k % 30 == 0 else {"a": [deep, 1]}
        cfg = {"deep": deep, "plain": [{"s": "one space"}] * 3}
        assert dump_json(cfg) == dump_json_reference(cfg)
