"""The render's shortcuts write what the long way writes: each cache and fast path beside the code it stands in for.

- SONiC: `SonicYangValidator`'s per-row translation cache (a row seen on an earlier switch) reports the same issues,
  also after a validation dropped a field of a cached row; config_db.json's per-table and per-row text caches write
  what json writes, rows of strings or not; `SplitValidator`'s shared-part key tells apart what json's text does;
- `csv_cell`'s search before the substitution, `pretty_json`'s indent 1 by str.replace, the ansible target's
  template-mark walk only where the JSON text holds a mark, `to_json`'s dataclass fields per type.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import random
import sys
from typing import NamedTuple

import pytest

from teton.fabric.codec import to_json
from teton.targets.ansible import Documents, _marked, _templates, check_documents
from teton.targets.jsontext import pretty_json
from teton.targets.sonic.validate import SplitValidator, _key
from teton.targets.tokens import _FORMULA, csv_cell

cdb = sys.modules["teton.targets.sonic.config_db"]     # the module (the package exports a function of its name)


@pytest.fixture(scope="module")
def split() -> SplitValidator:
    return SplitValidator()


def _doc() -> dict:
    ports = {f"Ethernet{8 * i}": {"alias": f"Ethernet{i + 1}/1", "lanes": ",".join(str(8 * i + k) for k in range(8)),
                                  "speed": "400000", "mtu": "9100", "admin_status": "up"} for i in range(4)}
    return {"DEVICE_METADATA": {"localhost": {"hostname": "sw1", "hwsku": "x", "platform": "y",
                                              "buffer_model": "traditional"}},
            "PORT": ports}


def test_a_cached_row_reports_its_issue_on_every_switch_and_stays_whole_after_a_drop(split):
    y = split.yang
    y._rows.clear()
    clean = _doc()
    assert y.validate("sw1", clean) == []
    cached = len(y._rows)
    assert cached >= 5                          # every row of strings is kept ...
    bad = copy.deepcopy(clean)
    bad["PORT"]["Ethernet8"]["mtu"] = "99999"   # ... a changed row is translated again
    first = [(i.device, i.table, i.key, i.field) for i in y.validate("sw1", bad)]
    assert first == [("sw1", "PORT", "Ethernet8", "mtu")]
    # the bad row is now the cached one: a drop of its field (to find further issues) must not change the cache
    again = [(i.device, i.table, i.key, i.field) for i in y.validate("sw2", copy.deepcopy(bad))]
    assert again == [("sw2", "PORT", "Ethernet8", "mtu")]
    hit = y._rows[("PORT", "Ethernet8")]
    assert "mtu" in hit[2] and '"mtu":99999' in hit[4]
    assert y.validate("sw3", copy.deepcopy(clean)) == []


def test_a_row_with_a_value_that_is_not_a_string_is_not_cached(split):
    y = split.yang
    y._rows.clear()
    doc = _doc()
    doc["PORT"]["Ethernet0"]["mtu"] = 9100         # a JSON number: 9100 == 9100.0 == True-ish ints, never cached
    y.validate("sw1", doc)
    assert ("PORT", "Ethernet0") not in y._rows and ("PORT", "Ethernet8") in y._rows


def _json_dump(db: dict) -> str:
    """config_db.json as the long way writes it: json's encoder for every row."""
    out = ["{"]
    tables = sorted(db)
    for t, table in enumerate(tables):
        rows = db[table]
        out.append(f" {json.dumps(table)}: {{")
        keys = sorted(rows)
        out += [f"  {json.dumps(k)}: {json.dumps(rows[k], sort_keys=True)}{',' if n < len(keys) - 1 else ''}"
                for n, k in enumerate(keys)]
        out.append(" }" + ("," if t < len(tables) - 1 else ""))
    return "\n".join([*out, "}"]) + "\n"


def test_config_db_text_caches_write_what_json_writes():
    cdb._TABLE_TEXT.clear()
    cdb._ROW_TEXT.clear()
    one = {**_doc(), "SWITCH_HASH": {"GLOBAL": {"ecmp_hash": ["SRC_IP", "DST_IP"], "ecmp_hash_algorithm": "CRC"}},
           "EMPTY": {}, "NTP": {"global": {"src_intf": "eth0", "x": "é \"q\" \\ \u2028 😀"}}}
    assert cdb.dump_config_db(one) == _json_dump(one)
    assert "PORT" in cdb._TABLE_TEXT and "SWITCH_HASH" not in cdb._TABLE_TEXT     # a list value: not kept
    two = copy.deepcopy(one)
    two["PORT"]["Ethernet16"]["admin_status"] = "down"          # a changed row in a kept table
    two["DEVICE_METADATA"]["localhost"]["hostname"] = "sw2"
    two["SWITCH_HASH"]["GLOBAL"]["ecmp_hash"] = ["SRC_IP"]
    for db in (two, one, one, two):                              # hits and misses, in turns
        assert cdb.dump_config_db(db) == _json_dump(db)
    three = copy.deepcopy(one)
    three["PORT"]["Ethernet0"]["mtu"] = 9100                     # equal to "9100"? no: and 9100 is written as such
    assert cdb.dump_config_db(three) == _json_dump(three)
    assert '"mtu": 9100' in cdb.dump_config_db(three)


def test_config_db_tables_written_by_orjson_read_as_json_writes_them():
    """`_flat_text` (one orjson call per table of rows of strings) beside json's encoder, over strings holding what
    would make the two differ: quotes, backslashes, braces, separators, control characters, DEL, non-ASCII."""
    rng = random.Random(11)
    plain = ['a', 'Z', '0', ' ', ',', ':', '/', '|']             # a string of these is written by orjson but ":", ","
    alphabet = [*plain, '"', '\\', '{', '}', '[', '\x7f', '\n', '\t', 'é', '\u2028', '😀', '":"', '","', '},"', '":{']
    cdb._TABLE_TEXT.clear()
    cdb._ROW_TEXT.clear()
    fast = 0
    for n in range(3000):
        chars = plain if n % 2 else alphabet

        def word(size: int, chars: list[str] = chars) -> str:
            return "".join(rng.choice(chars) for _ in range(rng.randint(0, size)))
        rows = {word(4): {word(3): word(5) for _ in range(rng.randint(0, 3))} for _ in range(rng.randint(1, 4))}
        db = {f"T{n}": rows}
        fast += cdb._flat_text(rows) is not None
        assert cdb.dump_config_db(db) == _json_dump(db), repr(rows)
    assert 300 < fast < 2700           # both ways taken
    assert cdb._flat_text({"k": {"f": "\ud800"}}) is None                 # a lone surrogate: orjson refuses it
    assert cdb._flat_text({"k": {"f": 1}}) is None and cdb._flat_text({"k": "x"}) is None


def test_the_shared_part_key_tells_apart_what_json_tells_apart():
    a = {"T": {"k": {"f": "1"}}}
    assert _key(a) == _key(copy.deepcopy(a))
    assert _key(a) != _key({"T": {"k": {"f": 1}}})
    assert _key({"T": {"k": {"f": None}}}) != _key({"T": {"k": {"f": math.nan}}})      # orjson: both `null`
    assert _key({"T": {1: "x"}}) != _key({"T": {"1": "x"}}) or json.dumps({"T": {1: "x"}}) == json.dumps(
        {"T": {"1": "x"}})       # json spells both alike: so may the key


def test_csv_cell_defuses_what_the_substitution_defuses():
    rng = random.Random(7)
    alphabet = "ab =+-@\t\r\n;,|"
    for _ in range(20000):
        s = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 7)))
        assert csv_cell(s) == _FORMULA.sub(r"\1'", s), repr(s)
    assert csv_cell("=cmd") == "'=cmd" and csv_cell("a;-b") == "a;'-b" and csv_cell("z01-r001") == "z01-r001"
    assert csv_cell(5) == 5


def test_pretty_json_indent_1_with_two_spaces_in_a_string():
    for data in ({"a": {"b": ["x  y", {"c": "  "}]}}, {"a": {"b": [1, {"c": "one space"}]}}, [[["   "]]]):
        for sort_keys in (True, False):
            assert pretty_json(data, indent=1, sort_keys=sort_keys) == json.dumps(data, indent=1,
                                                                                  sort_keys=sort_keys)


def test_template_marks_are_found_wherever_they_are():
    deep = {"a": [{"b": "x"}, {"c": ["ok", "{{ lookup('pipe', 'id') }}"]}], 3: "y", "k{%": "v"}
    assert _marked(deep) and sorted(_templates(deep, "")) == ["a.1.c.1", "k{%"]
    assert not _marked({"a": [{"b": "{ {"}, "%{", "#"], "c": {}})
    assert _marked({"a": {1, 2}})                     # what orjson cannot write is walked
    docs = Documents()
    docs.files["ansible/host_vars/h1.json"] = {"teton_role": "gpu", "x": {"y": ["{# c #}"]}}
    found = [(f.file, f.path) for f in check_documents(docs) if f.rule == "ansible-template"]
    assert found == [("ansible/host_vars/h1.json", "x.y.0")]


@dataclasses.dataclass(frozen=True)
class _Empty:
    """A dataclass without fields."""


class _Pair(NamedTuple):
    a: int
    b: str


@dataclasses.dataclass(frozen=True)
class _Outer:
    name: str
    inner: tuple[_Pair, ...]
    empty: _Empty
    ratio: float | None = None


def test_to_json_of_dataclasses_named_tuples_and_plain_values():
    x = _Outer("n", (_Pair(1, "x"), _Pair(2, "y")), _Empty(), 0.5)
    for _ in range(2):                                # the second time from the per-type field names
        assert to_json(x) == {"name": "n", "inner": [[1, "x"], [2, "y"]], "empty": {}, "ratio": 0.5}
    assert to_json(_Outer) is _Outer and to_json("s") == "s" and to_json(None) is None
    assert to_json(True) is True and to_json([1, (2, 3)]) == [1, (2, 3)]
