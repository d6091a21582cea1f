"""FBOSS's reference files: the pinned thrift IDL, the platform mappings of Wedge400 and Minipack2 and FBOSS's base
agent configs for those boxes.  They are data, never copied into the repository: `find_fboss_dir` looks, in the order
docs/checks.md documents, at `--fboss-dir` / $TETON_FBOSS_DIR, then shared/fboss in the folder holding the checkout,
then the pinned upstream commits `scripts/fetch-fboss-data` places in the cache where the network allows.  A folder
counts when it has the layout of shared/fboss (its README lists it):

    idl/fboss/agent/agent_config.thrift ...       the IDL and its includes (bgp_config.thrift for BGP++)
    platform-mappings/<Name>PlatformMapping.json  FBOSS's platform mapping of a box, as the agent embeds it
    samples/<platform>.agent.json                 FBOSS's base agent config of a box (its `platform` section)
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from teton.findings import TetonError
from teton.targets.fboss.bounded import MAX_JSON_FILE, read_text
from teton.targets.reference import ReferenceData

PINNED_COMMIT = "14ec47ec32db58d91cba6033ca89f8b91db15cd5"      # facebook/fboss, the IDL and platform mappings

# Per FBOSS platform (the catalogue's `platform: {fboss: ...}`): its platform mapping and its base agent config.
PLATFORMS: dict[str, tuple[str, str]] = {
    "fuji": ("Fuji16QPimPlatformMapping.json", "fuji.agent.json"),
    "wedge400": ("Wedge400PlatformMapping.json", "wedge400.agent.json"),
}
_MARKER = Path("idl") / "fboss" / "agent" / "agent_config.thrift"

FBOSS_FILES = ReferenceData(
    name="fboss", label="FBOSS reference files", env="TETON_FBOSS_DIR", option="--fboss-dir", option_exports=True,
    shared_subdir="fboss", usable=lambda folder: (folder / _MARKER).is_file(), lacks=f"has no {_MARKER}",
    expect="point it at a folder laid out as shared/fboss (docs/checks.md)",
    fetch_hint=f"run scripts/fetch-fboss-data where GitHub is reachable (facebook/fboss@{PINNED_COMMIT[:12]} into "
               "{cached})",
    cache_subdir=f"fboss/{PINNED_COMMIT[:12]}", place="them")
ENV_VAR = FBOSS_FILES.env
SHARED_DIR = FBOSS_FILES.shared
CACHED_DIR = FBOSS_FILES.cached or SHARED_DIR


def find_fboss_dir(explicit: str | Path | None = None) -> Path:
    """The FBOSS reference folder (`FBOSS_FILES.find`): `explicit` or $TETON_FBOSS_DIR, else the one beside the
    repository, else the pinned commit fetched by scripts/fetch-fboss-data.  TetonError (the three ways) if none has
    the IDL."""
    return FBOSS_FILES.find(explicit)


def _json(path: Path) -> Any:
    try:
        return json.loads(read_text(path, MAX_JSON_FILE))
    except json.JSONDecodeError as exc:
        raise TetonError(f"FBOSS reference file {path}: not JSON ({exc.msg} at line {exc.lineno})") from None


def _known(platform: str) -> tuple[str, str]:
    try:
        return PLATFORMS[platform]
    except KeyError:
        raise TetonError(f"no FBOSS platform mapping for platform {platform!r}; teton knows "
                         f"{', '.join(sorted(PLATFORMS))}") from None


@cache
def platform_mapping(root: str, platform: str) -> dict[str, Any]:
    """FBOSS's PlatformMapping of `platform` (thrift SimpleJSON, as the agent embeds it)."""
    data: dict[str, Any] = _json(Path(root) / "platform-mappings" / _known(platform)[0])
    return data


@cache
def base_config(root: str, platform: str) -> dict[str, Any]:
    """FBOSS's base AgentConfig of `platform` (the hw-test config FBOSS publishes for the box)."""
    data: dict[str, Any] = _json(Path(root) / "samples" / _known(platform)[1])
    return data


def sample_paths(root: Path) -> list[Path]:
    """FBOSS's own sample configs in the folder: the agent configs and the BGP++ one."""
    return sorted((root / "samples").glob("*.agent.json")) + sorted((root / "samples").glob("*.conf"))
