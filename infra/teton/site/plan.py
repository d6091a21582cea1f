"""`teton plan SITE`: the site's figures, from its designed Fabrics (never copied from the spec).

Per cluster the plan's figures of `teton.fabric.plan` without the cluster's links into the tier (a member's ATSW-BAG
cables are the tier's too: counted once, in the tier); the ATSWs' oversubscription is the member's own (down:up,
their up being the links into the tier).  The tier: its BAG switches, their ports (used, held for the room's
clusters, free), its links, optics and power, and the worst ATSW's ratio into it against the goal.  The totals add
the clusters' and the tier's.  Clusters are designed one at a time, so the plan holds one cluster's Fabric at once.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from teton.catalogue import builtin_models
from teton.catalogue.ports import port_map
from teton.checks import errors
from teton.design.site import BAG_KIND, slot_ports
from teton.fabric.model import Fabric
from teton.fabric.plan import oversubscription, plan
from teton.findings import Finding, SpecError
from teton.site.design import attachment, each_member, tier_of
from teton.site.load import LoadedSite, load_site
from teton.site.rules import check_site

KEPT = ("gpus", "hosts", "racks", "zones", "switches", "frontend_switches", "switch_models", "links", "cables",
        "media", "dac_cables", "optics", "transceivers", "injection_tbps", "bisection_tbps", "power_kw")
SUMMED = ("gpus", "hosts", "racks", "dac_cables", "optics", "injection_tbps", "power_kw")


def member_figures(f: Fabric) -> dict[str, Any]:
    """A cluster's figures in its site: its own links only (its links into the tier are the tier's)."""
    p = plan(replace(f, links=tuple(lk for lk in f.links if lk.kind != BAG_KIND)))
    figures = {k: p[k] for k in KEPT}
    figures["oversubscription"] = oversubscription(f)
    return figures


def tier_figures(loaded: LoadedSite, tier: Fabric) -> dict[str, Any]:
    site = loaded.site
    p = plan(tier)
    model = builtin_models()[site.bag.model]
    total = len([q for q in port_map(model, site.bag.nos) if q.speed_gbps >= site.bag.uplink_speed_gbps])
    bags = sorted(tier.devices.values(), key=lambda d: d.name)
    used = max((sum(1 for i in d.interfaces if i.kind == BAG_KIND) for d in bags), default=0)
    room = site.room.clusters * slot_ports(site.bag, site.room.atsw_per_cluster)
    ratios = []
    for a in tier.externals.values():
        if a.role != "atsw":
            continue
        up = sum(i.speed_gbps for i in a.interfaces if i.kind == BAG_KIND)
        ratios.append((a.name, up))
    return {
        "model": site.bag.model, "nos": site.bag.nos, "switches": len(bags), "planes": site.bag.planes,
        "asn": site.bag.asn, "links": p["links"].get(BAG_KIND, 0), "media": p["media"], "optics": p["optics"],
        "transceivers": p["transceivers"], "dac_cables": p["dac_cables"], "power_kw": p["power_kw"],
        "goal": site.bag.oversubscription, "oversubscription": 0.0,
        "ports": {"total": total, "used": used, "free_in_room": max(0, room - used), "free": max(0, total - room),
                  "room_clusters": site.room.clusters, "room_atsw": site.room.atsw_per_cluster,
                  "per_slot": slot_ports(site.bag, site.room.atsw_per_cluster)},
        "attached_atsws": len(ratios),
    }


def _add(total: dict[str, Any], key: str, value: Any) -> None:
    if isinstance(value, dict):
        into = total.setdefault(key, {})
        for k, v in value.items():
            into[k] = into.get(k, 0) + v
    else:
        total[key] = round(total.get(key, 0) + value, 3)


def site_plan(spec: str | Path, loaded: LoadedSite | None = None) -> tuple[dict[str, Any], list[Finding]]:
    """(figures, warnings) of the site at `spec`; SpecError with every error."""
    loaded = loaded or load_site(spec)
    findings = check_site(loaded)
    if errors(findings):
        raise SpecError(findings)
    clusters: dict[str, dict[str, Any]] = {}
    attached: dict[str, Fabric] = {}
    for name, fabric in each_member(loaded, findings):
        clusters[name] = member_figures(fabric)
        attached[name] = attachment(fabric)
        del fabric
    if errors(findings):
        raise SpecError(findings)
    tier, found = tier_of(loaded, attached)
    findings += found
    if errors(findings):
        raise SpecError(findings)
    t = tier_figures(loaded, tier)
    worst = max((c["oversubscription"].get("atsw", 0.0) for c in clusters.values()), default=0.0)
    t["oversubscription"] = worst
    totals: dict[str, Any] = {}
    for c in clusters.values():
        for k in (*SUMMED, "switches", "frontend_switches"):
            _add(totals, k, c[k])
    totals["switches"] = {**totals.get("switches", {}), "bag": t["switches"]}
    for k in ("optics", "dac_cables", "power_kw"):
        _add(totals, k, t[k])
    links: Counter[str] = Counter()
    for c in clusters.values():
        links.update(c["links"])
    links[BAG_KIND] += t["links"]
    totals["links"] = dict(sorted(links.items()))
    figures = {"site": loaded.site.site, "location": loaded.site.location or loaded.site.site,
               "clusters": clusters, "tier": t, "totals": totals,
               "oversubscription": {"into the tier (worst ATSW, down:up)": worst,
                                    "goal": loaded.site.bag.oversubscription},
               "room": {"clusters": len(clusters), "of": loaded.site.room.clusters}}
    return figures, [f for f in findings if f.severity != "error"]
