"""A site's build folder: OUT/ holding one build per cluster (OUT/<cluster>/) and the tier's (OUT/<site>/), with the
index OUT/site.json that names them:

    {"format": 1, "site": "lab", "tier": "lab", "clusters": {"lab-a": "lab-a", "lab-b": "lab-b"}}

Folders are relative to OUT, one name each (no path separator, not `.` or `..`); clusters in the site's order (their
slots).  `teton render SITE -o OUT` writes it; `teton verify OUT` reads it.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teton.findings import TetonError

SITE_JSON = "site.json"
FORMAT = 1
MAX_INDEX = 1024 * 1024            # bytes of site.json
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class SiteIndex:
    root: Path
    site: str
    tier: str                          # the tier's build folder, relative to root
    clusters: dict[str, str]           # cluster -> its build folder, relative to root, in the site's order

    def folder(self, name: str) -> Path:
        return self.root / name

    @property
    def builds(self) -> dict[str, str]:
        """Every build's folder by what it is: the clusters', then the tier's (under the site's name)."""
        return {**self.clusters, self.site: self.tier}


def is_site_build(path: str | Path) -> bool:
    """Whether `path` is a site's build folder (it holds site.json), without reading it."""
    return (Path(path) / SITE_JSON).is_file()


def index_data(site: str, tier: str, clusters: dict[str, str],
               manifests: dict[str, str] | None = None) -> dict[str, Any]:
    """site.json's content; `manifests`: each build folder's manifest.json sha256 (what `teton render` publishes)."""
    data: dict[str, Any] = {"format": FORMAT, "site": site, "tier": tier, "clusters": dict(clusters)}
    if manifests is not None:
        data["manifests"] = dict(manifests)
    return data


def write_index(out: Path, data: dict[str, Any]) -> Path:
    """OUT/site.json, atomically (deterministic: the clusters in the site's order, as given)."""
    path = Path(out) / SITE_JSON
    tmp = path.with_name(f".{SITE_JSON}.tmp-{os.getpid()}")
    try:
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read_index(out: str | Path) -> SiteIndex:
    """OUT/site.json, checked: TetonError naming the file, the path inside it and the problem."""
    root = Path(out)
    path = root / SITE_JSON
    try:
        if path.stat().st_size > MAX_INDEX:
            raise TetonError(f"{path}: larger than {MAX_INDEX:,} bytes: not a site index teton writes")
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TetonError(f"{path}: no such file: {root} is not a site's build folder") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TetonError(f"{path}: cannot be read ({exc})") from None
    except json.JSONDecodeError as exc:
        raise TetonError(f"{path}: line {exc.lineno}: not JSON ({exc.msg})") from None

    def bad(where: str, problem: str) -> TetonError:
        return TetonError(f"{path}: {where}: {problem}")

    if not isinstance(data, dict):
        raise bad("<root>", "not an object")
    if data.get("format") != FORMAT:
        raise bad("format", f"{data.get('format')!r}: this teton reads format {FORMAT}; render the site again")
    site, tier, clusters = data.get("site"), data.get("tier"), data.get("clusters")
    if not isinstance(site, str) or not _NAME.match(site):
        raise bad("site", f"{site!r} is not a site's name")
    if not isinstance(clusters, dict) or not clusters:
        raise bad("clusters", "give an object of at least one cluster: its build folder")
    for key, where in [(tier, "tier"), *((v, f"clusters.{k}") for k, v in clusters.items())]:
        if not isinstance(key, str) or not _NAME.match(key) or key in (".", ".."):
            raise bad(where, f"{key!r} is not a folder's name inside {root}")
        if not (root / key).is_dir():
            raise bad(where, f"{root / key}: no such build folder")
    for name in clusters:
        if not _NAME.match(name):
            raise bad(f"clusters.{name}", "not a cluster's name")
    folders = [tier, *clusters.values()]
    if len(set(folders)) != len(folders):
        raise bad("clusters", "two builds share a folder")
    if site in clusters:
        raise bad("site", f"{site!r} is also a cluster's name")
    assert isinstance(tier, str)
    return SiteIndex(root, site, tier, {str(k): str(v) for k, v in clusters.items()})
