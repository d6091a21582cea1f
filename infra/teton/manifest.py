"""manifest.json: what a teton build folder holds.  Written by `teton.pipeline`, read by publishing (is this folder a
teton build?), `teton validate --rendered` (hashes) and `render --only` (which target wrote which file).

    {"generator": "teton", "format": 2, "files": {path: {"sha256", "bytes", "target"}}, "plan": {...figures},
     "targets": {name: version}, "spec": {"cluster", "sha256"}}

`spec` (absent from design-only builds) names the spec a build was rendered from: `render --only` refuses to keep
the files of a build rendered from another spec.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"
GENERATOR = "teton"
FORMAT = 2
_MANIFEST_MAX = 256 * 1024 * 1024  # a teton manifest is a few MB at most; do not read a huge stranger


def manifest_text(entries: dict[str, dict[str, Any]], figures: dict[str, Any], versions: dict[str, str],
                  source: dict[str, str] | None = None) -> str:
    doc = {"generator": GENERATOR, "format": FORMAT, "files": dict(sorted(entries.items())), "plan": figures,
           "targets": dict(sorted(versions.items())), **({"spec": source} if source is not None else {})}
    return json.dumps(doc, indent=1, sort_keys=True, allow_nan=False) + "\n"


def _load(folder: Path | str) -> Any:
    """manifest.json's JSON: a regular file (not a symlink, not a FIFO) of at most _MANIFEST_MAX bytes; raises."""
    fd = os.open(Path(folder) / MANIFEST, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > _MANIFEST_MAX:
            raise ValueError("not a teton manifest")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(_MANIFEST_MAX + 1)
        if len(data) > _MANIFEST_MAX:
            raise ValueError("not a teton manifest")
        return json.loads(data)
    finally:
        os.close(fd)


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """The manifest of a teton build folder, or None when there is none or it is unreadable.  Never raises."""
    try:
        data = _load(folder)
    except Exception:  # noqa: BLE001 - unreadable, a symlink, not JSON, too deep...: no manifest
        return None
    if not _is_teton(data):
        return None
    return data if isinstance(data.get("files"), dict) else None


def is_teton_build(path: Path | str) -> bool:
    """True when `path` is a folder whose manifest.json is a teton manifest (a regular file, not a symlink, at most
    _MANIFEST_MAX bytes).  Never raises.

    A teton manifest is a JSON object with `"generator": "teton"`, or (builds from before that field
    existed) a JSON object with both `"files"` and `"plan"` keys.
    """
    try:
        data = _load(path) if Path(path).is_dir() else None
    except Exception:  # noqa: BLE001 - unreadable, not JSON, too deep...: not a teton build
        return False
    return _is_teton(data)


def _is_teton(data: Any) -> bool:
    return isinstance(data, dict) and (data.get("generator") == GENERATOR or ("files" in data and "plan" in data))
