"""The order a deploy pushes switches in: a canary wave, a health gate, then bounded waves, each followed by a gate.

Waves are decided from the build's Fabric, never from what changed, so a preview and the update that follows agree
and a one-rack change lands in the same wave every time.

- **Canary**: the first switch of each backend tier (lowest name: `z01-r001-rtsw`, `z01-ctsw01`, `atsw01`) and of
  each front-end tier; a tier of one switch has no canary (its wave is the canary's gate's business then).
- **Bounded waves**, tier by tier from the racks up (a rack switch's failure loses one rack, a spine's only width):
  each wave holds at most `fraction` of a *blast group* of one tier, and never the whole group when it has more than
  one member: the CTSWs of one zone, the ATSWs of the cluster, the RTSWs of one zone (every rail of a rack goes
  through its one RTSW in this design: a rack's rails are never split over waves, and at most `fraction` of a zone's
  racks lose their backend at once).  Waves also stop at `max_wave` switches so a gate sees a bounded change.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from teton.fabric.roles import deploy_rank


class Switch(Protocol):
    """What the planner needs of a switch (a `teton.fabric.model.Device` has it)."""

    @property
    def name(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def zone(self) -> int | None: ...


@dataclass(frozen=True)
class Wave:
    index: int                  # 0 is the canary
    name: str                   # "canary", then per tier "rtsw-01", "rtsw-02" ..., "ctsw-01" ...
    devices: tuple[str, ...]


@dataclass(frozen=True)
class RolloutPolicy:
    fraction: float = 0.25      # of a blast group per wave
    max_wave: int = 64          # switches per wave
    canary: tuple[str, ...] | None = None   # explicit canary devices (None: the first switch of each tier)

    def __post_init__(self) -> None:
        if not 0 < self.fraction < 1:
            raise ValueError(f"rollout fraction must be in (0, 1), got {self.fraction}")
        if self.max_wave < 1:
            raise ValueError(f"rollout max_wave must be at least 1, got {self.max_wave}")


def blast_group(d: Switch) -> tuple[str, object]:
    """The devices of which a wave may take only a bounded part: a tier within a zone (cluster-wide tiers: the
    whole tier)."""
    return d.role, d.zone if d.zone is not None else "cluster"


def _tier_rank(role: str) -> tuple[int, str]:
    """Tiers from the racks up (`teton.fabric.roles`); a NOS-configured role it does not know goes last, in name
    order."""
    return deploy_rank(role), role


def default_canary(switches: Iterable[Switch]) -> tuple[str, ...]:
    """The lowest-named switch of every tier that has more than one switch."""
    by_tier: dict[str, list[str]] = defaultdict(list)
    for d in switches:
        by_tier[d.role].append(d.name)
    return tuple(sorted(min(names) for names in by_tier.values() if len(names) > 1))


def plan_waves(switches: Iterable[Switch], policy: RolloutPolicy = RolloutPolicy()) -> list[Wave]:
    """Waves over `switches` (the Fabric's, or the program's placement records), canary first; every switch in
    exactly one wave."""
    switches = list(switches)
    canary = policy.canary if policy.canary is not None else default_canary(switches)
    stray = sorted(set(canary) - {d.name for d in switches})
    if stray:
        raise ValueError(f"canary devices are not switches being deployed: {', '.join(stray)}")
    group_size: dict[tuple[str, object], int] = defaultdict(int)
    for d in switches:
        group_size[blast_group(d)] += 1

    def bound(group: tuple[str, object]) -> int:
        n = group_size[group]
        return 1 if n <= 1 else max(1, min(n - 1, math.floor(n * policy.fraction)))

    waves = [Wave(0, "canary", tuple(sorted(canary)))] if canary else []
    rest = sorted((d for d in switches if d.name not in set(canary)), key=lambda d: (_tier_rank(d.role), d.name))
    by_tier: dict[str, list[Switch]] = defaultdict(list)
    for d in rest:
        by_tier[d.role].append(d)
    for role in sorted(by_tier, key=_tier_rank):
        pending = by_tier[role]
        n = 0
        while pending:
            taken: dict[tuple[str, object], int] = defaultdict(int)
            wave: list[str] = []
            left: list[Switch] = []
            for d in pending:
                g = blast_group(d)
                if len(wave) < policy.max_wave and taken[g] < bound(g):
                    taken[g] += 1
                    wave.append(d.name)
                else:
                    left.append(d)
            n += 1
            waves.append(Wave(len(waves), f"{role}-{n:02d}", tuple(wave)))
            pending = left
    return waves
