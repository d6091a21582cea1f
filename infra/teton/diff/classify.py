"""What kind of change each device of a diff undergoes, so that growth reads as growth: `teton diff` knows an expansion.

Every device a comparison lists is one of:

- `added` / `removed`: on one side only;
- `attached`: an existing device that only gains (or, for a shrink, only loses) whole attachment lines: ports linked
  to added (removed) devices and the sessions over those ports.  Nothing it keeps changes: the same address on every
  kept port, the same loopback, router id, management address and ASN, the same kept links and sessions, and no
  intent field changes beyond its routing's neighbour list (and peer groups, and import policies) growing or
  shrinking;
- `renumbered`: an address, the ASN, the link of a port or a session it keeps changes ("Ethernet3/1/1 10.1.192.1/31
  -> 10.1.216.1/31"), with a `reason` from the two specs (`renumbering_reason`: no room declared, the room or a pool
  changed);
- `changed`: anything else: an intent changes ("routing.maximum_prefixes 7000 -> 8000"), or a link to a device that
  is on both sides comes or goes.

A change whose existing devices are all `attached` is an expansion (devices added), a decommission (removed), or both.

    found = classify(comparison)
    found.kind, found.counts(), found.of["atsw01"].ports_added
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from teton.catalogue import catalogue_for
from teton.design.room import room_of
from teton.diff.engine import Comparison, DeviceChange
from teton.diff.facts import session_key
from teton.spec.model import Cluster, RoceBackend

CLASSES = ("added", "removed", "attached", "renumbered", "changed")
RENUMBERED_REASON = "an address it keeps moves: the pools or the room changed"
FILES_ONLY = "only its files change (what it takes from its neighbours)"

# fields of a record that an attachment changes (its ports and routing), and the fields whose changes are addresses
# or the ASN (named as moves, not as intents)
_ATTACHMENT_FIELDS = frozenset({"interfaces", "routing"})
_NUMBER_FIELDS = frozenset({"asn", "loopback4", "loopback6", "router_id", "mgmt", "prefixes4", "prefixes6"})
_ROUTING_NUMBERS = frozenset({"asn", "router_id", "loopback4", "loopback6", "aggregates4", "aggregates6"})


@dataclass(frozen=True)
class DeviceClass:
    """One device's class and what makes it so (lists in port and address order)."""

    name: str
    role: str
    kind: str                                            # one of CLASSES
    ports_added: tuple[str, ...] = ()                    # "Ethernet3/9/1 -> z03-ctsw01:Ethernet3/3/1"
    ports_removed: tuple[str, ...] = ()
    sessions_added: tuple[str, ...] = ()                 # "10.1.0.80 10.1.0.81" (lower address first)
    sessions_removed: tuple[str, ...] = ()
    moved: tuple[str, ...] = ()                          # what it keeps that changes (renumbered)
    intents: tuple[str, ...] = ()                        # what else changes (changed)
    reason: str = ""                                     # why it is renumbered

    @property
    def existing(self) -> bool:
        return self.kind not in ("added", "removed")


@dataclass(frozen=True)
class Classification:
    devices: tuple[DeviceClass, ...]                     # in the comparison's order
    of: dict[str, DeviceClass] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.of.update({d.name: d for d in self.devices})

    def named(self, kind: str) -> list[DeviceClass]:
        return [d for d in self.devices if d.kind == kind]

    def counts(self) -> dict[str, int]:
        n = Counter(d.kind for d in self.devices)
        return {k: n[k] for k in CLASSES}

    def by_role(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for d in self.devices:
            out.setdefault(d.role, dict.fromkeys(CLASSES, 0))[d.kind] += 1
        return out

    @property
    def kind(self) -> str | None:
        """'expansion', 'decommission', 'expansion and decommission' when every existing device that changes is
        `attached` (and devices come or go); None otherwise."""
        n = self.counts()
        if n["renumbered"] or n["changed"] or not (n["added"] or n["removed"]):
            return None
        if n["added"] and n["removed"]:
            return "expansion and decommission"
        return "expansion" if n["added"] else "decommission"


def classify(c: Comparison) -> Classification:
    """Every device of the comparison, classified (once per comparison: the verdict and the report share it)."""
    found = c.memo.get("classification")
    if not isinstance(found, Classification):
        added = {d.name for d in c.devices if d.status == "added"}
        removed = {d.name for d in c.devices if d.status == "removed"}
        old, new = getattr(c.old, "cluster", None), getattr(c.new, "cluster", None)   # (a test's sides may have none)
        reason = renumbering_reason(old, new) if old and new else RENUMBERED_REASON
        found = c.memo["classification"] = Classification(tuple(classify_device(d, added, removed, reason)
                                                                for d in c.devices))
    return found


def renumbering_reason(old: Cluster, new: Cluster) -> str:
    """Why the design would renumber a device it keeps, from the two specs: no room declared, the room changed, an
    address pool changed, or the management network changed (`teton.design.room`)."""
    if old.room is None:
        return ("the spec declares no room: every place is laid out for what it has, so growing it renumbers; "
                "declare `room:` (docs/specs.md, \"Room to grow\") to grow in place")
    a, b = room_of(old, catalogue_for(old)), room_of(new, catalogue_for(new))
    dims = [f"{k} {getattr(a, k)} -> {getattr(b, k)}" for k in ("zones", "racks_per_zone", "atsw", "ssw_per_plane",
                                                                  "storage_racks") if getattr(a, k) != getattr(b, k)]
    if dims:
        return "the room changed (" + ", ".join(dims) + "): every place after it moves"
    pools = [p for p, x, y in (("backend.addressing", old.backend.addressing if isinstance(old.backend, RoceBackend)
                                else None, new.backend.addressing if isinstance(new.backend, RoceBackend) else None),
                               ("frontend.addressing", old.frontend.addressing if old.frontend else None,
                                new.frontend.addressing if new.frontend else None),
                               ("management", old.management, new.management)) if x != y]
    if pools:
        return f"{' and '.join(pools)} changed: the places cut from them move"
    return RENUMBERED_REASON


def intent_names(k: DeviceClass) -> set[str]:
    """The intents a device's change touches, by name (qos, routing, links ...): what the verdict weighs."""
    out: set[str] = set()
    for i in k.intents:
        if " link to " in i or " link " in i:
            out.add("links")
        elif i.startswith("routing"):
            out.add("routing")
        elif i == FILES_ONLY:
            out.add("neighbours")
        else:
            out.add(i.split(" ", 1)[0])
    return out


def bounded(items: list[str] | tuple[str, ...], limit: int) -> list[str]:
    """`items`, the first `limit` of them and "and N more" when there are more."""
    if len(items) <= limit:
        return list(items)
    return [*items[:limit], f"and {len(items) - limit:,} more"]


def _natural(name: str) -> tuple[tuple[int, str], ...]:
    """Ports and address keys in the order a reader expects (Ethernet8 before Ethernet16), whatever the facts' order
    (a designed side's, or a replayed side's JSON)."""
    return tuple((int(x), "") if x.isdigit() else (-1, x) for x in re.split(r"(\d+)", name) if x)


def _peer(link: str) -> str:
    """The peer device of a link fact ("down z01-r001-h1:be0 400G mtu 9100")."""
    parts = link.split(" ")
    return parts[1].split(":", 1)[0] if len(parts) > 1 else ""


def _address_order(key: str) -> tuple[int, tuple[tuple[int, str], ...]]:
    """The device's own addresses (loopback, router id, management, prefixes) first, then its ports'."""
    return (_OWN.index(key) if key in _OWN else len(_OWN), _natural(key))


_OWN = ("loopback4", "loopback6", "router_id", "mgmt", "prefixes4", "prefixes6")


def _local_addresses(addresses: dict[str, str], ports: set[str]) -> set[str]:
    """The addresses (without prefix length) that `ports` hold."""
    return {a.split("/", 1)[0] for p in ports for a in addresses.get(p, "").split(" ") if a}


def _sessions(facts: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {session_key(s): s for s in facts.get("sessions", [])}


def classify_device(d: DeviceChange, added: set[str], removed: set[str],
                    why: str = RENUMBERED_REASON) -> DeviceClass:
    """The class of one device of a comparison, given the devices added and removed; `why`: the reason a renumbered
    device is given (`renumbering_reason`)."""
    if d.status in ("added", "removed") or d.old is None or d.new is None:
        return DeviceClass(d.name, d.info.role, d.status)
    old, new = d.old, d.new
    moved: list[str] = []
    intents: list[str] = []

    old_links: dict[str, str] = old.get("links", {})
    new_links: dict[str, str] = new.get("links", {})
    gained = sorted((p for p in new_links if p not in old_links), key=_natural)
    lost = sorted((p for p in old_links if p not in new_links), key=_natural)
    for p in sorted(old_links, key=_natural):
        if p in new_links and old_links[p] != new_links[p]:
            moved.append(f"{p} {old_links[p]} -> {new_links[p]}")
    for p in gained:
        if _peer(new_links[p]) not in added:
            intents.append(f"{p} gains a link to {_peer(new_links[p])}, which is on both sides")
    for p in lost:
        if _peer(old_links[p]) not in removed:
            intents.append(f"{p} loses its link to {_peer(old_links[p])}, which is on both sides")

    if old.get("asn") != new.get("asn"):
        moved.append(f"ASN {old.get('asn')} -> {new.get('asn')}")
    old_addr: dict[str, str] = old.get("addresses", {})
    new_addr: dict[str, str] = new.get("addresses", {})
    for k in sorted(old_addr, key=_address_order):
        if k not in new_addr:
            if k not in lost:
                moved.append(f"{k} {old_addr[k]} -> none")
        elif old_addr[k] != new_addr[k]:
            moved.append(f"{k} {old_addr[k]} -> {new_addr[k]}")
    for k in sorted(new_addr, key=_address_order):
        if k not in old_addr and k not in gained:
            moved.append(f"{k} none -> {new_addr[k]}")

    old_s, new_s = _sessions(old), _sessions(new)
    over_gained = _local_addresses(new_addr, set(gained))
    over_lost = _local_addresses(old_addr, set(lost))
    sessions_added = sorted(k for k in new_s.keys() - old_s.keys())
    sessions_removed = sorted(k for k in old_s.keys() - new_s.keys())
    for s in sessions_added:
        if not over_gained & set(s):
            moved.append(f"session {new_s[s]} is new on a port it keeps")
    for s in sessions_removed:
        if not over_lost & set(s):
            moved.append(f"session {old_s[s]} goes from a port it keeps")
    for s in sorted(old_s.keys() & new_s.keys()):
        if old_s[s] != new_s[s]:
            moved.append(f"session {old_s[s]} -> {new_s[s]}")

    intents += _routing_changes(old.get("routing", {}), new.get("routing", {}), moved)
    fields = set(d.changed_fields()) - _ATTACHMENT_FIELDS - _NUMBER_FIELDS
    intents += sorted(fields)

    if moved:
        kind, reason = "renumbered", why
    elif intents or not (gained or lost):
        kind, reason = "changed", ""
        intents = intents or [FILES_ONLY]
    else:
        kind, reason = "attached", ""
    return DeviceClass(d.name, d.info.role, kind,
                       ports_added=tuple(f"{p} -> {new_links[p].split(' ')[1]}" for p in gained),
                       ports_removed=tuple(f"{p} -> {old_links[p].split(' ')[1]}" for p in lost),
                       sessions_added=tuple(" ".join(s) for s in sessions_added),
                       sessions_removed=tuple(" ".join(s) for s in sessions_removed),
                       moved=tuple(moved), intents=tuple(intents), reason=reason)


def _routing_changes(old: dict[str, Any], new: dict[str, Any], moved: list[str]) -> list[str]:
    """The routing's own changes: numbers it keeps go to `moved`, the rest is returned as intents.  Peer groups and
    import policies that only come (or only go: a rack switch's, with it) are part of an attachment."""
    intents: list[str] = []
    if bool(old) != bool(new):
        return ["routing " + ("added" if new else "removed")]
    for k in sorted(old.keys() | new.keys()):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if k in ("groups", "imports"):
            ga, gb = set(a or []), set(b or [])
            if not (ga <= gb or gb <= ga):
                intents.append(f"routing.{k} {', '.join(sorted(ga - gb))} -> {', '.join(sorted(gb - ga))}")
        elif k in _ROUTING_NUMBERS:
            if k in ("aggregates4", "aggregates6"):
                moved.append(f"{k} {a or 'none'} -> {b or 'none'}")
        else:
            intents.append(f"routing.{k} {a} -> {b}")
    return intents
