"""teton.targets.cabling.runlist.csv_text: the rows written in one call where no cell needs `csv_cell` are exactly
the text of the cell-by-cell writing (`csv_text_reference`), on random cells and on the lab's and the 24k's tables."""

from __future__ import annotations

import csv
import io
import random
from typing import Any

import pytest

from teton.fabric.model import Fabric
from teton.pipeline import Designed
from teton.targets.cabling import runlist
from teton.targets.cabling.runlist import csv_text, csv_text_reference

_CHARS = "ab-=+@,;|\t\r\n\" '0é"


def _cell(rnd: random.Random) -> Any:
    kind = rnd.randrange(6)
    if kind == 0:
        return rnd.choice([0, -1, 7, 2.5, -0.5, None, True, ""])
    if kind == 1:
        return rnd.choice(["z01-r001", "400G-FR4", "a, b", "=1", "-x", "@a", "+1", 'say "hi"', "a;-b", "x|=y"])
    return "".join(rnd.choice(_CHARS) if rnd.random() < 0.2 else rnd.choice("abcxyz019 ")
                   for _ in range(rnd.randrange(8)))


def test_the_one_call_path_writes_the_cell_by_cell_text_on_random_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(43)
    fallbacks: list[int] = []

    def counted(columns: Any, rows: Any) -> str:
        fallbacks.append(1)
        return csv_text_reference(columns, rows)

    monkeypatch.setattr(runlist, "csv_text_reference", counted)
    for _ in range(3000):
        columns = [rnd.choice(["a", "-b", "=c", "d,e"]) for _ in range(rnd.randrange(1, 4))]
        rows = [[_cell(rnd) for _ in range(rnd.randrange(1, 5))] for _ in range(rnd.randrange(4))]
        assert csv_text(columns, rows) == csv_text_reference(columns, rows), rows
        assert csv_text(columns, (tuple(r) for r in rows)) == csv_text_reference(columns, rows)
        iterators: list[Any] = [iter(r) for r in rows]     # rows as one-pass iterables
        assert csv_text(columns, iterators) == csv_text_reference(columns, rows)
    assert 1000 < len(fallbacks) < 5000   # both paths taken often


@pytest.mark.parametrize("value", ["=1", "-1", "@a", "+a", "a,=b", "a\n-b", "a;-b", "a|@b", "a\tb", "a\rb", 'x"-y', -3])
def test_what_csv_cell_may_change_is_written_cell_by_cell(value: Any) -> None:
    raw = io.StringIO()
    csv.writer(raw, lineterminator="\n").writerows([["h"], ["ok", value]])
    assert runlist._defusable(raw.getvalue(), 2)
    assert csv_text(["h"], [["ok", value]]) == csv_text_reference(["h"], [["ok", value]])


def test_plain_rows_take_the_one_call_path() -> None:
    text = csv_text_reference(["-h", "=g"], [["z01-r001", "a, b - c; d|e", 400, 2.5, None, 'q "x"']])
    assert text.endswith('z01-r001,"a, b - c; d|e",400,2.5,,"q ""x"""\n')
    assert not runlist._defusable(text, text.index("\n") + 1)


def _check_tables(fabric: Fabric) -> None:
    from teton.fabric.bom import BOM_COLUMNS, RACK_COLUMNS, bom, bom_rows, rack_loads, rack_rows
    from teton.fabric.cables import cables

    found = cables(fabric)
    for columns, rows in ((runlist.COLUMNS, [runlist.row(c) for c in found]),
                          (BOM_COLUMNS, bom_rows(bom(fabric, found))), (RACK_COLUMNS, rack_rows(rack_loads(fabric)))):
        assert csv_text(columns, rows) == csv_text_reference(columns, rows)


def test_the_run_list_bom_and_rack_power_of_the_labs(lab_fabric: Fabric, lab_ib_fabric: Fabric) -> None:
    _check_tables(lab_fabric)
    _check_tables(lab_ib_fabric)


@pytest.mark.scale24k
def test_the_run_list_bom_and_rack_power_of_the_24k(roce24k: Designed) -> None:
    _check_tables(roce24k.fabric)
