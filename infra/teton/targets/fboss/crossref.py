"""The strict check's second half: what the IDL cannot say about a config, checked against the box's platform mapping
and the config's own names.

Agent config: every port's name is a port of the box and its logical id the mapping's; its profile is one the mapping
supports on that port and its speed the profile's; no enabled port uses lanes another enabled port's profile takes
(subsumed ports); every reference resolves (a port's queue config, PG config and ingress VLAN; a PG's or queue's buffer
pool; the QoS policy the data plane uses; a QoS map's queues and PGs; a VLAN's interface; an interface's VLAN; a VLAN
port's port; a load balancer's UDF group; a CPU rx reason's queue), and the values the IDL types too widely are in
range (a DSCP is 0..63, a traffic class, PFC priority, queue or PG 0..7, an ECN threshold's minimum below its maximum).

BGP++ config: the router id is an IPv4 address, every address parses, every peer's group and every policy and prefix
list a peer or term names exists, a peer's port is a port of the agent config, ASNs are 4-byte.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Any

from teton.targets.fboss.platform import PlatformMap
from teton.targets.fboss.walk import Issue

DSCP_MAX, TC_MAX = 63, 7
ASN_MAX = (1 << 32) - 1


def _list(v: Any) -> list[Any]:
    return v if isinstance(v, list) else []


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


class _Check:
    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def bad(self, path: str, message: str) -> None:
        self.issues.append(Issue(path, message))

    def ref(self, path: str, value: Any, known: Iterable[Any], what: str) -> None:
        names = set(known)
        if value is not None and value not in names:
            shown = ", ".join(sorted(map(str, names))[:6]) or "none"
            self.bad(path, f"{value!r} names no {what} (defined: {shown})")

    def in_range(self, path: str, value: Any, hi: int, what: str) -> None:
        if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= hi:
            self.bad(path, f"{what} {value} is out of 0..{hi}")

    def address(self, path: str, value: Any, cidr: bool = False) -> None:
        if not isinstance(value, str):
            return
        try:
            ipaddress.ip_interface(value) if cidr else ipaddress.ip_address(value)
        except ValueError:
            self.bad(path, f"{value!r} is not an IP {'address with a prefix length' if cidr else 'address'}")


def _ports(c: _Check, sw: dict[str, Any], pm: PlatformMap, profile_names: dict[int, str]) -> dict[int, str]:
    """The port checks; {logical id: name} of the config's ports."""
    ids: dict[int, str] = {}
    enabled: dict[int, tuple[int, str]] = {}     # logical id -> (profile, path)
    vlans = {v.get("id") for v in _list(sw.get("vlans")) if isinstance(v, dict)}
    queues = _dict(sw.get("portQueueConfigs"))
    pgs = _dict(sw.get("portPgConfigs"))
    for k, p in enumerate(_list(sw.get("ports"))):
        if not isinstance(p, dict):
            continue
        path = f"sw.ports[{k}]"
        name, lid, prof = p.get("name"), p.get("logicalID"), p.get("profileID")
        if lid in ids:
            c.bad(f"{path}.logicalID", f"logical id {lid} is also port {ids[lid]}'s")
        if isinstance(lid, int):
            ids[lid] = str(name)
        pp = pm.ports.get(str(name))
        if pp is None:
            c.bad(f"{path}.name", f"{name!r} is no port of {pm.platform} in FBOSS's platform mapping")
            continue
        if lid != pp.id:
            c.bad(f"{path}.logicalID", f"{lid} but FBOSS's {pm.platform} platform mapping gives {name} logical "
                  f"id {pp.id}")
        if prof not in pp.profiles:
            have = ", ".join(f"{i} {profile_names.get(i, '?')}" for i in sorted(pp.profiles))
            said = profile_names.get(prof, "unknown") if isinstance(prof, int) else "not an id"
            c.bad(f"{path}.profileID", f"profile {prof} ({said}) is not supported on {pm.platform} port {name} (it "
                  f"supports {have})")
        elif prof in pm.profiles and p.get("speed", 0) not in (0, pm.profiles[prof].speed_mbps):
            c.bad(f"{path}.speed", f"{p.get('speed')} Mb/s but profile {prof} ({profile_names.get(prof, '?')}) runs "
                  f"{pm.profiles[prof].speed_mbps}")
        if p.get("state") == 2 and isinstance(lid, int) and isinstance(prof, int):
            enabled[lid] = (prof, path)
        c.ref(f"{path}.ingressVlan", p.get("ingressVlan"), vlans, "VLAN")
        c.ref(f"{path}.portQueueConfigName", p.get("portQueueConfigName"), queues, "port queue config")
        pfc = _dict(p.get("pfc"))
        c.ref(f"{path}.pfc.portPgConfigName", pfc.get("portPgConfigName"), pgs, "port PG config")
    for lid, (prof, path) in sorted(enabled.items()):
        pp = pm.by_id.get(lid)
        for sub in (pp.profiles.get(prof, ()) if pp is not None else ()):
            if sub in enabled:
                c.bad(f"{path}.profileID", f"at this profile {pp.name if pp else lid} takes the lanes of "
                      f"{pm.by_id[sub].name}, which is enabled too ({enabled[sub][1]})")
    return ids


def _qos(c: _Check, sw: dict[str, Any]) -> None:
    pools = set(_dict(sw.get("bufferPoolConfigs")))
    queue_ids: dict[str, set[Any]] = {}
    for name, queues in _dict(sw.get("portQueueConfigs")).items():
        seen: set[Any] = set()
        for k, q in enumerate(_list(queues)):
            if not isinstance(q, dict):
                continue
            path = f"sw.portQueueConfigs[{name!r}][{k}]"
            if q.get("id") in seen:
                c.bad(f"{path}.id", f"queue {q.get('id')} is configured twice")
            seen.add(q.get("id"))
            c.in_range(f"{path}.id", q.get("id"), TC_MAX, "queue")
            c.ref(f"{path}.bufferPoolName", q.get("bufferPoolName"), pools, "buffer pool")
            if q.get("scheduling") in (0, 2) and "weight" not in q:
                c.bad(f"{path}.weight", "a round-robin queue needs a weight")
            for a, aqm in enumerate(_list(q.get("aqms"))):
                lin = _dict(_dict(_dict(aqm).get("detection")).get("linear"))
                lo, hi = lin.get("minimumLength"), lin.get("maximumLength")
                if isinstance(lo, int) and isinstance(hi, int) and lo > hi:
                    c.bad(f"{path}.aqms[{a}].detection.linear", f"minimumLength {lo} is above maximumLength {hi}")
                c.in_range(f"{path}.aqms[{a}].detection.linear.probability", lin.get("probability"), 100,
                           "probability")
        queue_ids[name] = seen
    pg_ids: dict[str, set[Any]] = {}
    for name, pgs in _dict(sw.get("portPgConfigs")).items():
        pg_ids[name] = set()
        for k, pg in enumerate(_list(pgs)):
            if isinstance(pg, dict):
                path = f"sw.portPgConfigs[{name!r}][{k}]"
                c.in_range(f"{path}.id", pg.get("id"), TC_MAX, "priority group")
                c.ref(f"{path}.bufferPoolName", pg.get("bufferPoolName"), pools, "buffer pool")
                pg_ids[name].add(pg.get("id"))
    policies = {}
    for k, pol in enumerate(_list(sw.get("qosPolicies"))):
        if not isinstance(pol, dict):
            continue
        path = f"sw.qosPolicies[{k}]"
        policies[pol.get("name")] = pol
        qmap = _dict(pol.get("qosMap"))
        seen_dscp: dict[int, int] = {}
        for m, dm in enumerate(_list(qmap.get("dscpMaps"))):
            dm = _dict(dm)
            c.in_range(f"{path}.qosMap.dscpMaps[{m}].internalTrafficClass", dm.get("internalTrafficClass"), TC_MAX,
                       "traffic class")
            for j, dscp in enumerate(_list(dm.get("fromDscpToTrafficClass"))):
                where = f"{path}.qosMap.dscpMaps[{m}].fromDscpToTrafficClass[{j}]"
                c.in_range(where, dscp, DSCP_MAX, "DSCP")
                if dscp in seen_dscp:
                    c.bad(where, f"DSCP {dscp} is also mapped by dscpMaps[{seen_dscp[dscp]}]")
                if isinstance(dscp, int):
                    seen_dscp[dscp] = m
        for field, what in (("trafficClassToQueueId", "queue"), ("pfcPriorityToQueueId", "queue"),
                            ("trafficClassToPgId", "priority group"), ("pfcPriorityToPgId", "priority group")):
            for key, v in _dict(qmap.get(field)).items():
                where = f"{path}.qosMap.{field}[{key!r}]"
                if str(key).lstrip("-").isdigit():
                    c.in_range(where, int(key), TC_MAX, "traffic class" if "traffic" in field else "PFC priority")
                c.in_range(where, v, TC_MAX, what)
                known = queue_ids if what == "queue" else pg_ids
                for cfg, ids in sorted(known.items()):
                    if v not in ids:
                        c.bad(where, f"{what} {v} is not configured in {cfg!r}")
    dp = _dict(sw.get("dataPlaneTrafficPolicy"))
    c.ref("sw.dataPlaneTrafficPolicy.defaultQosPolicy", dp.get("defaultQosPolicy"), policies, "QoS policy")
    for key, name in _dict(dp.get("portIdToQosPolicy")).items():
        c.ref(f"sw.dataPlaneTrafficPolicy.portIdToQosPolicy[{key!r}]", name, policies, "QoS policy")


def _l3(c: _Check, sw: dict[str, Any], port_ids: dict[int, str]) -> None:
    vlans: dict[Any, int] = {}
    for k, v in enumerate(_list(sw.get("vlans"))):
        v = _dict(v)
        if v.get("id") in vlans:
            c.bad(f"sw.vlans[{k}].id", f"VLAN {v.get('id')} is also sw.vlans[{vlans[v.get('id')]}]")
        vlans[v.get("id")] = k
    c.ref("sw.defaultVlan", sw.get("defaultVlan"), vlans, "VLAN")
    intfs: dict[Any, int] = {}
    for k, i in enumerate(_list(sw.get("interfaces"))):
        i = _dict(i)
        if i.get("intfID") in intfs:
            c.bad(f"sw.interfaces[{k}].intfID", f"interface {i.get('intfID')} is also "
                  f"sw.interfaces[{intfs[i.get('intfID')]}]")
        intfs[i.get("intfID")] = k
        if i.get("type", 1) == 1:
            c.ref(f"sw.interfaces[{k}].vlanID", i.get("vlanID"), vlans, "VLAN")
        for j, a in enumerate(_list(i.get("ipAddresses"))):
            c.address(f"sw.interfaces[{k}].ipAddresses[{j}]", a, cidr=True)
    for k, v in enumerate(_list(sw.get("vlans"))):
        c.ref(f"sw.vlans[{k}].intfID", _dict(v).get("intfID"), intfs, "interface")
    for k, vp in enumerate(_list(sw.get("vlanPorts"))):
        vp = _dict(vp)
        c.ref(f"sw.vlanPorts[{k}].vlanID", vp.get("vlanID"), vlans, "VLAN")
        c.ref(f"sw.vlanPorts[{k}].logicalPort", vp.get("logicalPort"), port_ids, "port (logical id)")
    udf = set(_dict(_dict(sw.get("udfConfig")).get("udfGroups")))
    matchers = set(_dict(_dict(sw.get("udfConfig")).get("udfPacketMatcher")))
    for name, g in _dict(_dict(sw.get("udfConfig")).get("udfGroups")).items():
        for j, m in enumerate(_list(_dict(g).get("udfPacketMatcherIds"))):
            c.ref(f"sw.udfConfig.udfGroups[{name!r}].udfPacketMatcherIds[{j}]", m, matchers, "UDF packet matcher")
    for k, lb in enumerate(_list(sw.get("loadBalancers"))):
        for j, g in enumerate(_list(_dict(_dict(lb).get("fieldSelection")).get("udfGroups"))):
            c.ref(f"sw.loadBalancers[{k}].fieldSelection.udfGroups[{j}]", g, udf, "UDF group")
    cpu = {_dict(q).get("id") for q in _list(sw.get("cpuQueues"))}
    for k, r in enumerate(_list(_dict(sw.get("cpuTrafficPolicy")).get("rxReasonToQueueOrderedList"))):
        c.ref(f"sw.cpuTrafficPolicy.rxReasonToQueueOrderedList[{k}].queueId", _dict(r).get("queueId"), cpu,
              "CPU queue")


def check_agent(cfg: Any, pm: PlatformMap, profile_names: dict[int, str]) -> list[Issue]:
    """Every cross-reference problem of an agent config against the box's platform map (`pm`)."""
    c = _Check()
    sw = _dict(_dict(cfg).get("sw"))
    port_ids = _ports(c, sw, pm, profile_names)
    _qos(c, sw)
    _l3(c, sw, port_ids)
    return c.issues


def check_bgp(cfg: Any, port_ids: set[int] | None = None) -> list[Issue]:
    """Every cross-reference problem of a BgpConfig; `port_ids`: the agent config's logical port ids, if known."""
    c = _Check()
    cfg = _dict(cfg)
    rid = cfg.get("router_id")
    if isinstance(rid, str):
        try:
            ipaddress.IPv4Address(rid)
        except ValueError:
            c.bad("router_id", f"{rid!r} is not an IPv4 address (BGP's router id is 32 bits)")
    for field in ("local_as_4_byte",):
        if isinstance(cfg.get(field), int) and not 1 <= cfg[field] <= ASN_MAX:
            c.bad(field, f"ASN {cfg[field]} is out of 1..{ASN_MAX}")
    pol = _dict(cfg.get("policies"))
    statements = {_dict(s).get("name") for s in _list(pol.get("bgp_policy_statements"))}
    prefix_lists = {_dict(p).get("name") for p in _list(pol.get("prefix_lists"))}
    for k, s in enumerate(_list(pol.get("bgp_policy_statements"))):
        for t, term in enumerate(_list(_dict(s).get("policy_entries"))):
            for m, match in enumerate(_list(_dict(term).get("policy_matches"))):
                for e, entry in enumerate(_list(_dict(match).get("match_entries"))):
                    ref = _dict(_dict(entry).get("prefix_list")).get("prefix_list_name")
                    c.ref(f"policies.bgp_policy_statements[{k}].policy_entries[{t}].policy_matches[{m}]."
                          f"match_entries[{e}].prefix_list.prefix_list_name", ref, prefix_lists, "prefix list")
    for k, p in enumerate(_list(pol.get("prefix_lists"))):
        for j, e in enumerate(_list(_dict(p).get("prefixes"))):
            c.address(f"policies.prefix_lists[{k}].prefixes[{j}].base_prefix", _dict(e).get("base_prefix"), True)
    groups: dict[Any, dict[str, Any]] = {}
    for k, g in enumerate(_list(cfg.get("peer_groups"))):
        g = _dict(g)
        if g.get("name") in groups:
            c.bad(f"peer_groups[{k}].name", f"peer group {g.get('name')!r} is defined twice")
        groups[g.get("name")] = g
        for f in ("ingress_policy_name", "egress_policy_name"):
            c.ref(f"peer_groups[{k}].{f}", g.get(f), statements, "policy statement")
    for k, p in enumerate(_list(cfg.get("peers"))):
        p = _dict(p)
        path = f"peers[{k}]"
        c.ref(f"{path}.peer_group_name", p.get("peer_group_name"), groups, "peer group")
        for f in ("ingress_policy_name", "egress_policy_name"):
            c.ref(f"{path}.{f}", p.get(f), statements, "policy statement")
        for f in ("peer_addr", "local_addr"):
            c.address(f"{path}.{f}", p.get(f))
        asn = p.get("remote_as_4_byte", _dict(groups.get(p.get("peer_group_name"))).get("remote_as_4_byte"))
        if asn is None:
            c.bad(f"{path}.remote_as_4_byte", "the peer has no remote ASN (neither it nor its group sets one)")
        elif isinstance(asn, int) and not 1 <= asn <= ASN_MAX:
            c.bad(f"{path}.remote_as_4_byte", f"ASN {asn} is out of 1..{ASN_MAX}")
        if port_ids is not None:
            c.ref(f"{path}.router_port_id", p.get("router_port_id"), port_ids, "port of agent.conf (logical id)")
    for fam in ("networks4", "networks6"):
        for k, n in enumerate(_list(cfg.get(fam))):
            c.address(f"{fam}[{k}].prefix", _dict(n).get("prefix"), cidr=True)
    return c.issues
