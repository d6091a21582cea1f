"""The structured config as JSON, exactly ``json.dumps(cfg, indent=1, sort_keys=True) + "\\n"`` (the bytes teton has
always written), made by orjson where that gives the same bytes, about 3x faster (bench/eos_avd_render.py).

``json.dumps`` with an indent runs the pure-Python encoder (18 ms for a 24k CTSW's structured config).  orjson
(pinned 3.13.0) writes the same text with two spaces of indent per level (`OPT_INDENT_2`): every line of such JSON
starts with its indent and nothing else, as strings hold no raw line break, so halving each line's leading spaces
gives ``indent=1``.  Where the two differ, the text is written by ``json.dumps``:

- orjson raises (a non-str key, an int beyond 64 bits, a cycle, a type it does not know);
- non-ASCII output (``json.dumps`` escapes it, ``ensure_ascii``) or DEL, U+007F (which ``json.dumps`` escapes too);
- a float anywhere (orjson spells some differently, ``1e16`` for ``1e+16``): in this indented layout every value
  that is not a string or a container starts a line or follows ``": "``, so two searches of the text find them;
- "null" anywhere (orjson writes NaN and infinities as ``null``, ``json.dumps`` as ``NaN``/``Infinity``).

The last two searches (1 ms of a 24k switch) are skipped where the caller knows the config is plain JSON without a
float (`teton.targets.eos.checks.plain_json` is exactly `PLAIN`: exact dicts with str keys, lists, str, int, bool and
None), as the EOS target does from the shape walk its validation makes anyway.

The indent is halved at C speed (`_halve_indent`, 4.3 -> 2.4 ms of a 24k switch's ~400 KB): ``replace(b"  ", b" ")``
halves every line's indent run (2d spaces after a line break, then a character that is not a space) and also every
run of two or more spaces inside a string; it is taken only where it removed exactly half of all the lines' leading
spaces, that is where no string holds two spaces in a row (``": "`` is the only other space, a single one), else each
line is halved in Python.

tests/targets/test_eos_jsonout.py compares both on random data and on every EOS switch of the lab and the 24k.
"""

from __future__ import annotations

import json
import re
from itertools import repeat
from typing import Any

from teton.targets.eos.checks import PLAIN

try:
    import orjson
except ImportError:  # pragma: no cover - pinned in pyproject.toml; json.dumps is the same bytes, slower
    orjson = None  # type: ignore[assignment]

# a float orjson may spell differently (a digit run then ".", "e" or "E"), as an object's value or an array's item;
# possessive (Python 3.11): a shorter run of spaces or digits is followed by a space or a digit, which never matches
# what comes next, so giving none back finds the same matches, without the retries at each of the ~30k line starts'
# spaces (about 2 ms of the ~8 a 24k switch's JSON took)
_FLOAT_VALUE = re.compile(rb'": -?[0-9]++[.eE]')
_FLOAT_ITEM = re.compile(rb"\n *+-?[0-9]++[.eE]")


def dump_json_reference(cfg: Any) -> str:
    """What teton writes: the structured config as JSON, one space of indent per level, keys sorted."""
    return json.dumps(cfg, indent=1, sort_keys=True) + "\n"


def dump_json(cfg: Any, shape: int | None = None) -> str:
    """`dump_json_reference(cfg)`, the same bytes, through orjson where that is proven the same (module docstring);
    `shape` is `plain_json(cfg)` where the caller has it."""
    if orjson is None:
        return dump_json_reference(cfg)
    try:
        data = orjson.dumps(cfg, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return dump_json_reference(cfg)
    if not data.isascii() or b"\x7f" in data:
        return dump_json_reference(cfg)
    if shape != PLAIN and (b"null" in data or _FLOAT_VALUE.search(data) or _FLOAT_ITEM.search(data)):
        return dump_json_reference(cfg)
    return _halve_indent(data) + "\n"


def _halve_indent(data: bytes) -> str:
    """orjson's ASCII `OPT_INDENT_2` text with each line's leading spaces halved (module docstring)."""
    halved = data.replace(b"  ", b" ")
    lines = data.split(b"\n")
    leading = len(data) - (len(lines) - 1) - sum(map(len, map(bytes.lstrip, lines, repeat(b" "))))
    if 2 * (len(data) - len(halved)) == leading:
        return halved.decode("ascii")
    text = data.decode("ascii").split("\n")
    return "\n".join([line[(len(line) - len(line.lstrip(" "))) >> 1:] for line in text])
