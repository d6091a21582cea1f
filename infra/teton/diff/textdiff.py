"""Unified diffs of rendered files, fast on the large, mostly equal files a fabric renders (fabric.json of the 24k
cluster is ~80,000 lines): the common head and tail are cut off before difflib sees the rest."""

from __future__ import annotations

import difflib
from typing import NamedTuple


class FileDiff(NamedTuple):
    path: str
    added: int                 # lines
    removed: int
    lines: list[str]           # the unified diff, without line ends ("" when equal)
    status: str = "changed"    # changed, added (new file), removed


def _split(text: str | None) -> list[str]:
    return [] if text is None else text.splitlines()


def unified(path: str, old: str | None, new: str | None, context: int = 3) -> FileDiff | None:
    """The unified diff of one file (None: equal); `old`/`new` None for a file that is not on that side."""
    if old == new:
        return None
    a, b = _split(old), _split(new)
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
        tail += 1
    lo = max(0, head - context)
    a_mid, b_mid = a[lo:len(a) - max(0, tail - context)], b[lo:len(b) - max(0, tail - context)]
    lines: list[str] = [f"--- a/{path}" if old is not None else "--- /dev/null",
                        f"+++ b/{path}" if new is not None else "+++ /dev/null"]
    added = removed = 0
    matcher = difflib.SequenceMatcher(None, a_mid, b_mid)
    for group in matcher.get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines.append(f"@@ -{_range(lo + i1, i2 - i1)} +{_range(lo + j1, j2 - j1)} @@")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                lines += [" " + s for s in a_mid[x1:x2]]
                continue
            if tag in ("replace", "delete"):
                lines += ["-" + s for s in a_mid[x1:x2]]
                removed += x2 - x1
            if tag in ("replace", "insert"):
                lines += ["+" + s for s in b_mid[y1:y2]]
                added += y2 - y1
    if old is not None and new is not None and (old.endswith("\n") != new.endswith("\n")):
        lines.append("\\ No newline at end of file")
    status = "added" if old is None else "removed" if new is None else "changed"
    return FileDiff(path, added, removed, lines, status)


def _range(start: int, length: int) -> str:
    """difflib's unified range: 1-based start, ',length' unless 1 (an empty range names the line before it)."""
    first = start + 1 if length else start
    return f"{first}" if length == 1 else f"{first},{length}"
