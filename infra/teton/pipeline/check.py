"""`teton render --check DIR`: for repositories that commit their intended configs (the AVD convention), is DIR what
rendering the spec would write?  Renders in memory and compares file by file, manifest included.  Nothing is read
from the render cache here (`RenderCache.writer`): what DIR is compared against is what the targets render now, so a
cache entry, however it got there, can never make a stale or poisoned folder look up to date.

A file is stale when its content differs, when the render has it and DIR has not ("missing"), or when DIR has a file
the render does not ("extra": a device that left the design, a hand-made file).  Hidden files (.gitkeep, .gitignore)
are not compared.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from teton.buildfolder import BuildFileError, BuildFolder
from teton.findings import TetonError
from teton.manifest import MANIFEST, manifest_text
from teton.pipeline import Progress, manifest_entries, render_spec, spec_source
from teton.pipeline.cache import RenderCache
from teton.pipeline.output import confined


class Stale(NamedTuple):
    path: str          # relative to the folder
    why: str           # differs, missing, extra


def check_folder(spec: str | Path, folder: Path, *, yang_dir: Path | None = None, timeout: float | None = None,
                 progress: Progress | None = None, cache: RenderCache | None = None) -> tuple[int, list[Stale]]:
    """(files the render has, the stale files of `folder`, by path)."""
    if not folder.is_dir():
        raise TetonError(f"{folder}: not a folder (render --check compares a folder of committed configs)")
    r = render_spec(spec, yang_dir=yang_dir, timeout=timeout, progress=progress,
                    cache=cache.writer() if cache is not None else None)
    confined(r.files)
    expected: dict[str, str] = {rel: text for files in r.files.values() for rel, text in files.items()}
    entries, versions = manifest_entries(r.files, r.known)
    expected[MANIFEST] = manifest_text(entries, r.figures, versions, spec_source(r.cluster))
    committed = BuildFolder(folder)
    present = set(committed.paths(hidden=False))
    stale: list[Stale] = []
    for rel in sorted(expected.keys() | present):
        if rel not in present:
            stale.append(Stale(rel, "missing"))
        elif rel not in expected:
            stale.append(Stale(rel, "extra"))
        else:
            try:
                same = committed.bytes(rel) == expected[rel].encode("utf-8")
            except BuildFileError:
                same = False
            if not same:
                stale.append(Stale(rel, "differs"))
    return len(expected), stale
