"""The FRR equivalent of an Arista EOS structured config, for the digital twin.

EOS cannot run here.  The twin runs, on FRR, what the rendered EOS structured config says about routing: the same
ASN, router-id, loopbacks, peer groups, neighbours and remote ASNs, timers, password, ECMP width, what is
redistributed and what is exported.  It reads only the artifact (`devices/<name>/structured-config.json`), so a
hand edit to that file reaches the twin; the twin's report names every device run this way.
"""

from __future__ import annotations

from typing import Any

from teton.render.frr import render_frr

_TAG_FAMILY = {"V4": "ipv4", "V6": "ipv6"}


def bgp_from_structured_config(cfg: dict[str, Any]) -> dict[str, Any]:
    """The vendor-neutral BGP intent (as `teton.render.intent.bgp_intent` makes it) that `cfg` expresses."""
    bgp = cfg["router_bgp"]
    groups: dict[str, dict[str, Any]] = {}
    timers = password = None
    bfd = False
    for g in bgp.get("peer_groups", []):
        base, _, tag = g["name"].rpartition("_")
        base = base if tag in _TAG_FAMILY else g["name"]
        direction = "down" if "(downlinks" in g.get("description", "") else "up"
        groups.setdefault(base, {"name": base, "direction": direction})
        timers = g.get("timers", timers)
        password = g.get("password", password)
        bfd = bfd or bool(g.get("bfd"))
    neighbors = []
    for n in bgp.get("neighbors", []):
        base, _, tag = n["peer_group"].rpartition("_")
        family = _TAG_FAMILY.get(tag, "ipv6" if ":" in n["ip_address"] else "ipv4")
        base = base if tag in _TAG_FAMILY else n["peer_group"]
        neighbors.append({"ip": n["ip_address"], "family": family, "remote_as": int(n["remote_as"]),
                          "peer_group": base, "description": n.get("description", ""), "local_ip": None})
    keepalive, hold = (int(x) for x in (timers or "3 9").split())
    loopback = next((lo for lo in cfg.get("loopback_interfaces", []) if lo["name"] == "Loopback0"), {})
    aggregates: dict[str, list[str]] = {"4": [], "6": []}
    for fam, key in (("4", "prefix_lists"), ("6", "ipv6_prefix_lists")):
        for pl in cfg.get(key, []):
            if pl["name"].startswith("LOCAL_"):
                for entry in pl["sequence_numbers"]:
                    words = entry["action"].split()
                    if "le" in words:
                        aggregates[fam].append(words[1])
    export = {rm["name"]: rm for rm in cfg.get("route_maps", [])}.get("EXPORT_V4", {})
    transit = not any(s.get("match") for s in export.get("sequence_numbers", []))
    lo6 = loopback.get("ipv6_addresses", [None])[0]
    return {
        "asn": int(bgp["as"]), "router_id": bgp["router_id"], "peer_groups": sorted(
            groups.values(), key=lambda g: (g["direction"] != "up", g["name"])),
        "neighbors": neighbors, "maximum_paths": bgp.get("maximum_paths", {}).get("paths", 1),
        "keepalive": keepalive, "hold": hold, "connect_retry": 1, "bfd": bfd, "password": password,
        "loopback4": loopback.get("ip_address"), "loopback6": lo6,
        "aggregates4": aggregates["4"], "aggregates6": aggregates["6"],
        "transit": transit,
    }


def frr_conf_for_eos(cfg: dict[str, Any]) -> str:
    return render_frr(cfg["hostname"], bgp_from_structured_config(cfg))
