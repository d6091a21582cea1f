"""Attack: the CSV defence looked at a cell's first character only: `hall1;=1+2;` is a formula once a spreadsheet
splits the cell on `;` (a locale's separator, or the import dialog's).  Every part of a cell that would start a
formula (after ; , tab, CR, LF or |, as at the start) gets a "'" before it, in the CSV and in the XLSX sheets."""

from __future__ import annotations

import csv
import io
import re

import pytest

from teton.targets.cabling.runlist import csv_text
from teton.targets.tokens import csv_cell

SPLIT = re.compile(r"[;,\t\r\n|]")


@pytest.mark.parametrize("value", ["hall1;=1+2;", "a,-1", "x\t@SUM(A1)", "r|=cmd|' /c calc'!A1", "a\n+1", "=1",
                                   "ok;;=HYPERLINK(\"http://x\")", "a;\r=1"])
def test_no_part_of_a_cell_starts_a_formula(value):
    cell = csv_cell(value)
    assert not any(part[:1] in ("=", "+", "-", "@") for part in SPLIT.split(cell)), cell
    text = csv_text(["c"], [[value]])
    for line in text.splitlines():          # however a spreadsheet splits the file into lines and cells
        for row in csv.reader(io.StringIO(line)):
            assert not any(part[:1] in ("=", "+", "-", "@") for c in row for part in SPLIT.split(c)), text


@pytest.mark.parametrize("value", ["z01-r001", "400G-FR4", "a;b", "host, rack", 7, None])
def test_a_plain_cell_is_unchanged(value):
    assert csv_cell(value) == value
