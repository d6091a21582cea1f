"""Compare two sides: which devices change, how their files and facts change, and the fabric-wide files.

A device changes when its slice digest differs (its record, intents, model or neighbours' roles: everything its files
and its lines in the fabric-wide files depend on), or when it is only on one side.  Devices with equal digests have
identical files by construction, so they are neither rendered nor compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from teton.buildfolder import device_of
from teton.diff.facts import session_key
from teton.diff.sides import Side
from teton.diff.textdiff import FileDiff, unified
from teton.fabric.roles import server_roles
from teton.pipeline.record import DeviceInfo


@dataclass
class DeviceChange:
    name: str
    info: DeviceInfo                       # the new side's, or the old side's for a removed device
    status: str                            # added, removed, changed
    files: list[FileDiff] = field(default_factory=list)
    old: dict[str, Any] | None = None      # facts (teton.diff.facts)
    new: dict[str, Any] | None = None

    @property
    def is_host(self) -> bool:
        return self.info.role in server_roles()

    def sessions(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        """(sessions added, sessions removed), each as (lower address, higher address)."""
        old = {session_key(s) for s in (self.old or {}).get("sessions", [])}
        new = {session_key(s) for s in (self.new or {}).get("sessions", [])}
        return new - old, old - new

    def addresses(self) -> tuple[int, int, int]:
        """(added, removed, changed) addresses, by where they are set (a port, the loopback, mgmt ...)."""
        old: dict[str, str] = (self.old or {}).get("addresses", {})
        new: dict[str, str] = (self.new or {}).get("addresses", {})
        return (len(new.keys() - old.keys()), len(old.keys() - new.keys()),
                sum(1 for k in old.keys() & new.keys() if old[k] != new[k]))

    def changed_fields(self) -> list[str]:
        """Fields of the device's record that differ (routing, qos, interfaces, mgmt ...)."""
        if self.old is None or self.new is None:
            return []
        a, b = self.old["fields"], self.new["fields"]
        return sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))

    def variables(self) -> list[str]:
        """A host's changed variables as '-'/'+' lines: its NICs' addresses and links, its ASN, its other fields."""
        out: list[str] = []
        for what, word in (("addresses", "address"), ("links", "link")):
            a: dict[str, str] = (self.old or {}).get(what, {})
            b: dict[str, str] = (self.new or {}).get(what, {})
            for k in sorted(a.keys() | b.keys()):
                if a.get(k) != b.get(k):
                    if k in a:
                        out.append(f"-{word} {k}: {a[k]}")
                    if k in b:
                        out.append(f"+{word} {k}: {b[k]}")
        fields = [f for f in self.changed_fields() if f not in ("interfaces", "mgmt", "loopback4", "loopback6",
                                                                 "prefixes4", "prefixes6", "router_id")]
        if fields:
            out.append("~changed: " + ", ".join(fields))
        return out


@dataclass
class Comparison:
    old: Side
    new: Side
    devices: list[DeviceChange]            # changed devices, by name
    files: list[FileDiff]                  # files that are not one device's (fabric.json, cabling.csv ...)
    head: list[str]                        # fabric-wide facts that differ (qos, management, policy ...)
    memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)   # derived once (classify)


def _device_of_file(rel: str, names: set[str]) -> str | None:
    """The device a fabric-wide target's file is about, when the file is named after it (host_vars/<host>.yml)."""
    stem = rel.rsplit("/", 1)[-1].split(".", 1)[0]
    return stem if stem in names else None


def compare(old: Side, new: Side, context: int = 3) -> Comparison:
    changed = sorted(n for n in old.index.keys() & new.index.keys() if not old.same(new, n))
    added = sorted(new.index.keys() - old.index.keys())
    removed = sorted(old.index.keys() - new.index.keys())
    devices = {n: DeviceChange(n, new.index[n], "changed") for n in changed}
    devices.update({n: DeviceChange(n, new.index[n], "added") for n in added})
    devices.update({n: DeviceChange(n, old.index[n], "removed") for n in removed})

    with_files = {n for n in changed + added + removed
                  if any(n in names for side in (old, new) for names in side.device_targets.values())}
    old_files = old.device_files({n for n in with_files if n in old.index})
    new_files = new.device_files({n for n in with_files if n in new.index})
    for n, d in devices.items():
        d.files = _file_diffs(_of_device(old_files, n), _of_device(new_files, n), context)

    old_facts = old.facts([n for n in devices if n in old.index])
    new_facts = new.facts([n for n in devices if n in new.index])
    for n, d in devices.items():
        d.old, d.new = old_facts.get(n), new_facts.get(n)

    names = old.index.keys() | new.index.keys()
    shared: list[FileDiff] = []
    a = {rel: text for files in old.others.values() for rel, text in files.items()}
    b = {rel: text for files in new.others.values() for rel, text in files.items()}
    for rel in sorted(a.keys() | b.keys()):
        diff = unified(rel, a.get(rel), b.get(rel), context)
        if diff is None:
            continue
        owner = _device_of_file(rel, names)
        if owner is not None and owner in devices:
            devices[owner].files.append(diff)
        else:
            shared.append(diff)
    head = sorted(k for k in old.head.keys() | new.head.keys() if old.head.get(k) != new.head.get(k))
    return Comparison(old, new, [devices[n] for n in sorted(devices)], shared, head)


def _of_device(files: dict[str, dict[str, str]], name: str) -> dict[str, str]:
    return {rel: text for by_target in files.values() for rel, text in by_target.items() if device_of(rel) == name}


def _file_diffs(old: dict[str, str], new: dict[str, str], context: int) -> list[FileDiff]:
    out = []
    for rel in sorted(old.keys() | new.keys()):
        diff = unified(rel, old.get(rel), new.get(rel), context)
        if diff is not None:
            out.append(diff)
    return out
