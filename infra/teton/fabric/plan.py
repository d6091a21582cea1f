"""The plan: a cluster's figures, all computed from the Fabric (never copied from the spec)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from teton.fabric.cables import cables, counts
from teton.fabric.model import Fabric
from teton.fabric.roles import rail_kinds, server_roles, tier_roles

MANAGEMENT_KINDS = ("service-leaf",)


def _capacity(f: Fabric) -> dict[str, dict[str, int]]:
    """Per backend tier, total Gb/s of downlinks and uplinks that carry the GPUs' traffic (a subnet manager's HCA on
    a leaf carries management datagrams only: not counted)."""
    tiers = set(tier_roles(f.backend))
    out: dict[str, dict[str, int]] = defaultdict(lambda: {"down": 0, "up": 0})
    for d in f.devices.values():
        if d.role in tiers:
            cap = out[d.role]
            for i in d.interfaces:
                if i.kind not in MANAGEMENT_KINDS:
                    cap[i.direction] += i.speed_gbps
    return out


def oversubscription(f: Fabric) -> dict[str, float]:
    """A tier's downlink:uplink capacity ratio (tiers that have uplinks only)."""
    return {t: round(c["down"] / c["up"], 3) for t, c in sorted(_capacity(f).items()) if c["up"]}


def plan(f: Fabric) -> dict[str, Any]:
    devices = list(f.devices.values())
    hosts = [d for d in devices if d.role == "host"]
    roles = Counter(d.role for d in devices)
    tiers = tier_roles(f.backend)
    models: dict[str, Counter[str]] = defaultdict(Counter)
    for d in devices:
        if d.role not in server_roles():
            models[d.role][d.model] += 1
    links = Counter(link.kind for link in f.links)
    media = Counter(link.medium for link in f.links)
    found = cables(f)
    parts = counts(found)          # transceivers as ordered: a twin-port module once for its two ports
    by_kind: dict[str, Counter[str]] = defaultdict(Counter)
    for c in found:
        by_kind[c.kind][c.medium if c.medium not in ("smf", "mmf") else f"{c.medium} {c.reach}"] += 1
    injection = sum(i.speed_gbps for h in hosts for i in h.interfaces if i.kind in rail_kinds())
    cap = _capacity(f)
    # Bisection: the smallest cut that halves the cluster along whole subtrees of some tier: half that tier's
    # uplink capacity (when the tier has at least two subtrees), and never more than half the injection.
    subtrees = {"rtsw": len({h.rack for h in hosts}), "ctsw": len({h.zone for h in hosts})}
    if f.backend == "infiniband":   # a leaf's subtree is one rail of an SU; a spine's, one rail of a pod of SUs
        subtrees.update(leaf=len({h.zone for h in hosts}),
                        spine=len({d.attrs.get("pod") for d in devices if d.role == "leaf"}))
    cuts = [injection / 2] + [cap[t]["up"] / 2 for t in tiers if cap.get(t, {}).get("up") and subtrees.get(t, 0) >= 2]
    storage = [d for d in devices if d.role == "storage"]
    return {
        "cluster": f.name,
        "site": f.site,
        "backend": f.backend,
        "gpus": sum(h.attrs.get("gpus", 0) for h in hosts),
        "hosts": len(hosts),
        "racks": len({h.rack for h in hosts}),
        "zones": len({h.zone for h in hosts}),
        "switches": {t: roles.get(t, 0) for t in tiers},
        "frontend_switches": {"rsw": roles.get("fe-rsw", 0), "fsw": roles.get("fsw", 0), "ssw": roles.get("ssw", 0)},
        "switch_models": {role: dict(sorted(c.items())) for role, c in sorted(models.items())},
        "links": dict(sorted(links.items())),
        "cables": dict(sorted(media.items())),
        "media": {k: dict(sorted(c.items())) for k, c in sorted(by_kind.items())},
        "dac_cables": media.get("dac", 0),
        "optics": sum(parts.optics.values()),
        "transceivers": parts.optics,
        "dacs": parts.dacs,
        "aecs": parts.aecs,
        "aocs": parts.aocs,
        "cords": parts.fibres,
        "injection_tbps": round(injection / 1000, 3),
        "bisection_tbps": round(min(cuts) / 1000, 3) if hosts else 0.0,
        "oversubscription": oversubscription(f),
        "storage": {"racks": len({d.rack for d in storage}), "servers": len(storage),
                    "drives": sum(d.attrs["drives"] for d in storage),
                    "raw_pb": round(sum(d.attrs["drives"] * d.attrs["drive_tb"] for d in storage) / 1000, 3),
                    "by_role": dict(sorted(Counter(d.attrs["storage_role"] for d in storage).items()))},
        "nfs": nfs_assignments(f),
        "power_kw": round(sum(d.power_w for d in devices) / 1000, 1),
        **_fat_tree(f, roles, injection, min(cuts)),
    }


def nfs_assignments(f: Fabric) -> dict[str, dict[str, list[str]]]:
    """{NFS mount point: {the server the design assigned (its name, or its failover address): [its client hosts]}},
    from the hosts' plans (`teton.design.hostplan.assign_nfs`)."""
    out: dict[str, dict[str, list[str]]] = {}
    for name in sorted(f.devices):
        plan = f.devices[name].host
        for a in getattr(plan, "nfs", ()):
            by = a.server_name or a.server or "none"
            out.setdefault(a.mount_point, {}).setdefault(by, []).append(name)
    return {m: dict(sorted(v.items())) for m, v in sorted(out.items())}


def _fat_tree(f: Fabric, roles: Counter[str], injection: float, bisection: float) -> dict[str, Any]:
    """InfiniBand: the fat tree's levels and whether its bisection is full (half the injection)."""
    if f.backend != "infiniband":
        return {}
    return {"fat_tree": {"levels": 3 if roles.get("core") else 2,
                         "full_bisection": bool(injection) and bisection * 2 >= injection}}
