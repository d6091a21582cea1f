"""The host intents in fabric.json: two sections after the links, so the lines before them are those of a Fabric
without hosts.

    "hosts": {renderer, lldp, nccl, storage mounts, scheduler}          (one line)
    "host_plans": [one host per line: {"device", "kind": "gpu"|"storage", ...its plan}]

Written generically (a dataclass as an object of its fields, a NamedTuple or tuple as a list) and read back by the type
hints of `teton.fabric.hostplan`, so `load(dump(f)) == f` holds for every field without code here.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping
from functools import cache
from typing import Any

from teton.fabric import hostplan
from teton.fabric.hostplan import GpuHostPlan, HostPlan, HostSettings, StoragePlan

_dump = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False).encode
KINDS: dict[str, type[GpuHostPlan] | type[StoragePlan]] = {"gpu": GpuHostPlan, "storage": StoragePlan}


def _to_json(x: Any) -> Any:
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {f.name: _to_json(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, tuple):
        return [_to_json(v) for v in x]
    return x


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, vars(hostplan))


def _from_json(tp: Any, data: Any) -> Any:
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        if data is None:
            return None
        return _from_json(next(a for a in args if a is not type(None)), data)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_from_json(args[0], v) for v in data)
        return tuple(_from_json(a, v) for a, v in zip(args, data, strict=True))
    if isinstance(tp, type) and issubclass(tp, tuple) and hasattr(tp, "_fields"):   # a NamedTuple
        hints = _hints(tp)
        return tp(*(_from_json(hints[f], v) for f, v in zip(tp._fields, data, strict=True)))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        return tp(**{f.name: _from_json(hints[f.name], data[f.name]) for f in dataclasses.fields(tp)})
    return data


def dump_hosts(settings: HostSettings | None, plans: Mapping[str, HostPlan | None]) -> str:
    """',\\n"hosts":...,\\n"host_plans":[...]' (to follow the links section), or '' when there is nothing to write."""
    rows = []
    for name in sorted(plans):
        plan = plans[name]
        if plan is None:
            continue
        kind = "gpu" if isinstance(plan, GpuHostPlan) else "storage"
        rows.append(_dump({"device": name, "kind": kind, **_to_json(plan)}))
    if settings is None and not rows:
        return ""
    return ''.join([',\n"hosts":', _dump(_to_json(settings)), ',\n"host_plans":[\n', ",\n".join(rows), "\n]"])


def load_hosts(data: Mapping[str, Any]) -> tuple[HostSettings | None, dict[str, HostPlan]]:
    """The settings and plans of a fabric.json document (none when it has no host sections)."""
    settings = data.get("hosts")
    plans: dict[str, HostPlan] = {}
    for k, row in enumerate(data.get("host_plans", ())):
        cls = KINDS.get(row.get("kind"))
        if cls is None:
            raise ValueError(f"host_plans[{k}]: kind {row.get('kind')!r} is neither gpu nor storage")
        plans[row["device"]] = _from_json(cls, row)
    return (None if settings is None else typing.cast(HostSettings, _from_json(HostSettings, settings))), plans
