"""The roles' own contracts, read from playbooks/: which groups each role runs on (site.yml) and what variables it
takes (`meta/argument_specs.yml`), turned into JSON Schemas so the inventory is checked against them when it is
rendered (Ansible checks them again when a role starts).

Argument-spec types map to JSON Schema types (str, int, bool, float, list with `elements`, dict with `options`, path,
raw); `choices` become enums; an option that is not required may be null (Ansible reads None as "not given");
`required` is checked on the union of a host's group and host variables.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from teton.findings import TetonError

PLAYBOOKS = Path(__file__).resolve().parents[4] / "playbooks"

_TYPES: dict[str, Any] = {"str": {"type": "string"}, "path": {"type": "string"}, "int": {"type": "integer"},
                          "bool": {"type": "boolean"}, "float": {"type": "number"}, "raw": {},
                          "list": {"type": "array"}, "dict": {"type": "object"}}


class ArgspecError(ValueError, TetonError):
    """A role's argument spec (or site.yml) is not what this module reads; the message names the file."""


@dataclass(frozen=True)
class RoleSpec:
    name: str
    file: str                      # relative to the repository, for findings
    schema: dict[str, Any]         # properties only (every option, not required)
    required: frozenset[str]


def option_schema(spec: dict[str, Any], where: str) -> dict[str, Any]:
    kind = spec.get("type", "str")
    if kind not in _TYPES:
        raise ArgspecError(f"{where}: type {kind!r} is not one teton reads ({', '.join(sorted(_TYPES))})")
    out: dict[str, Any] = dict(_TYPES[kind])
    if "choices" in spec:
        out = {"enum": list(spec["choices"])}
    if kind == "list" and "elements" in spec:
        item = {"type": spec["elements"], **({"options": spec["options"]} if "options" in spec else {})}
        out["items"] = option_schema(item, f"{where}.elements")
    if kind == "dict" and "options" in spec:
        opts = spec["options"] or {}
        out["properties"] = {k: option_schema(v or {}, f"{where}.{k}") for k, v in opts.items()}
        out["required"] = sorted(k for k, v in opts.items() if (v or {}).get("required"))
    if not spec.get("required") and kind != "raw":
        out = {"anyOf": [out, {"type": "null"}]}      # Ansible takes None for an option that is not required
    return out


@cache
def role_spec(role: str) -> RoleSpec:
    path = PLAYBOOKS / "roles" / role / "meta" / "argument_specs.yml"
    rel = f"playbooks/roles/{role}/meta/argument_specs.yml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        options = data["argument_specs"]["main"]["options"]
    except (OSError, yaml.YAMLError, KeyError, TypeError) as exc:
        raise ArgspecError(f"{rel}: cannot be read as a role's argument spec ({type(exc).__name__}: {exc})") from None
    props = {k: option_schema(v or {}, f"{rel}:{k}") for k, v in options.items()}
    required = frozenset(k for k, v in options.items() if (v or {}).get("required"))
    return RoleSpec(role, rel, {"type": "object", "properties": props}, required)


@cache
def site_roles() -> dict[str, tuple[str, ...]]:
    """{group: roles site.yml applies to it}, from playbooks/site.yml (a play's `hosts` may name groups a:b)."""
    path = PLAYBOOKS / "site.yml"
    try:
        plays = yaml.safe_load(path.read_text(encoding="utf-8"))
        out: dict[str, list[str]] = {}
        for play in plays:
            roles = [r if isinstance(r, str) else r["role"] for r in play.get("roles", [])]
            for group in str(play["hosts"]).split(":"):
                out.setdefault(group.strip(), []).extend(roles)
    except (OSError, yaml.YAMLError, KeyError, TypeError, AttributeError) as exc:
        raise ArgspecError(f"playbooks/site.yml: cannot be read ({type(exc).__name__}: {exc})") from None
    return {g: tuple(dict.fromkeys(r)) for g, r in out.items()}
