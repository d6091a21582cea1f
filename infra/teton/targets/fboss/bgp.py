"""BGP++'s config (`BgpConfig`, thrift SimpleJSON) of one switch, spelled from its routing intent.

- router id, local ASN (`local_as_4_byte`: the fabric's ASNs are 4-byte), one peer group per neighbour tier and family
  (`disable_ipv4_afi`/`disable_ipv6_afi` for the other family, `is_passive` towards the lower tier, `peer_tag` the
  side: uplinks or downlinks), the timers on every group, the maximum-prefix limit as its `pre_filter` route limit;
- one peer per neighbour: its address, our link address, 4-byte remote ASN, the port it is on (`router_port_id`, the
  agent's logical id) and its group;
- the networks it originates (`networks4`/`networks6`): the loopback and the aggregates.  BGP++ announces only these
  and what it learns, never connected routes, so an aggregate is summary-only by construction;
- policies equivalent to the other NOSes' export rules (`teton.frr.policy`): EXPORT, applied outbound to every peer,
  permits on a transit switch everything, on a rack switch only the prefix lists ORIGINATE_V4/ORIGINATE_V6, and on a
  drained switch prepends its ASN; inbound, one statement per import policy of the intent (IMPORT_<x>, its prefix list
  of the same name with `prefix_len_ranges` for ge/le), the peer group's `ingress_policy_name` where it applies to the
  whole group, else each peer's (`teton.frr.policy.import_targets`);
- `eor_time_s`: the startup hold (updates wait for the peers' End-of-RIB, at most this long);
- GTSM (`ttl_security_hops` on every peer group) where the design asks: on a plane with FBOSS switches it replaces the
  session password (`teton.design.routing.session_protection`).

BGP++'s BgpConfig has no session password, no BFD, no connect-retry timer, no maximum-prefix restart and no multipath
width: the password is replaced by GTSM (the design's), BFD is warned of by the target's check (`FbossTarget.check`),
the multipath width is the agent's `switchSettings.ecmpWidth`.
"""

from __future__ import annotations

from typing import Any

from teton.fabric.intent import Routing
from teton.frr.policy import Import, PrefixEntry, import_policy, route_policy
from teton.targets.fboss import enums as E

EXPORT = "EXPORT"
SIDE = {"up": "uplinks", "down": "downlinks"}


def _prefix_list(name: str, family: str, entries: tuple[PrefixEntry, ...]) -> dict[str, Any]:
    return {"name": name, "ip_version": E.IPV4 if family == "ipv4" else E.IPV6,
            "prefixes": [{"base_prefix": e.prefix, "seq_num": e.seq, "prefix_len_ranges": _lengths(e),
                          "match_logic": E.MATCH_EQUAL} for e in entries]}


def _lengths(e: PrefixEntry) -> list[dict[str, int]]:
    """A prefix-list line's ge/le as BGP++'s length comparisons (none: the prefix's own length only)."""
    out = []
    if e.ge is not None:
        out.append({"value": e.ge, "compare_operator": E.CMP_GE})
    if e.le is not None:
        out.append({"value": e.le, "compare_operator": E.CMP_LE})
    return out


def _accept(prepend: int, asn: int) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = []
    if prepend:
        actions.append({"action_type": {"route_action": E.AS_PATH_PREPEND},
                        "set_as_path_prepend": {"asn": asn, "repeat_times": prepend}})
    actions.append({"action_type": {"flow_action": E.ACCEPT}})
    return actions


def _match(kind: int, prefix_list: str | None = None) -> list[dict[str, Any]]:
    m: dict[str, Any] = {"type": kind}
    if prefix_list is not None:
        m["prefix_list"] = {"prefix_list_name": prefix_list}
    return [{"name": prefix_list or "always", "match_logic_type": E.BOOL_AND, "match_entries": [m]}]


def policies(r: Routing) -> dict[str, Any]:
    prefix_lists: list[dict[str, Any]] = []
    terms: list[dict[str, Any]] = []
    for policy in route_policy(r):
        if policy.export.match is not None:
            prefix_lists.append(_prefix_list(policy.originate.name, policy.family, policy.originate.entries))
            terms.append({"name": policy.originate.name, "policy_matches": _match(E.MATCH_PREFIX_LIST,
                                                                                  policy.originate.name),
                          "policy_action_entries": _accept(r.drain_prepend, r.asn),
                          "sequence_number": 10 * (len(terms) + 1)})
    if r.transit or not terms:
        terms = [{"name": "ALL", "policy_matches": _match(E.MATCH_ALWAYS),
                  "policy_action_entries": _accept(r.drain_prepend, r.asn), "sequence_number": 10}]
    inbound = [i for p in route_policy(r) for i in import_policy(r, p.family)]
    prefix_lists += [_prefix_list(i.prefix_list.name, i.family, i.prefix_list.entries) for i in inbound]
    return {"prefix_lists": prefix_lists, "bgp_policy_statements": [
        {"name": EXPORT, "description": "what this switch sends its peers (EXPORT_V4/EXPORT_V6 elsewhere)",
         "policy_version": "1", "policy_entries": terms, "result": E.DENY},
        *(_import(i, r.asn) for i in inbound)]}


def _import(i: Import, asn: int) -> dict[str, Any]:
    """An import policy as a statement: what its prefix list matches is accepted, nothing else."""
    rm = i.route_map
    return {"name": rm.name, "description": f"what {', '.join(i.targets)} may send", "policy_version": "1",
            "policy_entries": [{"name": rm.name, "policy_matches": _match(E.MATCH_PREFIX_LIST, rm.match),
                                "policy_action_entries": _accept(0, asn), "sequence_number": rm.seq}],
            "result": E.DENY}


def _ingress(r: Routing) -> dict[str, str]:
    """{peer group name or neighbour address: its import statement}."""
    return {who: i.route_map.name for p in route_policy(r) for i in import_policy(r, p.family) for who in i.targets}


def bgp_config(r: Routing, port_ids: dict[str, int]) -> dict[str, Any]:
    """The BgpConfig of a switch with routing `r`; `port_ids`: the agent's logical id of each port by name."""
    timers = {"hold_time_seconds": r.timers.hold, "keep_alive_seconds": r.timers.keepalive,
              "out_delay_seconds": 0, "withdraw_unprog_delay_seconds": 0}
    ingress = _ingress(r)
    groups = []
    for g in r.groups:
        e: dict[str, Any] = {"name": g.name, "description": f"{g.name} ({SIDE[g.direction]}, {g.family})",
                             "peer_tag": SIDE[g.direction], "is_passive": g.passive,
                             "disable_ipv4_afi": g.family != "ipv4", "disable_ipv6_afi": g.family != "ipv6",
                             "egress_policy_name": EXPORT,
                             "bgp_peer_timers": dict(timers),
                             "pre_filter": {"max_routes": r.maximum_prefixes, "warning_only": False}}
        if r.ttl_security_hops:
            e["ttl_security_hops"] = r.ttl_security_hops      # GTSM (RFC 5082): BGP++'s PeerGroup field 38
        if g.name in ingress:
            e["ingress_policy_name"] = ingress[g.name]
        groups.append(e)
    peers = []
    for n in r.neighbors:
        v4 = n.family == "ipv4"
        p: dict[str, Any] = {"peer_addr": n.address, "local_addr": n.local_address, "remote_as_4_byte": n.remote_as,
                             "next_hop4": n.local_address if v4 else "0.0.0.0",
                             "next_hop6": "::" if v4 else n.local_address,
                             "description": n.peer, "peer_group_name": n.group}
        if n.interface in port_ids:
            p["router_port_id"] = port_ids[n.interface]
        if n.address in ingress:
            p["ingress_policy_name"] = ingress[n.address]
        peers.append(p)
    lo4 = [r.loopback4] if r.loopback4 else []
    lo6 = [r.loopback6] if r.loopback6 else []
    return {"router_id": r.router_id, "local_as_4_byte": r.asn, "hold_time": r.timers.hold, "listen_port": 179,
            "listen_addr": "::", "eor_time_s": r.startup_hold_s,
            "networks4": [{"prefix": p} for p in lo4 + list(r.aggregates4)],
            "networks6": [{"prefix": p} for p in lo6 + list(r.aggregates6)],
            "peer_groups": groups, "peers": peers, "policies": policies(r),
            "drain_state": E.DRAIN_UNDRAINED}
