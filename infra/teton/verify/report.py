"""`teton verify`'s text report: what was checked, then the what-if and the sweep, one line per fact."""

from __future__ import annotations

from typing import Any

from teton.fabric.externals import site_sessions_line
from teton.verify.run import Verified


def _zone(t: dict[str, Any]) -> str:
    return f"zone {t['zone']}" if t["zone"] is not None else "outside zones"


def _num(x: Any) -> str:
    if x is None:
        return "-"
    return f"{x:,.0f}" if isinstance(x, float) and x.is_integer() else f"{x:,}" if isinstance(x, int) else f"{x:g}"


def summary(r: Verified) -> str:
    c = r.counts
    s, p = c["sessions"], c["prefixes"]
    return (f"{r.build}: {c['switches']:,} switches, {s['total']:,} sessions agreed at both ends ({s['ipv4']:,} IPv4, "
            f"{s['ipv6']:,} IPv6), {p['total']:,} prefixes ({p['ipv4']:,} IPv4, {p['ipv6']:,} IPv6), "
            f"{c['routes']:,} switch x prefix routes checked (and {c['held']:,} local routes held unannounced) in "
            f"{r.seconds.get('total', 0):.1f} s" +
            (f"; {site_sessions_line(c['site_sessions'])}" if "site_sessions" in c else ""))


def whatif_lines(w: dict[str, Any]) -> list[str]:
    out = [f"what if {w['failed']} fails:"]
    changed = [t for t in w["tiers"] if t["paths"][0] != t["paths"][1] or t["bandwidth_gbps"][0] !=
               t["bandwidth_gbps"][1] or t["oversubscription"][0] != t["oversubscription"][1] or
               t["unreached_routes"] or _far_changed(t)]
    for t in changed:
        design = f" (design {t['design_paths']})" if t["design_paths"] is not None else ""
        over = (f", oversubscription {_num(t['oversubscription'][0])} -> {_num(t['oversubscription'][1])}:1"
                f" at {t['worst']}" if t["oversubscription"][1] is not None else "")
        lost = f", {t['unreached_routes']:,} routes to rack prefixes lost" if t["unreached_routes"] else ""
        out.append(f"  {t['network']} {_zone(t)} {t['role']} ({t['switches']} up): ECMP paths "
                   f"{_num(t['paths'][0])} -> {_num(t['paths'][1])}{design}, bandwidth "
                   f"{_num(t['bandwidth_gbps'][0])} -> {_num(t['bandwidth_gbps'][1])} Gb/s{over}{lost}{_far(t)}")
    if not changed:
        out.append("  no tier loses a path")
    if w["rails"]:
        pairs = sum(r["pairs"] for r in w["rails"])
        kept = sum(r["with_path"][1] for r in w["rails"])
        per = ", ".join(f"{r['rail']} {r['lost']:,}" for r in w["rails"] if r["lost"])
        out.append(f"  same-rail host pairs with a path: {kept:,} of {pairs:,}; lost {w['pairs_lost']:,}"
                   + (f" ({per})" if per else ""))
    out.append(f"  worst oversubscription after: {_num(w['worst_oversubscription'])}:1")
    for t in w["deviations"]:
        out.append(f"  differs from the design: {t['network']} {_zone(t)} {t['role']} keeps {t['paths'][1]} paths, "
                   f"the design {t['design_paths']}")
    return out


def _far_pair(t: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    none = [None, None]
    return t.get("paths_to_other_clusters") or none, t.get("bandwidth_to_other_clusters_gbps") or none


def _far_changed(t: dict[str, Any]) -> bool:
    far, bw = _far_pair(t)
    return far[0] != far[1] or bw[0] != bw[1]


def _far(t: dict[str, Any]) -> str:
    """A site cluster's tier towards the other clusters' racks, where it is not what it is towards every rack."""
    far, bw = _far_pair(t)
    if far[1] is None or (far == t["paths"] and bw == t["bandwidth_gbps"]):
        return ""
    design = (f" (design {t['design_paths_to_other_clusters']})"
              if t.get("design_paths_to_other_clusters") is not None else "")
    return (f"; towards the other clusters {_num(far[0])} -> {_num(far[1])}{design}, "
            f"{_num(bw[0])} -> {_num(bw[1])} Gb/s")


def sweep_lines(s: dict[str, Any]) -> list[str]:
    w = s["worst"]
    if w is None:
        return [f"every single {s['role']} failure: none to fail"]
    drop = w["drop"]
    towards = " towards the other clusters" if drop and drop.get("towards") == "other clusters" else ""
    what = (f"{drop['network']} {_zone(drop)} {drop['role']} ECMP paths{towards} {drop['paths'][0]} -> "
            f"{drop['paths'][1]}, "
            f"bandwidth {_num(drop['bandwidth_gbps'][0])} -> {_num(drop['bandwidth_gbps'][1])} Gb/s"
            if drop else "no tier loses a path")
    return [f"every single {s['role']} failure ({s['failures']}): the worst is {w['failed']}: {what}; "
            f"{w['pairs_lost']:,} same-rail host pairs lost, {w['unreached_routes']:,} routes to rack prefixes lost; "
            f"worst oversubscription over all of them {_num(s['worst_oversubscription'])}:1"]
