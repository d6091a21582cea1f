"""YANG validation of whole config_dbs at fleet scale: each distinct shared part validated once.

libyang validates a 128-port Minipack2 config_db in ~25 ms; 3,128 SONiC switches would take ~80 s.  Most of a
config_db (QoS maps, buffers, schedulers, management policy, unused ports) is byte-identical across switches of one
model and plane, so `SplitValidator` validates the per-device tables every time and the shared tables once per distinct
content (keyed by their canonical JSON).  Every table of every device is still checked.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from teton.findings import Finding
from teton.targets.sonic.yang import SonicYangValidator, YangIssue

_compact = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode

# Tables that differ from one switch to the next; everything else (QoS, buffers, management policy) is identical
# across switches of one model and plane, so its validation result is reused for byte-identical content.
PER_DEVICE = frozenset({"DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE", "BGP_NEIGHBOR", "MGMT_PORT",
                        "MGMT_INTERFACE"})
SHARED_CONTEXT = ("PORT", "MGMT_PORT", "DEVICE_METADATA")  # what the shared tables reference


class SplitValidator:
    """YANG-validates whole config_dbs, each distinct shared part once: every table of every device is checked.

    A config_db is split into its per-device tables (validated every time) and its shared tables plus the tables they
    reference (validated once per distinct content, keyed by its canonical JSON).  PORT rows are the one table of both
    kinds: a cabled port's row (it names its peer) is per-device, an unused port's row is the same on every switch of
    the model and is validated with the shared part, which holds every PORT row without its description.
    """

    def __init__(self, yang_dir: str | Path | None = None):
        self.yang = SonicYangValidator(yang_dir)
        self._shared: dict[str, list[YangIssue]] = {}

    def validate(self, device: str, db: dict[str, Any]) -> list[YangIssue]:
        per = {k: v for k, v in db.items() if k in PER_DEVICE}
        if "PORT" in per:
            cabled = {k.split("|", 1)[0] for k in db.get("INTERFACE", {})}
            per["PORT"] = {k: v for k, v in per["PORT"].items() if k in cabled or "description" in v}
        shared = {k: v for k, v in db.items() if k not in PER_DEVICE}
        issues = list(self.yang.validate(device, per))
        if shared or "PORT" in db:
            for k in SHARED_CONTEXT:
                if k in db:
                    shared[k] = _normalised(k, db[k])
            key = hashlib.sha256(_compact(shared).encode()).hexdigest()
            if key not in self._shared:
                self._shared[key] = list(self.yang.validate(device, shared))
            issues += [i for i in self._shared[key] if i.table not in SHARED_CONTEXT]
        return issues


def _normalised(table: str, rows: dict[str, Any]) -> dict[str, Any]:
    """Per-device fields that shared tables never reference, fixed, so that the shared part is the same."""
    if table == "DEVICE_METADATA":
        return {k: {**v, "hostname": "switch", "mac": "02:00:00:00:00:00", "bgp_asn": "4200000000"}
                for k, v in rows.items()}
    if table == "PORT":
        return {k: {f: x for f, x in v.items() if f != "description"} for k, v in rows.items()}
    return rows


def yang_findings(path: str, issues: list[YangIssue]) -> list[Finding]:
    """Findings at `table|key/field` of the config_db at `path`."""
    return [Finding(path, f"{i.table}|{i.key}" + (f"/{i.field}" if i.field else ""), i.message, rule="sonic-yang")
            for i in issues]
