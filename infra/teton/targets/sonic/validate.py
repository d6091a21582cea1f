"""YANG validation of whole config_dbs at fleet scale: each distinct content validated once.

libyang validates a 128-port Minipack2 config_db in ~25 ms; 3,128 SONiC switches would take ~80 s.  Most of a
config_db (QoS maps, buffers, schedulers, management policy) is byte-identical across switches of one model and plane,
and so is most of its PORT table (a port's lanes, alias, speed, FEC; every unused port whole): only a used port's
description names the switch's neighbour.  So `SplitValidator` validates the per-device tables every time, and the
shared tables and the PORT rows (without their descriptions) once per distinct content (keyed by their JSON
text).  Every table of every device is still checked.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson

from teton.findings import Finding
from teton.targets.sonic.yang import SonicYangValidator, YangIssue

_compact = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode

# Tables that differ from one switch to the next; everything else (QoS, buffers, management policy) is identical
# across switches of one model and plane, so its validation result is reused for byte-identical content.  A table that
# differs per switch but is missing here makes every switch's shared part distinct: the cache then never hits (every
# switch pays a second, whole validation), which tests/targets/test_sonic_split.py catches by counting shared parts.
PER_DEVICE = frozenset({"DEVICE_METADATA", "PORT", "INTERFACE", "LOOPBACK_INTERFACE", "BGP_NEIGHBOR", "MGMT_PORT",
                        "MGMT_INTERFACE", "DEVICE_NEIGHBOR", "DEVICE_NEIGHBOR_METADATA"})
# Per-device tables that shared tables depend on through `must`/`when` (buffer_model, switch_type), not a leafref
MUST_CONTEXT = frozenset({"DEVICE_METADATA"})
# A PORT row in the shared part: shared tables name ports (leafrefs to PORT's key) and read none of their fields, so
# every row is the same placeholder there; the rows themselves are validated with the per-device part (`_normalised`
# says what is kept of the other per-device tables that shared tables reference)
PORT_PLACEHOLDER = {"lanes": "0", "speed": "100000"}
# The PORT fields that differ from one switch to the next (a used port's `peer:port`): validated with the per-device
# part, in a placeholder row of that port; the rest of each row is validated in the port part, once per distinct
# content.  No model reads a port's description (no must/when/leafref names it): it is checked on its own.
PORT_OWN_FIELDS = frozenset({"description"})


class SplitValidator:
    """YANG-validates whole config_dbs, each distinct shared part once: every table of every device is checked.

    A config_db is split in three documents, each validated by libyang:

    - the per-device part: the PER_DEVICE tables, validated every time, with the shared tables they reference by
      leafref (from the YANG models: `Table.references`, transitively) as context; PORT there is one placeholder row
      per port that has PORT_OWN_FIELDS (holding them: the only PORT issues this part reports) or that the part names
      (what INTERFACE and DEVICE_NEIGHBOR name by leafref: the targets);
    - the port part: the PORT rows without their PORT_OWN_FIELDS, with DEVICE_METADATA (normalised: `lanes` has a
      `when` on it) and the tables PORT references as context; validated once per distinct content;
    - the shared part: every other table, with the per-device tables those reference (leafrefs, and MUST_CONTEXT) as
      context, normalised (PORT rows as placeholders, DEVICE_METADATA's per-device fields fixed) so that it is the same
      on every switch of one model and plane; validated once per distinct content (keyed by its JSON text).

    A table's issues are reported from the part that holds it; context tables are validated in their own part.  The
    issues come per-device part first, then the port part's, then the shared part's.  `calls` counts libyang
    validations, `shared_parts` and `port_parts` the distinct shared and port parts validated.
    """

    def __init__(self, yang_dir: str | Path | None = None):
        self.yang = SonicYangValidator(yang_dir)
        self._shared: dict[str, list[YangIssue]] = {}
        self._ports: dict[str, list[YangIssue]] = {}
        self._closure: dict[frozenset[str], frozenset[str]] = {}
        self.calls = 0

    @property
    def shared_parts(self) -> int:
        return len(self._shared)

    @property
    def port_parts(self) -> int:
        return len(self._ports)

    def _references(self, tables: frozenset[str]) -> frozenset[str]:
        """The tables that `tables` reference by leafref, transitively (themselves excluded)."""
        hit = self._closure.get(tables)
        if hit is None:
            known = self.yang._tables
            todo, seen = list(tables), set(tables)
            while todo:
                table = known.get(todo.pop())
                for ref in table.references if table is not None else ():
                    if ref not in seen:
                        seen.add(ref)
                        todo.append(ref)
            hit = self._closure[tables] = frozenset(seen - tables)
        return hit

    def _validate(self, device: str, doc: Any) -> list[YangIssue]:
        self.calls += 1
        return self.yang.validate(device, doc)

    def validate(self, device: str, db: dict[str, Any]) -> list[YangIssue]:
        if not isinstance(db, dict):
            return self._validate(device, db)
        own = frozenset(k for k in db if k in PER_DEVICE)
        others = frozenset(db) - own
        per = {k: db[k] for k in db if k in own}
        table = db.get("PORT")
        ports: dict[str, Any] | None = table if isinstance(table, dict) else None     # else validated whole, here
        context = self._references(own) & others          # validated with the shared part
        for k in context:
            per[k] = db[k]
        if ports is not None:
            named = _named({k: v for k, v in per.items() if k != "PORT"})
            per["PORT"] = {k: own_row for k, row in ports.items()
                           if (own_row := _port_own(row)) is not PORT_PLACEHOLDER or k in named}
        issues = [i for i in self._validate(device, per) if i.table not in context
                  and (ports is None or i.table != "PORT" or i.field in PORT_OWN_FIELDS)]
        if ports is not None:
            part: dict[str, Any] = {"PORT": {k: _port_shared(row) for k, row in ports.items()}}
            context = (self._references(frozenset({"PORT"})) | MUST_CONTEXT) & (frozenset(db) - {"PORT"})
            for k in context:       # DEVICE_METADATA normalised; a shared table as it is (it is in the key)
                part[k] = _normalised(k, db[k]) if k in own else db[k]
            issues += self._once(self._ports, device, part, lambda i: i.table == "PORT")
        if others:
            shared = {k: db[k] for k in db if k in others}
            context = (self._references(others) | MUST_CONTEXT) & own      # validated with the per-device part
            for k in context:
                shared[k] = _normalised(k, db[k])
            issues += self._once(self._shared, device, shared, lambda i: i.table not in context)
        return issues

    def _once(self, seen: dict[str, list[YangIssue]], device: str, doc: dict[str, Any],
              keep: Callable[[YangIssue], bool]) -> list[YangIssue]:
        """The issues `keep` keeps of `doc`'s validation, validated once per distinct content (in `seen`)."""
        key = _key(doc)
        found = seen.get(key)
        if found is None:
            found = seen[key] = [i for i in self._validate(device, doc) if keep(i)]
        return found if not found else [replace(i, device=device) for i in found]


def _named(tables: dict[str, Any]) -> set[str]:
    """Every string `tables` hold, as a key (and each of its `|`-separated parts), a value or an item of a list: what
    they can name a port by (a leafref's value)."""
    out: set[str] = set()
    for rows in tables.values():
        if not isinstance(rows, dict):
            continue
        for key, row in rows.items():
            if type(key) is str:
                out.add(key)
                if "|" in key:
                    out.update(key.split("|"))
            for value in row.values() if isinstance(row, dict) else ():
                if type(value) is str:
                    out.add(value)
                elif isinstance(value, list):
                    out.update(v for v in value if type(v) is str)
    return out


def _port_own(row: Any) -> Any:
    """A PORT row in the per-device part: the placeholder with the row's own fields (a row that is not an object
    stays as it is: its issue is reported from the port part).  A port without own fields is left out of the part
    unless a table of it names the port (a leafref's target: a reference to a port that is missing fails there)."""
    if not isinstance(row, dict):
        return row
    if PORT_OWN_FIELDS.isdisjoint(row):     # the same test of each field as below, in C (an unused port)
        return PORT_PLACEHOLDER
    own = {f: v for f, v in row.items() if f in PORT_OWN_FIELDS}
    return {**PORT_PLACEHOLDER, **own} if own else PORT_PLACEHOLDER


def _port_shared(row: Any) -> Any:
    """A PORT row in the port part: without its own fields."""
    if not isinstance(row, dict) or PORT_OWN_FIELDS.isdisjoint(row):
        return row
    return {f: v for f, v in row.items() if f not in PORT_OWN_FIELDS}


def _key(doc: dict[str, Any]) -> str:
    """The sha256 of `doc`'s JSON text, in its own key order: by orjson, ~10x faster than json's encoder, where it
    writes the document (NaN and None would both be `null`: a document with a `null` is keyed by json's text instead).
    Equal text is equal content; the same content in another order is another key (validated once more, on its own:
    libyang reports the first error in document order), and the render builds every switch's tables in one order."""
    try:
        text = orjson.dumps(doc)
    except TypeError:       # a key that is not a string, an integer beyond 64 bits ...
        text = b"null"
    if b"null" in text:
        text = b"json:" + _compact(doc).encode()
    return hashlib.sha256(text).hexdigest()


def _normalised(table: str, rows: Any) -> Any:
    """A per-device table as context of the shared part: what shared tables never read, fixed."""
    if not isinstance(rows, dict):
        return rows
    if table == "DEVICE_METADATA":
        return {k: {**v, "hostname": "switch", "mac": "02:00:00:00:00:00", "bgp_asn": "4200000000"}
                if isinstance(v, dict) else v for k, v in rows.items()}
    if table == "PORT":
        return dict.fromkeys(rows, PORT_PLACEHOLDER)
    # another per-device table a shared one names (LOOPBACK_INTERFACE: "Loopback0" as a source interface): its
    # objects, without the rows keyed by an object and an address
    return {k: v for k, v in rows.items() if "|" not in str(k)}


def yang_findings(path: str, issues: list[YangIssue]) -> list[Finding]:
    """Findings at `table|key/field` of the config_db at `path`."""
    return [Finding(path, f"{i.table}|{i.key}" + (f"/{i.field}" if i.field else ""), i.message, rule="sonic-yang")
            for i in issues]
