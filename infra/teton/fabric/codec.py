"""The generic JSON codec of the Fabric's intents (fabric.json's intent and host sections).

Intents are frozen dataclasses and NamedTuples of plain values: written as an object of its fields (a dataclass) or a
list (a NamedTuple or tuple), and read back by their type hints, so a new intent field needs no code anywhere.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from functools import cache
from typing import Any

_PLAIN = frozenset({str, int, float, bool, type(None)})
_FIELDS: dict[type, tuple[str, ...] | None] = {}     # a type's dataclass field names (None: not a dataclass)
_UNSEEN: Any = object()


def _field_names(t: type) -> tuple[str, ...] | None:
    """`t`'s dataclass field names (None: not a dataclass), remembered in `_FIELDS`."""
    names = _FIELDS[t] = tuple(f.name for f in dataclasses.fields(t)) if dataclasses.is_dataclass(t) else None
    return names


def to_json(x: Any) -> Any:
    """`x` as plain JSON data: a dataclass as a dict of its fields, a tuple (a NamedTuple too) as a list, recursively;
    anything else as it is.  A plain item (str, int, float, bool, None) is taken as it is without the call (what the
    call would return): the 24k's routing intents are 2.5M values, 1.9M of them plain (fabric.json 0.3 s -> 0.2 s)."""
    t = type(x)
    if t in _PLAIN:
        return x
    names = _FIELDS.get(t, _UNSEEN)
    if names is _UNSEEN:
        names = _field_names(t)
    if names is not None:
        out = {}
        for name in names:
            v = getattr(x, name)
            out[name] = v if type(v) in _PLAIN else to_json(v)
        return out
    if isinstance(x, tuple):
        return [v if type(v) in _PLAIN else to_json(v) for v in x]
    return x


_EXACT = frozenset({str, int, bool, type(None)})   # the leaves orjson writes as json does (a float not: 1e-05)


def to_json_exact(x: Any) -> tuple[Any, bool]:
    """(`to_json(x)`, whether it is made of dicts of dataclasses, lists of tuples and leaves whose exact type is in
    `_EXACT`): what `teton.fabric.serialize` may write by orjson (`exact_dump`).  The same walk as `to_json`; a value
    of any other type (a float, a dict, a subclass) is converted by `to_json` itself and makes the whole not exact."""
    odd: list[Any] = []

    def walk(x: Any) -> Any:
        t = type(x)
        names = _FIELDS.get(t, _UNSEEN)
        if names is _UNSEEN:
            names = _field_names(t)
        if names is not None:
            out = {}
            for name in names:
                v = getattr(x, name)
                out[name] = v if type(v) in _EXACT else walk(v)
            return out
        if isinstance(x, tuple):
            return [v if type(v) in _EXACT else walk(v) for v in x]
        if t not in _EXACT:
            odd.append(x)
        return to_json(x)

    out = x if type(x) in _EXACT else walk(x)
    return out, not odd


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)        # resolved in the class's own module


def from_json(tp: Any, data: Any) -> Any:
    """`data` (what `to_json` wrote) as an instance of type `tp`."""
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if data is None:
            return None
        return from_json(next(a for a in args if a is not type(None)), data)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_json(args[0], v) for v in data)
        return tuple(from_json(a, v) for a, v in zip(args, data, strict=True))
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):   # a NamedTuple
        hints = _hints(tp)
        return tp(*(from_json(hints[f], v) for f, v in zip(tp._fields, data, strict=True)))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        if not isinstance(data, dict):
            raise TypeError(f"expected an object ({tp.__name__}), got {_kind(data)}")
        return tp(**{f.name: from_json(hints[f.name], data[f.name]) for f in dataclasses.fields(tp)})
    if origin is typing.Literal:
        if data not in args or type(data) is not type(args[args.index(data)]):
            raise TypeError(f"expected one of {', '.join(map(repr, args))}, got {str(data)[:80]!r}")
        return data
    if tp in _LEAVES and not _LEAVES[tp](data):
        raise TypeError(f"expected {tp.__name__}, got {_kind(data)}")
    return data


# what a leaf of each type may be in JSON (a bool is no int; an int is a float)
_LEAVES: dict[Any, Any] = {
    int: lambda v: isinstance(v, int) and not isinstance(v, bool),
    float: lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    str: lambda v: isinstance(v, str),
    bool: lambda v: isinstance(v, bool),
}


def _kind(v: Any) -> str:
    return "null" if v is None else f"{type(v).__name__} {str(v)[:40]!r}"
