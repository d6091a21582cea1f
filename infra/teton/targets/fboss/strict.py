"""The strict check of one switch's FBOSS configs, run on every render and every read-back with vendor checks:
the schema walk of each file against its root struct of the pinned IDL (`walk`), then the cross-references the IDL
cannot express (`crossref`).  Every finding names the file (`devices/<switch>/agent.conf`: the switch), the JSON
path and the reason.  The reference files are loaded once per process (`State`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from teton.findings import Finding
from teton.targets.fboss.crossref import check_agent, check_bgp
from teton.targets.fboss.data import base_config, find_fboss_dir, platform_mapping
from teton.targets.fboss.idl import Schema, cached_schema
from teton.targets.fboss.platform import PlatformMap, platform_map
from teton.targets.fboss.walk import Issue, walk

AGENT_ROOT = "agent_config.AgentConfig"
BGP_ROOT = "bgp_config.BgpConfig"
_MAPS: dict[tuple[str, str], PlatformMap] = {}
_PLATFORM: dict[tuple[str, str], list[Issue]] = {}


@dataclass(frozen=True)
class State:
    """The reference files one worker uses: the IDL's schema, platform maps and base configs (by FBOSS platform)."""

    root: Path
    schema: Schema
    strict: bool                    # run the strict check (RenderContext.validate)

    @property
    def profile_names(self) -> dict[int, str]:
        return self.schema.enums["switch_config.PortProfileID"]

    def platform(self, platform: str) -> PlatformMap:
        key = (str(self.root), platform)
        if key not in _MAPS:
            _MAPS[key] = platform_map(platform, platform_mapping(str(self.root), platform), self.profile_names)
        return _MAPS[key]

    def base(self, platform: str) -> dict[str, Any]:
        return base_config(str(self.root), platform)

    def base_platform(self, platform: str) -> list[Issue]:
        """The walk's issues of the base config's `platform` section: every switch of the box carries it unchanged,
        so it is walked once."""
        key = (str(self.root), platform)
        if key not in _PLATFORM:
            _PLATFORM[key] = walk(self.schema, {"platform": self.base(platform).get("platform", {})}, AGENT_ROOT)[0]
        return _PLATFORM[key]


def load_state(strict: bool = True, folder: Path | None = None) -> State:
    """The parsed IDL and platform data of the reference files in `folder` (None: where `find_fboss_dir` finds them)."""
    root = find_fboss_dir(folder)
    return State(root, cached_schema(str(root / "idl")), strict)


def schema_findings(state: State, path: str, cfg: Any, root: str) -> list[Finding]:
    issues, _ = walk(state.schema, cfg, root)
    return [Finding(path, i.path, i.message, rule="fboss-schema") for i in issues]


def agent_schema_findings(state: State, platform: str, path: str, agent: Any) -> list[Finding]:
    """The schema walk of an agent config; a `platform` section that is the box's base one is walked once."""
    base = state.base(platform).get("platform")
    if isinstance(agent, dict) and agent.get("platform") == base:
        issues, _ = walk(state.schema, {k: v for k, v in agent.items() if k != "platform"}, AGENT_ROOT)
        issues += state.base_platform(platform)
        return [Finding(path, i.path, i.message, rule="fboss-schema") for i in issues]
    return schema_findings(state, path, agent, AGENT_ROOT)


def check_files(state: State, platform: str, agent_path: str, agent: Any, bgp_path: str | None,
                bgp: Any) -> list[Finding]:
    """Every finding of the strict check of one switch's agent config (and BGP++ config, when it has one)."""
    found = agent_schema_findings(state, platform, agent_path, agent)
    found += [Finding(agent_path, i.path, i.message, rule="fboss-xref")
              for i in check_agent(agent, state.platform(platform), state.profile_names)]
    if bgp_path is not None:
        found += schema_findings(state, bgp_path, bgp, BGP_ROOT)
        ports = agent.get("sw", {}).get("ports", []) if isinstance(agent, dict) and isinstance(
            agent.get("sw"), dict) else []
        ids = {p["logicalID"] for p in ports if isinstance(p, dict) and isinstance(p.get("logicalID"), int)}
        found += [Finding(bgp_path, i.path, i.message, rule="fboss-xref") for i in check_bgp(bgp, ids)]
    return found
