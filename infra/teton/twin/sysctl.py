"""The kernel's neighbour-table thresholds for fabric twins: raise them for a big twin, restore them afterwards.

The ARP/NDP tables (``net.ipv4/ipv6.neigh.default.gc_thresh1..3``) are shared by every namespace of the machine; a
twin with thousands of links overflows the defaults and the kernel starts dropping neighbours.  The original values
are recorded in `NEIGH_RECORD` while some twin has raised them, and put back once no twin namespace (see
`teton.twin.netns.list_netns`) is left, by whichever twin or cleanup comes last.
"""

from __future__ import annotations

import json
from pathlib import Path

from teton.twin.netns import list_netns
from teton.twin.plan import NETNS_PREFIX, TwinPlan

NEIGH_RECORD = Path("/run/teton-twin/neigh-gc-thresh.json")
"""Original neighbour-table thresholds while some twin has raised them (global, shared by all twins)."""

_NEIGH_KEYS = tuple(f"net.{fam}.neigh.default.gc_thresh{i}" for fam in ("ipv4", "ipv6") for i in (1, 2, 3))


def _sysctl_path(key: str) -> Path:
    return Path("/proc/sys") / key.replace(".", "/")


def neigh_needed(plan: TwinPlan) -> int:
    """Neighbour entries a plan may need at once."""
    # every link end may hold an IPv4 and an IPv6 (link-local) neighbour; the table is shared by all namespaces
    return 4 * len(plan.links) + 2 * len(plan.nodes)


def raise_neigh_thresholds(needed: int) -> bool:
    """Make room for `needed` neighbours (thresh1 >= needed, thresh2 twice, thresh3 four times); True if raised."""
    current = {k: int(_sysctl_path(k).read_text()) for k in _NEIGH_KEYS}
    if needed <= min(current[k] for k in _NEIGH_KEYS if k.endswith("1")):
        return False
    if not NEIGH_RECORD.exists():
        NEIGH_RECORD.parent.mkdir(parents=True, exist_ok=True)
        NEIGH_RECORD.write_text(json.dumps(current))
    for key in _NEIGH_KEYS:
        factor = {"1": 1, "2": 2, "3": 4}[key[-1]]
        _sysctl_path(key).write_text(str(max(current[key], needed * factor)))
    return True


def restore_neigh_thresholds_if_idle() -> bool:
    """Put the original thresholds back once no twin namespace is left; True if restored."""
    if not NEIGH_RECORD.exists() or any(ns.startswith(NETNS_PREFIX) for ns in list_netns()):
        return False
    original = json.loads(NEIGH_RECORD.read_text())
    # lower thresh1 first so that thresh1 <= thresh2 <= thresh3 holds at every step
    for key in sorted(original, key=lambda k: k[-1]):
        _sysctl_path(key).write_text(str(original[key]))
    NEIGH_RECORD.unlink()
    try:
        NEIGH_RECORD.parent.rmdir()
    except OSError:
        pass
    return True
