"""The unified diff of rendered files: correct (it patches old into new), counted, and what difflib writes where the
alignment is unambiguous."""

from __future__ import annotations

import difflib
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from teton.diff.textdiff import unified

HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$")


def patch(old: list[str], diff: list[str]) -> list[str]:
    """Apply a unified diff (as `unified` writes it) to the lines of the old file."""
    out: list[str] = []
    at = 0
    for line in diff[2:]:
        m = HUNK.match(line)
        if m:
            start = int(m.group(1))
            length = int(m.group(2)) if m.group(2) is not None else 1
            first = start - 1 if length else start
            out += old[at:first]
            at = first
            continue
        tag, text = line[:1], line[1:]
        if tag == " ":
            assert old[at] == text
            out.append(text)
            at += 1
        elif tag == "-":
            assert old[at] == text
            at += 1
        elif tag == "+":
            out.append(text)
    return out + old[at:]


lines = st.lists(st.sampled_from(["a", "b", "c", "}", "", "x y", "{"]), max_size=40)


@settings(max_examples=300, deadline=None)
@given(lines, lines, st.integers(min_value=0, max_value=4))
def test_the_diff_patches_old_into_new_and_counts_its_lines(a, b, context):
    old, new = "".join(x + "\n" for x in a), "".join(x + "\n" for x in b)
    d = unified("f", old, new, context)
    if a == b:
        assert d is None
        return
    assert d is not None
    assert patch(a, d.lines) == b
    assert d.added == sum(1 for x in d.lines[2:] if x.startswith("+"))
    assert d.removed == sum(1 for x in d.lines[2:] if x.startswith("-"))


def test_same_text_as_difflib_on_a_large_mostly_equal_file():
    a = [f"row {i}" for i in range(20_000)]
    b = list(a)
    b[100] = "row 100 changed"
    del b[5_000:5_003]
    b.insert(15_000, "row new")
    expected = list(difflib.unified_diff(a, b, "a/f", "b/f", lineterm=""))
    got = unified("f", "\n".join(a) + "\n", "\n".join(b) + "\n")
    assert got is not None and got.lines == expected
    assert (got.added, got.removed) == (2, 4)


def test_new_and_removed_files():
    added = unified("f", None, "x\ny\n")
    assert added is not None and added.status == "added" and added.lines[:3] == ["--- /dev/null", "+++ b/f",
                                                                              "@@ -0,0 +1,2 @@"]
    removed = unified("f", "x\n", None)
    assert removed is not None and removed.status == "removed" and removed.removed == 1
