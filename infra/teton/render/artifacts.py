"""Write a build folder atomically, with a manifest of every file's sha256 and the plan's figures."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

Files = dict[str, str | bytes]


def to_bytes(content: str | bytes) -> bytes:
    return content.encode("utf-8") if isinstance(content, str) else content


def manifest(files: Files, figures: dict[str, Any]) -> str:
    entries = {path: {"sha256": hashlib.sha256(to_bytes(c)).hexdigest(), "bytes": len(to_bytes(c))}
               for path, c in sorted(files.items())}
    return json.dumps({"files": entries, "plan": figures}, indent=1, sort_keys=True) + "\n"


def write_atomically(out: Path, files: Files, figures: dict[str, Any]) -> Path:
    """Write `files` plus manifest.json into `out`: a temporary sibling folder first, then one rename.

    If anything fails before the rename, `out` keeps what it held; the temporary folder is removed.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    old = out.with_name(f".{out.name}.old-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        made: set[Path] = set()
        for rel, content in sorted(files.items()):
            target = tmp / rel
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            target.write_bytes(to_bytes(content))
        (tmp / "manifest.json").write_text(manifest(files, figures), encoding="utf-8")
        if out.exists():
            out.rename(old)
        tmp.rename(out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not out.exists():
            old.rename(out)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return out
