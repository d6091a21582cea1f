"""The FRR spelling of a routing intent: bgpd + zebra in one integrated frr.conf.

Not a target of its own: the SONiC target writes it as each switch's frr.conf (SONiC's bgpd is FRR), and the digital
twin runs it for a switch whose NOS cannot run here (EOS), from that switch's routing as read back from its files.
The spelling, for every address family with neighbours:
- the route-policy layout of `teton.frr.policy` (LOCAL_, ORIGINATE_, CONNECTED_ and EXPORT_, names and sequence
  numbers), which the EOS spelling writes too: connected routes redistributed through CONNECTED_<tag>, EXPORT_<tag>
  outbound to every peer group;
- aggregates are announced summary-only;
- every peer group has the maximum-prefix limit, retried after the intent's minutes (`restart`); `update-delay`
  holds updates after a restart until the peers are up;
- a switch that originates a default route (a front-end spine) sends it to its downlink groups (`default-originate`);
- inbound, IMPORT_<x> (`teton.frr.policy.import_policy`) on every session, per peer group or per neighbour, and
  `bgp ebgp-requires-policy`: a session without a policy in and out would carry nothing.
"""

from __future__ import annotations

from types import SimpleNamespace as Row
from typing import Any

from teton.fabric.intent import Routing
from teton.frr.policy import import_policy, route_policy
from teton.secrets import secret_ref
from teton.targets.templates import render_template
from teton.targets.tokens import token

AFI = {"ipv4": "ip", "ipv6": "ipv6"}


def frr_context(hostname: str, r: Routing) -> dict[str, Any]:
    """Template context: prefix lists, route maps, per-family peer groups and address families, each an object whose
    fields the template reads as attributes (`Row`: Jinja reads a dict's `p.afi` only after getattr has failed)."""
    prefix_lists: list[Row] = []
    route_maps: list[Row] = []
    afs: list[Row] = []
    groups: list[Row] = []
    for policy in route_policy(r):
        fam, afi = policy.family, AFI[policy.family]
        aggregates = r.aggregates4 if fam == "ipv4" else r.aggregates6
        prefix_lists += [Row(afi=afi, name=pl.name, seq=e.seq, prefix=e.prefix, ge=e.ge, le=e.le)
                         for pl in (policy.local, policy.originate) for e in pl.entries]
        for rm in (policy.connected, policy.export):
            route_maps.append(Row(name=rm.name, seq=rm.seq, match=rm.match, afi_match=afi,
                                  prepend=" ".join(map(str, rm.prepend)) or None))
        inbound = import_policy(r, fam)
        prefix_lists += [Row(afi=afi, name=i.prefix_list.name, seq=e.seq, prefix=e.prefix, ge=e.ge, le=e.le)
                         for i in inbound for e in i.prefix_list.entries]
        route_maps += [Row(name=i.route_map.name, seq=i.route_map.seq, match=i.route_map.match, afi_match=afi,
                           prepend=None) for i in inbound]
        names = [g.name for g in r.groups if g.family == fam]
        groups += [Row(name=g.name, passive=g.passive) for g in r.groups if g.family == fam]
        afs.append(Row(name=fam, redistribute=policy.connected.name, aggregates=aggregates, groups=names,
                       export=policy.export.name,
                       imports=[Row(who=who, name=i.route_map.name) for i in inbound for who in i.targets],
                       default_to=[g.name for g in r.groups if g.family == fam and g.direction == "down"]
                       if r.default_originate else []))
    token(hostname, hostname, "hostname", "frr.conf")
    neighbors = [Row(ip=token(n.address, hostname, "neighbor", "frr.conf"), remote_as=n.remote_as,
                     description=token(n.peer, hostname, f"neighbor {n.address} peer", "frr.conf"), group=n.group)
                 for n in r.neighbors]
    prefix_lists.sort(key=lambda p: (p.afi != "ip", p.name, p.seq))
    # the intent's own numbers go to the template as they are (`routing`): a new session setting is one template line
    bgp = Row(password=secret_ref(r.password_secret) if r.password_secret else None)
    return {"hostname": hostname, "routing": r, "bgp": bgp, "prefix_lists": prefix_lists, "route_maps": route_maps,
            "groups": groups, "neighbors": neighbors, "afs": afs}


def render_frr(hostname: str, routing: Routing) -> str:
    return render_template("frr/frr.conf.j2", **frr_context(hostname, routing))
