"""fabric.json's orjson path (`teton.fabric.serialize.exact_dump`) writes `_dump`'s text: on random records of every
leaf type (floats, big ints, subclasses, escapes, non-ASCII), on the labs' fabrics, and `to_json_exact` is `to_json`."""

from __future__ import annotations

import dataclasses
import random
from typing import Any, NamedTuple

import pytest

from teton.fabric import serialize
from teton.fabric.codec import to_json, to_json_exact
from teton.fabric.model import Fabric
from teton.fabric.serialize import _dump, _flat_exact, dump_fabric, exact_dump


class _S(str):
    """A str subclass: orjson writes it, the exact paths must not take it."""


def _leaf(rng: random.Random) -> Any:
    alphabet = ["a", "Z", " ", '"', "\\", "/", "\n", "\x00", "\x1f", "\x7f", "é", "日", "😀"]
    return rng.choice([
        "".join(rng.choices(alphabet if rng.random() < 0.3 else ["a", "-", "1"], k=rng.randint(0, 4))),
        rng.randint(-10**6, 10**6), 2**63 - 1, -(2**63), 2**64, 10**30, True, False, None, 0.5, 1e-05, 1e16,
        _S("s"), (1, "t"), [2], {"k": 1}])


def _record(rng: random.Random, depth: int = 0) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for _ in range(rng.randint(0, 5)):
        key = rng.choice(["kind", "a", "é", 'q"', "z"]) if rng.random() < 0.97 else 7
        out[key] = _record(rng, depth + 1) if depth < 1 and rng.random() < 0.3 else _leaf(rng)
    return out


def test_exact_dump_writes_dumps_text_on_random_records():
    rng = random.Random(11)
    fast = 0
    for _ in range(20000):
        record = _record(rng)
        try:
            want = _dump(record)
        except (TypeError, ValueError):
            continue
        exact = _flat_exact(record)
        fast += exact
        assert exact_dump(record, exact) == want, record
    assert fast > 2000


class _Pair(NamedTuple):
    x: Any
    y: Any


@dataclasses.dataclass(frozen=True)
class _Intent:
    a: Any
    b: Any
    c: tuple[Any, ...] = ()


def _intent(rng: random.Random, depth: int = 0) -> Any:
    if depth > 2 or rng.random() < 0.4:
        return _leaf(rng)
    kind = rng.choice(["pair", "intent", "tuple"])
    if kind == "pair":
        return _Pair(_intent(rng, depth + 1), _intent(rng, depth + 1))
    if kind == "intent":
        return _Intent(_intent(rng, depth + 1), _intent(rng, depth + 1),
                       tuple(_intent(rng, depth + 1) for _ in range(rng.randint(0, 3))))
    return tuple(_intent(rng, depth + 1) for _ in range(rng.randint(0, 3)))


def test_to_json_exact_is_to_json_and_exact_only_where_exact_dump_may_skip_json():
    rng = random.Random(3)
    fast = 0
    for _ in range(10000):
        x = _intent(rng)
        data, exact = to_json_exact(x)
        assert data == to_json(x) and type(data) is type(to_json(x))
        record = {"device": "d", **data} if type(data) is dict else {"v": data}
        try:
            want = _dump(record)
        except (TypeError, ValueError):
            continue
        fast += exact
        assert exact_dump(record, exact) == want
    assert fast > 500


def test_the_labs_fabric_json_is_dumps_text(lab_fabric: Fabric, lab_ib_fabric: Fabric,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    for fabric in (lab_fabric, lab_ib_fabric):
        fast = dump_fabric(fabric)
        monkeypatch.setattr(serialize, "exact_dump", lambda data, exact: _dump(data))
        assert dump_fabric(fabric) == fast
        monkeypatch.undo()
