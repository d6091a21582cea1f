"""The blast radius of a change: none, low, medium or high, with the reasons.

Each rule is a small function over the comparison that returns (level, reason) pairs; the verdict is the highest.

- high: an intent shared by the whole fabric changes (the RoCE QoS, the management plane, the switch policy ...);
  the ASN of an existing switch changes (the ASN plan); an existing switch is renumbered (`teton.diff.classify`);
  every spine of a zone (every CTSW), every aggregation switch (ATSW), every front-end spine (SSW), or every FSW of a
  zone is touched in a way that takes something away (renumbered, a link rewired, an intent changed); every rail of
  a rack (every host-facing port of its rack switch) changes; more than half of the switches change, unless the
  change is an expansion (or decommission): then that is medium, its size alone is not HIGH.
- medium: switches are removed; an existing host is renumbered; the change reaches beyond one rack; a whole tier or
  zone is touched but only attached (new sessions and ports: adding a zone touches every ATSW this way; or only the
  lines of removed devices), or a whole zone is removed.
- low: one rack (its rack switches and hosts), or hosts only; an expansion or decommission says so.

Which existing device only attaches, is renumbered or changes is one definition, `teton.diff.classify`'s: the rules
here read its classes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator
from typing import NamedTuple

from teton.diff.classify import Classification, DeviceClass, classify, intent_names
from teton.diff.engine import Comparison, DeviceChange
from teton.fabric.roles import of_tier, report_rank

LEVELS = ("none", "low", "medium", "high")
HALF = 0.5


class Reason(NamedTuple):
    level: str
    rule: str
    message: str


Rule = Callable[[Comparison], Iterator[Reason]]


def _takes_away(d: DeviceChange, found: Classification) -> bool:
    """The change renumbers or rewires something the device keeps, or removes the device (not only attaches)."""
    if d.status != "changed":
        return d.status == "removed"
    k = found.of[d.name]
    return k.kind == "renumbered" or any(" loses its link " in i for i in k.intents)


def _intents(d: DeviceChange, found: Classification) -> set[str]:
    """The intents of the device that change in place (its QoS, management plane, the policy of its routing: timers,
    ECMP width ...), beside sessions and links that are only attached (`teton.diff.classify`)."""
    return intent_names(found.of[d.name])


def _zone(z: int | None) -> str:
    return f"zone {z}" if z is not None else "the storage racks"


SHARED = {"qos": "the RoCE QoS of the whole fabric (DSCP, PFC, queues) on every backend switch and GPU host",
          "management": "the management plane of every switch",
          "policy": "the hashing, dampening and monitoring policy of every backend switch and GPU host",
          "hosts": "the settings every host shares (NCCL, mounts, the scheduler)",
          "subnet_manager": "the subnet manager of the whole fabric"}
NOT_RISKY = ("name", "site", "oversubscription_goals")      # names and oversubscription goals: no device runs them


def _shared_changes(c: Comparison) -> set[str]:
    return {k for k in c.head if k not in NOT_RISKY}


def fabric_intents(c: Comparison) -> Iterator[Reason]:
    for k in sorted(_shared_changes(c)):
        yield Reason("high", f"fabric-{k}", f"changes {SHARED.get(k, f'the fabric-wide {k}')}")


def asn_plan(c: Comparison) -> Iterator[Reason]:
    moved = [d.name for d in c.devices if d.status == "changed" and d.old and d.new
             and d.old.get("asn") != d.new.get("asn")]
    if moved:
        yield Reason("high", "asn", f"the ASN of {len(moved):,} existing device(s) changes (the ASN plan), e.g. "
                     f"{moved[0]}: every BGP session of theirs restarts")


def _whole(c: Comparison, roles: frozenset[str]) -> Iterator[tuple[str, int | None, list[DeviceChange], int]]:
    """(role, zone, changed devices, devices of that role and zone on the old side) for groups wholly touched."""
    population: dict[tuple[str, int | None], int] = defaultdict(int)
    for info in c.old.index.values():
        if info.role in roles:
            population[(info.role, info.zone)] += 1
    touched: dict[tuple[str, int | None], list[DeviceChange]] = defaultdict(list)
    for d in c.devices:
        if d.info.role in roles and d.status != "added":
            touched[(d.info.role, d.info.zone)].append(d)
    for (role, zone), n in sorted(population.items(), key=lambda x: (x[0][0], x[0][1] or 0)):
        got = touched.get((role, zone), [])
        if n and len(got) == n:
            yield role, zone, got, n


def whole_tiers(c: Comparison) -> Iterator[Reason]:
    shared = _shared_changes(c)
    found = classify(c)
    for role, zone, got, n in _whole(c, of_tier("spine") | of_tier("aggregation")):
        where = f"of {_zone(zone)}" if role in of_tier("spine") else "of the cluster"
        if zone is not None and all(d.status == "removed" for d in got) and _zone_gone(c, zone):
            yield Reason("medium", f"every-{role}", f"removes every {role.upper()} {where} ({n}): the zone is "
                         "decommissioned")
            continue
        intents = set().union(*(_intents(d, found) for d in got)) - shared    # a shared intent is its own reason
        if any(_takes_away(d, found) for d in got):
            renumbered = [found.of[d.name] for d in got if found.of[d.name].kind == "renumbered"]
            detail = f" ({len(renumbered)} renumbered, e.g. {_example(renumbered[0])})" if renumbered else ""
            yield Reason("high", f"every-{role}", f"touches every {role.upper()} {where} ({n}) and removes, "
                         f"renumbers or rewires sessions, addresses or links on them{detail}")
        elif intents:
            yield Reason("high", f"every-{role}", f"changes the {', '.join(sorted(intents))} of every "
                         f"{role.upper()} {where} ({n})")
        elif not any(_intents(d, found) for d in got):
            gains = any(found.of[d.name].ports_added for d in got)
            loses = any(found.of[d.name].ports_removed for d in got)
            what = ("only adding and removing the sessions and ports of devices that come and go" if gains and loses
                    else "only losing the sessions and ports of removed devices" if loses
                    else "only adding sessions and ports")
            yield Reason("medium", f"every-{role}", f"touches every {role.upper()} {where} ({n}), {what}")


def _zone_gone(c: Comparison, zone: int) -> bool:
    """Every device of `zone` is removed (a zone decommissioned)."""
    return not any(i.zone == zone for i in c.new.index.values())


def _example(k: DeviceClass) -> str:
    return f"{k.name}: {k.moved[0]}" if k.moved else k.name


def rack_rails(c: Comparison) -> Iterator[Reason]:
    for d in c.devices:
        if d.info.role not in of_tier("rack") or d.status != "changed" or d.old is None or d.new is None:
            continue
        old = {k: v for k, v in d.old["links"].items() if v.startswith("down ")}
        if old and all(d.new["links"].get(k) != v or d.old["addresses"].get(k) != d.new["addresses"].get(k)
                       for k, v in old.items()):
            yield Reason("high", "every-rail", f"changes every rail of rack {d.info.rack} (all {len(old)} "
                         f"host-facing ports of {d.name})")


def share_of_switches(c: Comparison) -> Iterator[Reason]:
    switches = sum(1 for i in c.old.index.values() if i.nos is not None)
    touched = sum(1 for d in c.devices if d.info.nos is not None and d.status != "added")
    if switches and touched > HALF * switches:
        kind = classify(c).kind
        if kind is None:
            yield Reason("high", "most-switches", f"{touched:,} of the {switches:,} existing switches change")
        else:           # its size alone does not make an expansion HIGH
            yield Reason("medium", "most-switches", f"{touched:,} of the {switches:,} existing switches change, "
                         f"all of them only at their attachment lines ({_a(kind)})")


def _a(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def expansion(c: Comparison) -> Iterator[Reason]:
    """Says when the change is an expansion (or decommission): existing devices only gain (lose) attachment lines."""
    found = classify(c)
    kind = found.kind
    n = found.counts()
    if kind is not None:
        attached = sorted(found.named("attached"), key=lambda k: report_rank(k.role))     # switches top-down
        where = (f"; {len(attached):,} existing device(s) only gain or lose the ports and sessions that attach "
                 f"them, e.g. {attached[0].name}" if attached else "; no existing device changes")
        yield Reason("low", kind.replace(" ", "-"), f"{_a(kind)}: {n['added']:,} device(s) added, "
                     f"{n['removed']:,} removed{where}")


def renumbering(c: Comparison) -> Iterator[Reason]:
    """An existing switch renumbered (an address, ASN, link or session it keeps changes) is HIGH; a host, medium."""
    found = classify(c)
    moved = found.named("renumbered")
    switches = [k for k in moved if c.new.index.get(k.name, c.old.index[k.name]).nos is not None]
    named = {k.name for k in switches}
    hosts = [k for k in moved if k.name not in named]
    if switches:
        yield Reason("high", "renumbered", f"{len(switches):,} existing switch(es) renumbered, e.g. "
                     f"{_example(switches[0])} ({switches[0].reason})")
    if hosts:
        yield Reason("medium", "hosts-renumbered", f"{len(hosts):,} existing host(s) renumbered, e.g. "
                     f"{_example(hosts[0])} ({hosts[0].reason})")


def removals(c: Comparison) -> Iterator[Reason]:
    gone = [d for d in c.devices if d.status == "removed"]
    switches = [d for d in gone if d.info.nos is not None]
    if switches:
        yield Reason("medium", "switches-removed", f"{len(switches):,} switch(es) removed, e.g. {switches[0].name}")
    hosts = [d for d in gone if d.info.nos is None]
    if hosts:
        yield Reason("low", "hosts-removed", f"{len(hosts):,} host(s) removed, e.g. {hosts[0].name}")


def scope(c: Comparison) -> Iterator[Reason]:
    if not c.devices and not c.files:
        return
    racks = {d.info.rack for d in c.devices if d.info.role in of_tier("rack") or d.is_host}
    beyond = [d for d in c.devices if d.info.nos is not None and d.info.role not in of_tier("rack")]
    added = [d for d in c.devices if d.status == "added"]
    if beyond:
        yield Reason("medium", "spines", f"{len(beyond):,} switch(es) above the racks change, e.g. {beyond[0].name}")
    elif len(racks) > 1:
        yield Reason("medium", "racks", f"{len(racks):,} racks change")
    elif racks:
        yield Reason("low", "one-rack", f"confined to rack {next(iter(racks))}")
    elif not c.devices:
        yield Reason("low", "files", "only fabric-wide files change (" + ", ".join(f.path for f in c.files[:3]) + ")")
    if added:
        yield Reason("low" if len(racks) <= 1 and not beyond else "medium", "added",
                     f"{len(added):,} device(s) added, e.g. {added[0].name}")


RULES: tuple[Rule, ...] = (fabric_intents, asn_plan, renumbering, whole_tiers, rack_rails, share_of_switches,
                          expansion, removals, scope)


def verdict(c: Comparison) -> tuple[str, list[Reason]]:
    """(level, reasons, highest first)."""
    if not c.devices and not c.files and not c.head:
        return "none", []
    reasons = [r for rule in RULES for r in rule(c)]
    reasons.sort(key=lambda r: -LEVELS.index(r.level))
    return (reasons[0].level if reasons else "low"), reasons
