"""The host intents in fabric.json: two sections after the links, so the lines before them are those of a Fabric
without hosts.

    "hosts": {renderer, lldp, nccl, storage mounts, scheduler}          (one line)
    "host_plans": [one host per line: {"device", "kind": "gpu"|"storage"|"service", ...its plan}]

Written by the generic codec (`teton.fabric.codec`), so `load(dump(f)) == f` holds for every field without code
here.
"""

from __future__ import annotations

import json
import typing
from collections.abc import Mapping
from typing import Any

from teton.fabric.codec import from_json, to_json
from teton.fabric.hostplan import GpuHostPlan, HostPlan, HostSettings, ServicePlan, StoragePlan

_dump = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=False).encode
KINDS: dict[str, type[GpuHostPlan] | type[StoragePlan] | type[ServicePlan]] = {
    "gpu": GpuHostPlan, "storage": StoragePlan, "service": ServicePlan}


def dump_hosts(settings: HostSettings | None, plans: Mapping[str, HostPlan | None]) -> str:
    """',\\n"hosts":...,\\n"host_plans":[...]' (to follow the links section), or '' when there is nothing to write."""
    rows = []
    for name in sorted(plans):
        plan = plans[name]
        if plan is None:
            continue
        kind = next(k for k, cls in KINDS.items() if isinstance(plan, cls))
        rows.append(_dump({"device": name, "kind": kind, **to_json(plan)}))
    if settings is None and not rows:
        return ""
    return ''.join([',\n"hosts":', _dump(to_json(settings)), ',\n"host_plans":[\n', ",\n".join(rows), "\n]"])


def load_hosts(data: Mapping[str, Any]) -> tuple[HostSettings | None, dict[str, HostPlan]]:
    """The settings and plans of a fabric.json document (none when it has no host sections)."""
    settings = data.get("hosts")
    plans: dict[str, HostPlan] = {}
    for k, row in enumerate(data.get("host_plans", ())):
        cls = KINDS.get(row.get("kind"))
        if cls is None:
            raise ValueError(f"host_plans[{k}]: kind {row.get('kind')!r} is not one of {', '.join(KINDS)}")
        plans[row["device"]] = from_json(cls, row)
    return (None if settings is None else typing.cast(HostSettings, from_json(HostSettings, settings))), plans
