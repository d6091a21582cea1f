"""FRR bgpd/zebra configuration (frr.conf) from a device's BGP intent.

Used for SONiC devices (`devices/<name>/frr.conf`, SONiC's split routing-config mode) and, by the digital twin, for
the FRR equivalent of an EOS device's rendered structured config (see `teton.twin.eos_to_frr`).
"""

from __future__ import annotations

from typing import Any

from teton.render.templates import render_template

AFI = {"ipv4": ("ip", "ip", "V4"), "ipv6": ("ipv6", "ipv6", "V6")}


def frr_context(hostname: str, bgp: dict[str, Any]) -> dict[str, Any]:
    """Template context: prefix lists, route maps, per-family peer groups and address families."""
    families = [fam for fam in ("ipv4", "ipv6") if any(n["family"] == fam for n in bgp["neighbors"])]
    prefix_lists: list[dict[str, Any]] = []
    route_maps: list[dict[str, Any]] = []
    afs: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    for fam in families:
        afi, match_afi, tag = AFI[fam]
        lo = bgp[f"loopback{fam[-1]}"]
        aggregates = bgp[f"aggregates{fam[-1]}"]
        local, export = f"LOCAL_{tag}", f"ORIGINATE_{tag}"
        seq = 10
        if lo:
            prefix_lists.append({"afi": afi, "name": local, "seq": seq, "prefix": lo, "le": None})
            prefix_lists.append({"afi": afi, "name": export, "seq": seq, "prefix": lo, "le": None})
        for a in aggregates:
            seq += 10
            le = 32 if fam == "ipv4" else 128
            prefix_lists.append({"afi": afi, "name": local, "seq": seq, "prefix": a, "le": le})
            prefix_lists.append({"afi": afi, "name": export, "seq": seq, "prefix": a, "le": None})
        route_maps.append({"name": f"CONNECTED_{tag}", "seq": 10, "match": local, "afi_match": match_afi})
        route_maps.append({"name": f"EXPORT_{tag}", "seq": 10, "match": None if bgp["transit"] else export,
                           "afi_match": match_afi})
        names = []
        for g in bgp["peer_groups"]:
            name = f"{g['name']}_{tag}"
            if any(n["peer_group"] == g["name"] and n["family"] == fam for n in bgp["neighbors"]):
                groups.append({"name": name, "passive": g["direction"] == "down"})
                names.append(name)
        afs.append({"name": fam, "redistribute": f"CONNECTED_{tag}", "aggregates": aggregates, "groups": names,
                    "export": f"EXPORT_{tag}"})
    neighbors = [{"ip": n["ip"], "remote_as": n["remote_as"], "description": n["description"],
                  "group": f"{n['peer_group']}_{AFI[n['family']][2]}"} for n in bgp["neighbors"]]
    prefix_lists.sort(key=lambda p: (p["afi"] != "ip", p["name"], p["seq"]))
    return {"hostname": hostname, "bgp": bgp, "prefix_lists": prefix_lists, "route_maps": route_maps,
            "groups": groups, "neighbors": neighbors, "afs": afs}


def render_frr(hostname: str, bgp: dict[str, Any]) -> str:
    return render_template("frr/frr.conf.j2", **frr_context(hostname, bgp))
