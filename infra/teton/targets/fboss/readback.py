"""An FBOSS switch's files read back into the NOS-neutral view: agent.conf for ports, addresses, the loopback and QoS;
bgpcpp.conf for the routing BGP++ runs, completely enough that the twin runs its FRR spelling.

- interfaces: each routed port's interface (by its VLAN) with its MTU and addresses, named by the port;
- QoS: the data plane's default QoS policy (DSCP -> traffic class -> queue), the PFC priorities (those whose PG is a
  lossless one, with headroom), every queue of every cabled port from its queue config (strict or deficit round robin
  with its weight, the ECN thresholds of an `aqms` entry);
- BGP (the target's one reader of bgpcpp.conf, into the NOS-neutral view through the routing intent it spells,
  `teton.frr.policy.routing_view`): the peer groups (family from the disabled AFI, side from `peer_tag`,
  `is_passive`), every peer (its port from `router_port_id`), timers, GTSM's hops, the maximum-prefix limit, the
  originated networks (the loopback and the aggregates), whether EXPORT filters (a rack switch) or not (transit), its
  prepend, the startup hold (`eor_time_s`), the multipath width (agent.conf's `switchSettings.ecmpWidth`).  BGP++ has no
  connect-retry timer (read back as None, as EOS's) and no maximum-prefix restart: the view keeps the design's
  minutes for the latter, so the twin's FRR runs it.  The policies are BGP++'s own, edits included
  (`policy_views`): each policy statement as a route map of its name (a term as a clause: its prefix-list matches,
  accept or deny, its AS-path prepend; the statement's result as a last clause), each prefix list with its length
  ranges as ge/le, applied as the peer groups and peers name them (`ingress_policy_name` in, `egress_policy_name` out).
  So `teton verify` evaluates them as it does FRR's and EOS's route maps, and the routing the twin runs
  (`teton.frr.policy.routing_of`) carries them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from teton.buildfolder import device_path
from teton.fabric.bgpview import BgpView, PortAddress, PrefixListView, PrefixRule, RouteMapClause, RouteMapView
from teton.fabric.intent import BgpTimersIntent, Family, Neighbor, PeerGroup, Routing
from teton.findings import Finding
from teton.frr.policy import routing_view
from teton.targets.base import DeviceView, LldpView, PortView, QosView, QueueView
from teton.targets.fboss import enums as E

AGENT, BGP = "agent.conf", "bgpcpp.conf"
_SIDE = {"uplinks": "up", "downlinks": "down"}


def _interfaces(sw: dict[str, Any]) -> tuple[dict[str, PortView], tuple[str, ...], dict[int, str]]:
    """Routed ports' views, the loopback addresses, and {logical id: port name}."""
    ports = {p["logicalID"]: p for p in sw.get("ports", [])}
    names = {lid: str(p.get("name", f"port-{lid}")) for lid, p in ports.items()}
    by_vlan = {vp["vlanID"]: vp["logicalPort"] for vp in sw.get("vlanPorts", [])}
    views: dict[str, PortView] = {}
    loopbacks: tuple[str, ...] = ()
    for k, i in enumerate(sw.get("interfaces", [])):
        addrs = tuple(i.get("ipAddresses", []))
        if i.get("isVirtual"):
            loopbacks += addrs
            continue
        lid = by_vlan.get(i.get("vlanID"))
        if lid is None:
            continue
        views[names.get(lid, str(i.get("name")))] = PortView(i.get("mtu"), addrs, f"sw.interfaces[{k}].mtu")
    return views, loopbacks, names


def _qos(sw: dict[str, Any]) -> QosView | None:
    policies = {p["name"]: (k, p) for k, p in enumerate(sw.get("qosPolicies", []))}
    name = sw.get("dataPlaneTrafficPolicy", {}).get("defaultQosPolicy")
    if name not in policies:
        return None
    k, policy = policies[name]
    qmap = policy.get("qosMap", {})
    dscp = {int(d): int(m["internalTrafficClass"]) for m in qmap.get("dscpMaps", [])
            for d in m.get("fromDscpToTrafficClass", [])}
    tc_queue = {int(tc): int(q) for tc, q in qmap.get("trafficClassToQueueId", {}).items()}
    lossless_pgs = {int(pg["id"]) for pgs in sw.get("portPgConfigs", {}).values() for pg in pgs
                    if pg.get("headroomLimitBytes")}
    pfc_ports = [p for p in sw.get("ports", []) if p.get("state") == E.ENABLED and (p.get("pfc") or {}).get("tx")]
    lossless = tuple(sorted(int(p) for p, pg in qmap.get("pfcPriorityToPgId", {}).items()
                            if int(pg) in lossless_pgs)) if pfc_ports else ()
    queues: list[QueueView] = []
    configs = sw.get("portQueueConfigs", {})
    for p in sorted(sw.get("ports", []), key=lambda p: p["logicalID"]):
        cfg = p.get("portQueueConfigName")
        if p.get("state") != E.ENABLED or cfg not in configs:
            continue
        for n, q in enumerate(configs[cfg]):
            strict = q.get("scheduling") == E.STRICT
            ecn = None
            for a in q.get("aqms", []):
                lin = a.get("detection", {}).get("linear")
                if a.get("behavior") == E.AQM_ECN and lin:
                    ecn = (int(lin["minimumLength"]), int(lin["maximumLength"]), int(lin.get("probability", 100)))
            queues.append(QueueView(str(p.get("name")), int(q["id"]), strict, None if strict else q.get("weight"),
                                    ecn, f"sw.portQueueConfigs[{cfg!r}][{n}]"))
    return QosView(lossless, dscp, f"sw.qosPolicies[{k}].qosMap", tc_queue, tuple(queues))


def _export(bgp: dict[str, Any]) -> tuple[bool, int]:
    """(transit, prepend) from the policy every peer group sends through."""
    egress = {g.get("egress_policy_name") for g in bgp.get("peer_groups", [])}
    statements = [s for s in bgp.get("policies", {}).get("bgp_policy_statements", []) if s.get("name") in egress]
    terms = [t for s in statements for t in s.get("policy_entries", [])]
    filters = any(e.get("type") == E.MATCH_PREFIX_LIST for t in terms for m in t.get("policy_matches", [])
                  for e in m.get("match_entries", []))
    prepend = max((int(a["set_as_path_prepend"].get("repeat_times", 0)) for t in terms
                   for a in t.get("policy_action_entries", []) if a.get("set_as_path_prepend")), default=0)
    return not filters, prepend


def _routing(bgp: dict[str, Any], sw: dict[str, Any], names: dict[int, str], loopbacks: tuple[str, ...],
             restart_min: int) -> Routing:
    groups: list[PeerGroup] = []
    family: dict[str, Family] = {}
    timers, max_routes, ttl = BgpTimersIntent(30, 90, None), 0, None
    for g in bgp.get("peer_groups", []):
        fam: Family = "ipv6" if g.get("disable_ipv4_afi") else "ipv4"
        family[g["name"]] = fam
        side = _SIDE.get(str(g.get("peer_tag", "")), "down" if g.get("is_passive") else "up")
        groups.append(PeerGroup(g["name"], fam, side, bool(g.get("is_passive"))))  # type: ignore[arg-type]
        t = g.get("bgp_peer_timers") or {}
        if t:
            timers = BgpTimersIntent(int(t["keep_alive_seconds"]), int(t["hold_time_seconds"]), None)
        max_routes = int((g.get("pre_filter") or {}).get("max_routes", max_routes))
        ttl = int(g["ttl_security_hops"]) if g.get("ttl_security_hops") else ttl
    neighbors = [Neighbor(p["peer_addr"], family.get(p.get("peer_group_name", ""),
                                                     "ipv6" if ":" in p["peer_addr"] else "ipv4"),
                          int(p["remote_as_4_byte"]), p.get("peer_group_name", ""),
                          names.get(p.get("router_port_id", -1), ""), p["local_addr"], p.get("description", ""))
                 for p in bgp.get("peers", [])]
    lo4 = next((a for a in loopbacks if ":" not in a), None)
    lo6 = next((a for a in loopbacks if ":" in a), None)
    nets4 = [n["prefix"] for n in bgp.get("networks4", []) if n["prefix"] != lo4]
    nets6 = [n["prefix"] for n in bgp.get("networks6", []) if n["prefix"] != lo6]
    transit, prepend = _export(bgp)
    width = sw.get("switchSettings", {}).get("ecmpWidth", 1)
    return Routing(
        asn=int(bgp["local_as_4_byte"]), router_id=bgp["router_id"],
        groups=tuple(sorted(groups, key=lambda g: (g.direction != "up", g.name))), neighbors=tuple(neighbors),
        maximum_paths=int(width), timers=timers, bfd=False, password_secret=None, loopback4=lo4, loopback6=lo6,
        aggregates4=tuple(nets4), aggregates6=tuple(nets6), transit=transit, maximum_prefixes=max_routes,
        maximum_prefix_restart_min=restart_min, startup_hold_s=int(bgp.get("eor_time_s", 0)), drain_prepend=prepend,
        ttl_security_hops=ttl)


def _prefix_list_view(pl: dict[str, Any]) -> tuple[PrefixListView, list[str]]:
    family: Family = "ipv6" if pl.get("ip_version") == E.IPV6 else "ipv4"
    rules, problems = [], []
    for k, e in enumerate(pl.get("prefixes", [])):
        ge = le = None
        for c in e.get("prefix_len_ranges", []):
            op, value = c.get("compare_operator"), int(c.get("value", 0))
            if op == E.CMP_GE:
                ge = value
            elif op == E.CMP_LE:
                le = value
            elif op == E.CMP_EQ:
                ge = le = value
            else:
                problems.append(f"prefix list {pl.get('name')} entry {k}: length comparison {op} not modelled")
        if e.get("regex") is not None:
            problems.append(f"prefix list {pl.get('name')} entry {k}: a regex is not modelled")
        rules.append(PrefixRule(int(e.get("seq_num", 10 * (k + 1))), e.get("match_logic", E.MATCH_EQUAL) ==
                                E.MATCH_EQUAL, str(e["base_prefix"]), ge, le))
    return PrefixListView(str(pl.get("name", "")), family, tuple(sorted(rules, key=lambda r: r.seq))), problems


def _route_map_view(st: dict[str, Any]) -> RouteMapView:
    """A policy statement as a route map: each term a clause (its matches ANDed: prefix lists, or always), accepting
    or denying with its AS-path prepend; the statement's result for what no term takes."""
    clauses = []
    for t in sorted(st.get("policy_entries", []), key=lambda t: int(t.get("sequence_number", 0))):
        match: list[str] = []
        prepend: list[int] = []
        other: list[str] = []
        permit = False
        for m in t.get("policy_matches", []):
            for e in m.get("match_entries", []):
                if e.get("type") == E.MATCH_PREFIX_LIST:
                    match.append(str(e["prefix_list"]["prefix_list_name"]))
                elif e.get("type") != E.MATCH_ALWAYS:
                    other.append(f"match type {e.get('type')}")
            if m.get("match_logic_type", E.BOOL_AND) != E.BOOL_AND and len(m.get("match_entries", [])) > 1:
                other.append("match logic OR")
        if len(t.get("policy_matches", [])) > 1:
            other.append("several policy matches")
        for a in t.get("policy_action_entries", []):
            kind = a.get("action_type", {})
            if kind.get("flow_action") is not None:
                permit = kind["flow_action"] == E.ACCEPT
            elif kind.get("route_action") == E.AS_PATH_PREPEND and a.get("set_as_path_prepend"):
                pp = a["set_as_path_prepend"]
                prepend += [int(pp["asn"])] * int(pp.get("repeat_times", 1))
            else:
                other.append(f"action {kind}")
        clauses.append(RouteMapClause(int(t.get("sequence_number", 0)), permit, tuple(match), tuple(prepend),
                                      tuple(other)))
    if st.get("result") == E.ACCEPT:
        last = max((c.seq for c in clauses), default=0) + 10
        clauses.append(RouteMapClause(last, True))
    return RouteMapView(str(st.get("name", "")), tuple(clauses))


def policy_views(view: BgpView, bgp: dict[str, Any]) -> BgpView:
    """`view` (the layout `routing_view` spells) with BGP++'s own policies in place of its IMPORT_/EXPORT_ ones: the
    statements as route maps, the prefix lists, each peer's in and out policy by name (a peer's own over its
    group's).  The connected-route map and its prefix list stay (BGP++ announces `networks4`/`networks6`, which the
    view gives as connected routes through them)."""
    pol = bgp.get("policies", {})
    lists, problems = [], list(view.problems)
    for pl in pol.get("prefix_lists", []):
        got, bad = _prefix_list_view(pl)
        lists.append(got)
        problems += bad
    maps = [_route_map_view(st) for st in pol.get("bgp_policy_statements", [])]
    connected = {f.connected_map for f in view.families if f.connected_map}
    keep_maps = [m for m in view.route_maps if m.name in connected]
    keep_lists = {x for m in keep_maps for c in m.clauses for x in c.match}
    groups = {g["name"]: g for g in bgp.get("peer_groups", [])}
    configured = {p["peer_addr"]: p for p in bgp.get("peers", [])}
    peers = []
    for p in view.peers:
        me = configured.get(p.address, {})
        g = groups.get(me.get("peer_group_name", ""), {})
        inn = me.get("ingress_policy_name") or g.get("ingress_policy_name")
        out = me.get("egress_policy_name") or g.get("egress_policy_name")
        peers.append(replace(p, route_map_in=tuple((f, inn) for f in p.families) if inn else (),
                             route_map_out=tuple((f, out) for f in p.families) if out else ()))
    return replace(view, peers=tuple(peers), route_maps=tuple(keep_maps + maps),
                   prefix_lists=tuple([x for x in view.prefix_lists if x.name in keep_lists] + lists),
                   problems=tuple(problems))


def read_fboss(name: str, agent: dict[str, Any], bgp: dict[str, Any] | None,
               restart_min: int) -> tuple[DeviceView, list[Finding]]:
    """The view of switch `name` from its agent config and BGP++ config (None: it runs no BGP)."""
    rel, bgp_rel = device_path(name, AGENT), device_path(name, BGP)
    sw = agent.get("sw", {})
    interfaces, loopbacks, names = _interfaces(sw)
    view = DeviceView(name, "switch", bgp_rel if bgp is not None else rel, loopbacks=loopbacks,
                      interfaces=interfaces, qos_file=rel, qos=_qos(sw))
    # the agent's LLDP announces each port's name as its port id; the system name is the box's hostname, which the
    # switch's provisioning sets (agent.conf has none): the device's name
    view.lldp = LldpView(name, {n: n for n in names.values()}, f"{rel} sw.ports[*].name")
    findings: list[Finding] = []
    if bgp is not None:
        routing = _routing(bgp, sw, names, loopbacks, restart_min)
        ports = [PortAddress(port, cidr) for port, p in interfaces.items() for cidr in p.addresses]
        view.bgp = policy_views(routing_view(name, bgp_rel, routing, ports, loopbacks, lambda k: f"peers[{k}]"), bgp)
        for k, n in enumerate(routing.neighbors):
            if not n.interface:
                findings.append(Finding(bgp_rel, f"peers[{k}].router_port_id", f"peer {n.address}'s port is no port "
                                        f"of {AGENT}", rule="fboss-xref"))
    return view, findings
