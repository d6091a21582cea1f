"""Pretty JSON text as `json.dumps(data, indent=..., sort_keys=...)` writes it, byte for byte, written by orjson.

`json.dumps` with an indent runs the pure-Python encoder (~10x slower than its C one, ~50x slower than orjson).
orjson writes the same text where it writes the same tokens; it differs in: non-ASCII (raw UTF-8, where json escapes
it as \\uXXXX: escaped here afterwards), floats (`1e16` for `1e+16`, `null` for NaN), keys that are not strings, big
integers (refused), its own types (dataclasses, datetimes), and indents other than 2 (1 is made here from 2: JSON text
has no raw newline inside a string, so every line's leading spaces are indentation).  So `pretty_json` compares
orjson's compact text with json's C encoder's compact text (the same tokens in the same order, or not) and writes with
orjson only when they are equal; else with json, as before.  Tests: tests/targets/test_jsontext.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_NON_ASCII = re.compile(r"[^\x00-\x7e]")      # json's ensure_ascii also escapes DEL (0x7f)
_INDENT = re.compile(r"\n( +)")


def _escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c < 0x10000:
        return f"\\u{c:04x}"
    c -= 0x10000
    return f"\\u{0xd800 | (c >> 10):04x}\\u{0xdc00 | (c & 0x3ff):04x}"


def _ascii(text: str) -> str:
    return _NON_ASCII.sub(_escape, text)


def _halved(m: re.Match[str]) -> str:
    return "\n" + " " * (len(m.group(1)) // 2)


def pretty_json(data: Any, *, indent: int = 2, sort_keys: bool = False, plain: bool = False) -> str:
    """`json.dumps(data, indent=indent, sort_keys=sort_keys)`, the same text, faster where orjson can write it.

    `plain`: the caller walked `data` and found only dicts with str keys, lists, tuples, str, bool, None and ints of
    64 bits, all of their exact types (no float: orjson spells `1e-05` `0.00001`).  Then where orjson's compact text
    holds no backslash and no DEL, no string needed an escape in orjson (a quote, a backslash, a control character),
    nor one in json but non-ASCII (as `_ascii` escapes it): the texts are equal without json's, 2/3 of the time (the
    24k's 4,193 host_vars: 0.3 s)."""
    if indent in (1, 2):
        sort = orjson.OPT_SORT_KEYS if sort_keys else 0
        try:
            compact = orjson.dumps(data, option=sort | orjson.OPT_PASSTHROUGH_DATACLASS
                                   | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS)
        except (TypeError, ValueError):      # orjson.JSONEncodeError is a TypeError
            compact = None
        if compact is not None:
            ascii_only = compact.isascii()
            mine = compact.decode() if ascii_only else _ascii(compact.decode())
            if (plain and b"\\" not in compact and b"\x7f" not in compact) \
                    or mine == json.dumps(data, sort_keys=sort_keys, separators=(",", ":")):
                text = orjson.dumps(data, option=sort | orjson.OPT_INDENT_2).decode()
                if not ascii_only:
                    text = _ascii(text)
                if indent == 2:
                    return text
                # the strings hold no two spaces in a row (the compact text has none): every "  " is indentation,
                # each level's two spaces become one
                return text.replace("  ", " ") if "  " not in mine else _INDENT.sub(_halved, text)
    return json.dumps(data, indent=indent, sort_keys=sort_keys)
