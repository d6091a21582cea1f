"""The report's sections that other commands fill: the bill of materials, `teton verify`'s results and its what-if
table.  Each is a small function interface, so the report needs none of those packages:

    from teton.report.sections import Table, register

    def bom(fabric, build):                      # build: the BuildFolder the report links to, or None
        return [Table("Optics", ("part", "count"), (("400G-FR4", 104),))]

    register("bom", bom)

A provider returns the section's tables, or None when it has nothing for this cluster (the section then says "not
available"), or raises `Unavailable` with the reason to show.  `write_report(..., providers={...})` takes providers
for one report; `register` adds one for every report of the process.  Without a provider, a section is shown and
says it is not available.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from teton.buildfolder import BuildFileError, BuildFolder
from teton.fabric.model import Fabric
from teton.findings import TetonError

Cell = str | int | float | None


@dataclass(frozen=True)
class Table:
    """One table of a section: a title, its columns, its rows (cells written as text), an optional note under it."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Cell, ...], ...]
    note: str = ""


class Unavailable(TetonError):
    """A provider cannot give its section for this report (the message says why)."""


Provider = Callable[[Fabric, BuildFolder | None], Sequence[Table] | None]


class Section(NamedTuple):
    key: str
    title: str
    absent: str            # what the page says when no provider gives the section


SECTIONS: tuple[Section, ...] = (
    Section("bom", "Bill of materials", "not available: no bill-of-materials provider is registered"),
    Section("verify", "Verification (teton verify)", "not available: no `teton verify` results for this build"),
    Section("what_if", "What-if: each tier's single-failure cost", "not available: no what-if results (teton verify) "
            "for this build"),
)
_REGISTERED: dict[str, Provider] = {}


def register(key: str, provider: Provider) -> None:
    """Give section `key` (one of SECTIONS) its provider for every report of this process."""
    if key not in {s.key for s in SECTIONS}:
        raise KeyError(f"no report section {key!r} (sections: {', '.join(s.key for s in SECTIONS)})")
    _REGISTERED[key] = provider


def unregister(key: str) -> None:
    _REGISTERED.pop(key, None)


def gather(fabric: Fabric, build: BuildFolder | None,
           providers: Mapping[str, Provider] | None = None) -> list[tuple[Section, Sequence[Table] | None, str]]:
    """Every section with its tables (None: not available) and what to say when it is not."""
    chosen = {**_REGISTERED, **(providers or {})}
    out: list[tuple[Section, Sequence[Table] | None, str]] = []
    for section in SECTIONS:
        provider = chosen.get(section.key)
        tables: Sequence[Table] | None = None
        why = section.absent
        if provider is not None:
            try:
                tables = provider(fabric, build)
            except (Unavailable, TetonError) as exc:
                why = f"not available: {exc}"
            if tables is None and why == section.absent:
                why = "not available for this cluster"
        out.append((section, tables, why))
    return out


BOM = "cabling/bom.csv"


def bom_tables(fabric: Fabric, folder: BuildFolder | None) -> Sequence[Table] | None:
    """The "bom" section's provider: the build's bill of materials, as the cabling target wrote it (`BOM`)."""
    if folder is None:
        return None
    try:        # through the BuildFolder: a regular file inside the build, bounded
        text = folder.text(BOM)
    except BuildFileError as exc:
        if exc.problem != "missing":
            raise           # a symlink out, a FIFO, too large: the section says so (gather)
        raise Unavailable(f"the build has no {BOM} (render it with the cabling target)") from None
    rows = list(csv.reader(io.StringIO(text)))
    if not rows:
        return None
    return [Table("Bill of materials", tuple(rows[0]), tuple(tuple(r) for r in rows[1:]), note=f"from {BOM}")]
