"""How big a twin this machine holds, checked before `twin up` starts anything.

Each switch of a twin is a zebra and a bgpd in its own namespace; hosts are namespaces without daemons.  What limits
a twin is CPU (keepalives, and the burst of updates while it converges), then memory.  The figures below were
measured with `bench/bench_twin.py` and `teton twin up` on a 2-core machine; a twin above them is refused with the
size that would fit, instead of a twin that never converges or a machine that swaps.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

from teton.findings import TetonError

SWITCHES_PER_CORE = 113   # 226 switches converged on 2 cores within bench_twin's 120 s; 290 did not (docs/twin.md)
MIB_PER_SWITCH = 48       # zebra + bgpd resident memory per switch: ~45 MiB measured at 226 switches, 37 on the lab
MEMORY_SHARE = 0.75       # of the memory available when the twin starts


@dataclass(frozen=True)
class Machine:
    cores: int
    available_mib: int

    @classmethod
    def here(cls) -> Machine:
        cores = len(os.sched_getaffinity(0))
        available = 0
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) // 1024
        return cls(cores, available)

    def max_switches(self) -> int:
        return max(0, min(self.cores * SWITCHES_PER_CORE, int(self.available_mib * MEMORY_SHARE) // MIB_PER_SWITCH))


def check_fits(name: str, switches: int, hosts: int, machine: Machine | None = None) -> None:
    """TetonError (bad input: exit 2) if a twin of `switches` switches does not fit `machine` (this one)."""
    m = machine or Machine.here()
    limit = m.max_switches()
    if switches <= limit:
        return
    cores = math.ceil(switches / SWITCHES_PER_CORE)
    memory = math.ceil(switches * MIB_PER_SWITCH / MEMORY_SHARE)
    raise TetonError(
        f"twin {name!r} has {switches} switches and {hosts} hosts; this machine ({m.cores} cores, "
        f"{m.available_mib:,} MiB available) runs at most {limit} switches ({SWITCHES_PER_CORE} per core, "
        f"{MIB_PER_SWITCH} MiB each).  Twin a spec of at most {limit} switches (fewer zones, racks per zone, spines "
        f"or spine planes: `teton plan` counts them), or run it on a machine with {cores} cores and "
        f"{memory:,} MiB available")
