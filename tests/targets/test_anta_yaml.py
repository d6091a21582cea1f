"""teton.targets.eos.anta_catalog.dump_yaml: the catalogs' YAML written directly is what PyYAML's libyaml dumper
writes (`dump_yaml_reference`), on random data, on every lab catalog and on a sample of the 24k's."""

from __future__ import annotations

import random
from typing import Any

import pytest

from teton.fabric.model import Fabric
from teton.targets.eos import anta_catalog
from teton.targets.eos.anta_catalog import catalog_data, device_catalog, dump_yaml, dump_yaml_reference
from teton.targets.eos.avd import validated_structured_config
from teton.targets.eos.structured import structured_config

TRICKY = ["", " ", "a", "A b", "yes", "No", "on", "OFF", "true", "False", "null", "Null", "~", "1", "-1", "+1", "1.5",
          "1e5", ".5", "0x1f", "0o17", "017", "1_000", "1:20", "190:20:30", "2001-12-14", "2001-12-14t21:59:43.1-05:00",
          "<<", "=", ".inf", "-.Inf", ".NaN", "a: b", "a:", "a:b", "fd00::1", "::", "::1", "fe80::1/64", "#x", "a #b",
          "a#b", "-x", "- x", "-", "?x", "? x", ":x", "[a]", "{a}", "a,b", "a [b]", "*x", "&x", "!x", "|x", ">x", "%x",
          "@x", "`x", "'q'", '"q"', "it's", "a\nb", "a\rb", "tab\tx", "lead ", " trail", "two  spaces", "é", "\u2603",
          "\x7f", "\x01", "---", "...", "--- x", "a\\b", "x" * 5000, "y" * 130, "Ethernet1/1", "neighbor 10.0.0.1",
          "z01-ctsw01 Ethernet3/1/1 cable C-00001", "(a) b+c=d", "a/b.c_d-e", "_x", "0", "00", "0.0", "1,000"]
NUMBERS = [0, 1, -7, 2**40, 2**70, 400.0, 0.1, 1e16, 1e-7, -0.0, 12.5, True, False, None, float("nan"), float("inf")]


def _random(rnd: random.Random, depth: int = 0) -> Any:
    kind = rnd.randrange(6 if depth < 4 else 2)
    if kind == 0:
        return rnd.choice(TRICKY)
    if kind == 1:
        return rnd.choice(NUMBERS) if rnd.random() < 0.5 else rnd.choice(TRICKY[:60])
    if kind in (2, 3):
        return {rnd.choice(TRICKY[:90]): _random(rnd, depth + 1) for _ in range(rnd.randrange(5))}
    if kind == 4:
        return [_random(rnd, depth + 1) for _ in range(rnd.randrange(5))]
    return rnd.choice([{}, [], [[]], [{}], {"k": {}}, {"k": []}])


def test_random_documents_are_written_as_libyaml_writes_them() -> None:
    rnd = random.Random(7)
    direct = 0
    for _ in range(3000):
        doc = {rnd.choice(TRICKY[:90]): _random(rnd) for _ in range(rnd.randrange(1, 5))}
        want = dump_yaml_reference(doc)
        assert dump_yaml(doc) == want, doc
        try:
            got = _written_directly(doc)
        except anta_catalog._UnsureYaml:
            continue
        assert got == want, doc
        direct += 1
    assert direct > 1000   # most of them by the direct writer, the others by PyYAML
    for doc in ({}, [], "x", 1, None, [1, {"a": 2}], {1: "a"}, {"a": (1, 2)}, {"a": {"b": 1}, 2: 3}):
        assert dump_yaml(doc) == dump_yaml_reference(doc)
    shared = {"x": 1}
    assert dump_yaml({"a": shared, "b": shared}) == dump_yaml_reference({"a": shared, "b": shared})   # an alias


def _written_directly(data: dict[str, Any]) -> str:
    """`dump_yaml` without its fallback: raises where the direct writer would hand the document to PyYAML."""
    out: list[str] = []
    anta_catalog._WRITER.mapping(data, "", "", out, {id(data)})
    return "".join(out)


def _check_catalogs(fabric: Fabric, step: int) -> int:
    n = 0
    for d in fabric.switches("eos")[::step]:
        issues, validated = validated_structured_config(d.name, structured_config(fabric, d))
        assert not issues and validated is not None
        data = catalog_data(device_catalog(fabric, d, validated))
        assert _written_directly(data) == dump_yaml_reference(data), d.name
        n += 1
    return n


def test_every_lab_catalog_is_written_directly_as_libyaml_writes_it(lab_fabric: Fabric) -> None:
    assert _check_catalogs(lab_fabric, 1) == len(lab_fabric.switches("eos")) == 16


@pytest.mark.scale24k
def test_a_sample_of_the_24k_catalogs_is_written_directly_as_libyaml_writes_it() -> None:
    from tests.helpers import REF24K
    from teton.pipeline import load_and_design

    fabric = load_and_design(REF24K).fabric
    assert {d.role for d in fabric.switches("eos")[::12]} == {d.role for d in fabric.switches("eos")}
    assert _check_catalogs(fabric, 12) == 16


def test_a_str_remembered_as_key_or_value_is_written_as_when_first_met(monkeypatch: pytest.MonkeyPatch) -> None:
    writer = anta_catalog._YamlWriter()
    monkeypatch.setattr(anta_catalog, "_WRITER", writer)
    monkeypatch.setattr(anta_catalog._YamlWriter, "MAX_ASKED", 50)   # the memos start over too
    docs = [{s: s, "k": [s, {s: 1}]} for s in TRICKY] + [{"a": {s: [s] for s in TRICKY[:40]}}]
    for _ in range(2):
        for doc in docs:
            assert dump_yaml(doc) == dump_yaml_reference(doc), doc
    assert writer.keys and writer.values and len(writer.values) <= 50
