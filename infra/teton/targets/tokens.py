"""Values on their way into a text file: what a format cannot hold is refused at render, or defused.

The spec's grammar (`teton.spec.model`) keeps such values out already; this is the defence beside it, for whatever
reaches a target another way (a Fabric read back from a build, a Python spec's model, a later field without a
grammar).  A line config (FRR, EOS, slurm.conf, gres.conf, partitions.conf, INI) takes a value as one token of one
line: `token()` refuses anything else with a SpecError naming the device and the field, rather than writing a file
whose lines say something else.  A CSV cell that is, or holds, a formula to a spreadsheet (= + - @ at its start, or
right after a character a spreadsheet may split a cell on: ; , tab, CR, LF, |) is defused with a "'" before each
(`csv_cell`).
"""

from __future__ import annotations

import re
from typing import Any

from teton.findings import Finding, SpecError

# one token of a line config: no whitespace, no comment or quote character, no '=' (slurm's key=value), no '{' '}'
_TOKEN = re.compile(r"[A-Za-z0-9_.:/@%+,\[\]-]{1,255}")
# where a spreadsheet may start a cell (the start of the text, or after a separator a locale or the import dialog may
# split on), followed by what starts a formula
_FORMULA = re.compile(r"(^|[;,\t\r\n|])(?=[=+\-@\t\r])")
# what any cell `_FORMULA` changes holds (a formula character at the start, or a separator anywhere): most cells have
# neither, and a search costs a fraction of a substitution
_MAYBE = re.compile(r"^[=+\-@\t\r]|[;,\t\r\n|]")


def token(value: Any, device: str, field: str, fmt: str, file: str = "") -> str:
    """`value` as one token of a line of `fmt`, or SpecError at `<device>.<field>` (the value is shown escaped)."""
    text = str(value)
    if _TOKEN.fullmatch(text) and not text.startswith("-"):
        return text
    shown = repr(text if len(text) <= 60 else text[:57] + "...")
    raise SpecError([Finding(file or fmt, f"{device}.{field}", f"{shown} cannot be written into {fmt} as one token "
                             "(letters, digits and _ . : / @ % + , [ ] -, not starting with '-'): refused rather than "
                             "changing the file's lines", rule="render")])


def csv_cell(value: Any) -> Any:
    """A CSV cell that a spreadsheet shows as text: every part of a string that would start a formula (= + - @ at
    the start, or after ; , tab, CR, LF or |, where a spreadsheet may split the cell) gets a "'" before it."""
    if not isinstance(value, str) or _MAYBE.search(value) is None:
        return value
    return _FORMULA.sub(r"\1'", value)
