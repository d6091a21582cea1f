"""The FRR spelling of a routing intent: bgpd + zebra in one integrated frr.conf.

Not a target of its own: the SONiC target writes it as each switch's frr.conf (SONiC's bgpd is FRR), and the digital
twin runs it for a switch whose NOS cannot run here (EOS), from that switch's routing as read back from its files.
The spelling, for every address family with neighbours:
- LOCAL_<V4|V6> matches the switch's loopback and its aggregates with their more-specifics; connected routes are
  redistributed through CONNECTED_<tag>, which permits only those;
- aggregates are announced summary-only;
- EXPORT_<tag>, applied outbound to every peer group, permits everything on a transit switch and only ORIGINATE_<tag>
  (the loopback and the aggregates, exactly) on a rack switch; a drained switch prepends its ASN (the intent's count);
- every peer group has the maximum-prefix limit; `update-delay` holds updates after a restart until the peers are up;
- a switch that originates a default route (a front-end spine) sends it to its downlink groups (`default-originate`).
"""

from __future__ import annotations

from typing import Any

from teton.fabric.intent import Routing
from teton.secrets import secret_ref
from teton.targets.templates import render_template

TAG = {"ipv4": "V4", "ipv6": "V6"}
AFI = {"ipv4": "ip", "ipv6": "ipv6"}
MAX_LEN = {"ipv4": 32, "ipv6": 128}


def frr_context(hostname: str, r: Routing) -> dict[str, Any]:
    """Template context: prefix lists, route maps, per-family peer groups and address families."""
    prefix_lists: list[dict[str, Any]] = []
    route_maps: list[dict[str, Any]] = []
    afs: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = []
    for fam in r.families():
        afi, tag = AFI[fam], TAG[fam]
        lo = r.loopback4 if fam == "ipv4" else r.loopback6
        aggregates = r.aggregates4 if fam == "ipv4" else r.aggregates6
        local, export = f"LOCAL_{tag}", f"ORIGINATE_{tag}"
        seq = 10
        if lo:
            prefix_lists.append({"afi": afi, "name": local, "seq": seq, "prefix": lo, "le": None})
            prefix_lists.append({"afi": afi, "name": export, "seq": seq, "prefix": lo, "le": None})
        for a in aggregates:
            seq += 10
            prefix_lists.append({"afi": afi, "name": local, "seq": seq, "prefix": a, "le": MAX_LEN[fam]})
            prefix_lists.append({"afi": afi, "name": export, "seq": seq, "prefix": a, "le": None})
        route_maps.append({"name": f"CONNECTED_{tag}", "seq": 10, "match": local, "afi_match": afi, "prepend": None})
        route_maps.append({"name": f"EXPORT_{tag}", "seq": 10, "match": None if r.transit else export,
                           "afi_match": afi, "prepend": " ".join([str(r.asn)] * r.drain_prepend) or None})
        names = [g.name for g in r.groups if g.family == fam]
        groups += [{"name": g.name, "passive": g.passive} for g in r.groups if g.family == fam]
        afs.append({"name": fam, "redistribute": f"CONNECTED_{tag}", "aggregates": aggregates, "groups": names,
                    "export": f"EXPORT_{tag}",
                    "default_to": [g.name for g in r.groups if g.family == fam and g.direction == "down"]
                    if r.default_originate else []})
    neighbors = [{"ip": n.address, "remote_as": n.remote_as, "description": n.peer, "group": n.group}
                 for n in r.neighbors]
    prefix_lists.sort(key=lambda p: (p["afi"] != "ip", p["name"], p["seq"]))
    bgp = {"asn": r.asn, "router_id": r.router_id, "keepalive": r.timers.keepalive, "hold": r.timers.hold,
           "connect_retry": r.timers.connect_retry, "bfd": r.bfd, "maximum_paths": r.maximum_paths,
           "maximum_prefixes": r.maximum_prefixes, "startup_hold": r.startup_hold_s,
           "password": secret_ref(r.password_secret) if r.password_secret else None}
    return {"hostname": hostname, "bgp": bgp, "prefix_lists": prefix_lists, "route_maps": route_maps,
            "groups": groups, "neighbors": neighbors, "afs": afs}


def render_frr(hostname: str, routing: Routing) -> str:
    return render_template("frr/frr.conf.j2", **frr_context(hostname, routing))
