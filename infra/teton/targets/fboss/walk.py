"""The strict check's schema walk: a config (thrift SimpleJSON, as FBOSS's agent and BGP++ read it) against its root
struct of the pinned IDL (`teton.targets.fboss.idl`).

The agent reads its config permissively (an unknown key is ignored, so a misspelt one is never reported on the switch);
this walk is not: every key must be a field of its struct, every value of its thrift type.

- struct: a JSON object; every key a field; every `required` field present; a union sets at most one field;
- bool: true/false; byte/i16/i32/i64: a JSON integer within the type's range; double: a number; string: a string;
- enum: an integer that is one of the enum's values (SimpleJSON writes enums as integers);
- list/set: an array (a set without repeats); map: an object whose keys are strings spelling the key type (an integer
  or an enum value as its decimal digits, as SimpleJSON writes them).

A field the IDL marks deprecated is accepted and reported as a `Note` (FBOSS still reads it).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

from teton.targets.fboss.idl import Schema, Struct, Type

RANGES = {"byte": (-(1 << 7), (1 << 7) - 1), "i16": (-(1 << 15), (1 << 15) - 1),
          "i32": (-(1 << 31), (1 << 31) - 1), "i64": (-(1 << 63), (1 << 63) - 1)}
_INT_KEY = re.compile(r"^-?\d+$")


@dataclass(frozen=True)
class Issue:
    path: str          # JSON path: sw.ports[3].profileID
    message: str


@dataclass(frozen=True)
class Note:
    path: str
    field: str         # module.Struct.field


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _key(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


class Walker:
    """Walks values against the schema, collecting issues and deprecated-field notes."""

    def __init__(self, schema: Schema):
        self.schema = schema
        self.issues: list[Issue] = []
        self.notes: list[Note] = []

    def bad(self, path: str, message: str) -> None:
        self.issues.append(Issue(path, message))

    def struct(self, value: Any, s: Struct, path: str) -> None:
        if not isinstance(value, dict):
            self.bad(path, f"{_json_type(value)} where {s.name} (an object) goes")
            return
        for k, v in value.items():
            f = s.fields.get(k)
            if f is None:
                close = difflib.get_close_matches(k, list(s.fields), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                self.bad(_key(path, str(k)), f"unknown key: {s.name} has no field {k!r}{hint} (the agent would "
                         "ignore it silently)")
                continue
            if f.deprecated:
                self.notes.append(Note(_key(path, k), f"{s.name}.{k}"))
            self.value(v, f.type, _key(path, k))
        for f in s.fields.values():
            if f.required and f.name not in value:
                self.bad(_key(path, f.name), f"required field of {s.name} is missing")
        if s.union and len(value) > 1:
            self.bad(path, f"{s.name} is a union: it sets one field, not {len(value)} ({', '.join(sorted(value))})")

    def value(self, value: Any, t: Type, path: str) -> None:
        kind = t.kind
        if kind == "struct":
            self.struct(value, self.schema.struct(t.name), path)
        elif kind == "bool":
            if not isinstance(value, bool):
                self.bad(path, f"{_json_type(value)} where a bool (true/false) goes")
        elif kind in RANGES:
            if isinstance(value, bool) or not isinstance(value, int):
                self.bad(path, f"{_json_type(value)} where {kind} (an integer) goes")
                return
            lo, hi = RANGES[kind]
            if not lo <= value <= hi:
                self.bad(path, f"{value} is out of {kind}'s range {lo}..{hi}")
        elif kind == "double":
            if isinstance(value, bool) or not isinstance(value, int | float):
                self.bad(path, f"{_json_type(value)} where a double (a number) goes")
        elif kind in ("string", "binary"):
            if not isinstance(value, str):
                self.bad(path, f"{_json_type(value)} where a {kind} (a JSON string) goes")
        elif kind == "enum":
            self.enum(value, t.name, path)
        elif kind in ("list", "set"):
            assert t.elem is not None
            if not isinstance(value, list):
                self.bad(path, f"{_json_type(value)} where {t} (an array) goes")
                return
            for i, v in enumerate(value):
                self.value(v, t.elem, f"{path}[{i}]")
            if kind == "set":
                seen: list[Any] = []
                for i, v in enumerate(value):
                    if v in seen:
                        self.bad(f"{path}[{i}]", f"{v!r} repeats an element of {t}")
                    seen.append(v)
        elif kind == "map":
            assert t.key is not None and t.elem is not None
            if not isinstance(value, dict):
                self.bad(path, f"{_json_type(value)} where {t} (an object) goes")
                return
            for k, v in value.items():
                self.map_key(str(k), t.key, f"{path}[{k!r}]")
                self.value(v, t.elem, f"{path}[{k!r}]")
        else:   # pragma: no cover - every thrift kind is handled above
            self.bad(path, f"cannot check thrift type {t}")

    def enum(self, value: Any, name: str, path: str) -> None:
        values = self.schema.enums[name]
        if isinstance(value, bool) or not isinstance(value, int):
            self.bad(path, f"{_json_type(value)} where the enum {name} goes (SimpleJSON writes enums as integers)")
        elif value not in values:
            shown = ", ".join(f"{v} {n}" for v, n in sorted(values.items())[:12])
            more = f" and {len(values) - 12} more" if len(values) > 12 else ""
            self.bad(path, f"{value} is no value of the enum {name} ({shown}{more})")

    def map_key(self, key: str, t: Type, path: str) -> None:
        """A SimpleJSON map key: always a JSON string, spelling the key type."""
        if t.kind in ("string", "binary"):
            return
        if t.kind in RANGES or t.kind == "enum":
            if not _INT_KEY.match(key):
                self.bad(path, f"map key {key!r} does not spell {t} (an integer as a string)")
                return
            n = int(key)
            if t.kind == "enum":
                if n not in self.schema.enums[t.name]:
                    self.bad(path, f"map key {n} is no value of the enum {t.name}")
            else:
                lo, hi = RANGES[t.kind]
                if not lo <= n <= hi:
                    self.bad(path, f"map key {n} is out of {t.kind}'s range {lo}..{hi}")
        elif t.kind == "bool":
            if key not in ("true", "false"):
                self.bad(path, f"map key {key!r} does not spell a bool")
        else:
            self.bad(path, f"map key of type {t} cannot be written in SimpleJSON")


def walk(schema: Schema, value: Any, root: str) -> tuple[list[Issue], list[Note]]:
    """Every issue of `value` against the struct `root` (module.Name), and the deprecated fields it sets."""
    w = Walker(schema)
    w.struct(value, schema.struct(root), "")
    return w.issues, w.notes
