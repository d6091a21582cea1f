"""An EOS structured config's BGP read back into the NOS-neutral BGP view (`teton.fabric.bgpview`), edits included:
what `teton verify` models an Arista switch with.

Read from eos_cli_config_gen's fields as EOS applies them: peer groups and neighbours (a neighbour takes its group's
remote-as, password, passive, shutdown, maximum-routes and default-originate unless it sets its own), the address
families that activate them and the route maps they apply (`route_map_in`/`route_map_out`, per group or per
neighbour), `bgp.default.ipv4_unicast` (EOS activates IPv4 neighbours in IPv4 unicast unless it is false), connected
routes redistributed (`redistribute.connected` or `redistribute_routes`), networks, aggregates (summary-only),
`maximum_paths.paths` (EOS's default: 1), `bgp bestpath as-path multipath-relax` and `bgp convergence time` (the
startup hold) among `bgp_defaults`, timers ("keepalive hold"; EOS has no per-peer connect-retry timer), BFD, the side
a group faces (`metadata.type`: uplinks or downlinks), the maximum-routes restart (`neighbor G idle-restart-timer S`
in `eos_cli`: pyavd has no key for it), the prefix lists and route maps by name, the ports' addresses (a port with
`shutdown: true` is down) and Loopback0.

This is the EOS target's one reader of `router_bgp`: `teton verify` models the switch with this view, and the twin
and drift run the FRR spelling of the routing it carries (`teton.frr.policy.routing_of`).
"""

from __future__ import annotations

import ipaddress
from typing import Any

from teton.buildfolder import device_path
from teton.fabric.bgpview import (
    FAMILIES,
    BgpFamily,
    BgpPeer,
    BgpView,
    PortAddress,
    PrefixListView,
    PrefixRule,
    RouteMapClause,
    RouteMapView,
    password_ref,
    port_owner,
)
from teton.fabric.intent import BgpTimersIntent, Direction, Family

EOS_MAXIMUM_PATHS = 1
RELAX = "bgp bestpath as-path multipath-relax"
CONVERGENCE = "bgp convergence time "
_SIDE: dict[str, Direction] = {"uplinks": "up", "downlinks": "down"}


def _timers(value: Any) -> BgpTimersIntent | None:
    words = str(value).split() if value is not None else []
    if len(words) != 2 or not all(w.isdigit() for w in words):
        return None
    return BgpTimersIntent(int(words[0]), int(words[1]), None)


def _idle_restart(eos_cli: Any) -> dict[str, int]:
    """`neighbor <group or address> idle-restart-timer <seconds>` lines of `eos_cli`, by group or address."""
    out = {}
    for line in str(eos_cli or "").splitlines():
        words = line.split()
        if len(words) == 4 and words[0] == "neighbor" and words[2] == "idle-restart-timer" and words[3].isdigit():
            out[words[1]] = int(words[3])
    return out


def _ports(cfg: dict[str, Any]) -> tuple[list[PortAddress], list[str]]:
    ports = []
    for e in cfg.get("ethernet_interfaces", []):
        up = not e.get("shutdown", False)
        for cidr in [e.get("ip_address"), *e.get("ipv6_addresses", [])]:
            if cidr and "/" in str(cidr):
                ports.append(PortAddress(e["name"], str(cidr), up))
    loopbacks = [str(c) for lo in cfg.get("loopback_interfaces", []) if not lo.get("shutdown", False)
                 for c in [lo.get("ip_address"), *lo.get("ipv6_addresses", [])] if c]
    return ports, loopbacks


def _prefix_lists(cfg: dict[str, Any]) -> list[PrefixListView]:
    out = []
    for key, fam in (("prefix_lists", "ipv4"), ("ipv6_prefix_lists", "ipv6")):
        for pl in cfg.get(key, []):
            rules = []
            for s in pl.get("sequence_numbers", []):
                words = str(s.get("action", "")).split()
                if len(words) < 2 or words[0] not in ("permit", "deny"):
                    continue
                opts = dict(zip(words[2::2], words[3::2], strict=False))
                rules.append(PrefixRule(int(s["sequence"]), words[0] == "permit",
                                        str(ipaddress.ip_network(words[1], strict=False)),
                                        int(opts["ge"]) if "ge" in opts else None,
                                        int(opts["le"]) if "le" in opts else None))
            out.append(PrefixListView(pl["name"], fam, tuple(sorted(rules, key=lambda r: r.seq))))  # type: ignore[arg-type]
    return out


def _route_maps(cfg: dict[str, Any]) -> list[RouteMapView]:
    out = []
    for rm in cfg.get("route_maps", []):
        clauses = []
        for s in rm.get("sequence_numbers", []):
            match, prepend, other = [], [], []
            for m in s.get("match", []):
                words = str(m).split()
                if len(words) == 4 and words[1:3] == ["address", "prefix-list"] and words[0] in ("ip", "ipv6"):
                    match.append(words[3])
                else:
                    other.append(f"match {m}")
            for x in s.get("set", []):
                words = str(x).split()
                if words[:2] == ["as-path", "prepend"] and all(w.isdigit() for w in words[2:]):
                    prepend += [int(w) for w in words[2:]]
                else:
                    other.append(f"set {x}")
            clauses.append(RouteMapClause(int(s["sequence"]), s.get("type", "permit") == "permit", tuple(match),
                                          tuple(prepend), tuple(other)))
        out.append(RouteMapView(rm["name"], tuple(sorted(clauses, key=lambda c: c.seq))))
    return out


def read_eos_bgp(name: str, cfg: dict[str, Any]) -> BgpView | None:
    """The BGP view of a structured config (None: it has no router_bgp)."""
    bgp = cfg.get("router_bgp")
    if not isinstance(bgp, dict):
        return None
    ports, loopbacks = _ports(cfg)
    local_of = port_owner(ports)
    groups = {g["name"]: g for g in bgp.get("peer_groups", [])}
    default_v4 = (bgp.get("bgp") or {}).get("default", {}).get("ipv4_unicast", True) is not False
    af_group: dict[tuple[Family, str], dict[str, Any]] = {}
    af_peer: dict[tuple[Family, str], dict[str, Any]] = {}
    families = []
    for fam in FAMILIES:
        af = bgp.get(f"address_family_{fam}")
        if not isinstance(af, dict):
            continue
        af_group.update({(fam, g["name"]): g for g in af.get("peer_groups", [])})
        af_peer.update({(fam, n["ip_address"]): n for n in af.get("neighbors", [])})
        red = af.get("redistribute") or {}
        conn = red.get("connected") or {}
        routes = [r for r in af.get("redistribute_routes", []) if r.get("source_protocol") == "connected"]
        connected = bool(conn.get("enabled", bool(conn))) or bool(routes)
        cmap = conn.get("route_map") or (routes[0].get("route_map") if routes else None)
        aggs = tuple((a["prefix"], bool(a.get("summary_only"))) for a in bgp.get("aggregate_addresses", [])
                     if (":" in a["prefix"]) == (fam == "ipv6"))
        families.append(BgpFamily(fam, connected, cmap, tuple(n["prefix"] for n in af.get("networks", [])), aggs,
                                  int((bgp.get("maximum_paths") or {}).get("paths", EOS_MAXIMUM_PATHS))))
    restart_s = _idle_restart(bgp.get("eos_cli"))
    peers = []
    for k, n in enumerate(bgp.get("neighbors", [])):
        address = n["ip_address"]
        g = groups.get(n.get("peer_group", ""), {})

        def get(key: str, n: dict[str, Any] = n, g: dict[str, Any] = g) -> Any:
            return n[key] if key in n else g.get(key)

        fams: list[Family] = []
        maps_in: list[tuple[Family, str]] = []
        maps_out: list[tuple[Family, str]] = []
        for fam in FAMILIES:
            ga, na = af_group.get((fam, n.get("peer_group", "")), {}), af_peer.get((fam, address), {})
            active = na.get("activate", ga.get("activate"))
            if active is None and fam == "ipv4" and default_v4 and ":" not in address:
                active = True
            if active:
                fams.append(fam)
            for key, into in (("route_map_in", maps_in), ("route_map_out", maps_out)):
                if na.get(key) or ga.get(key):
                    into.append((fam, na.get(key) or ga[key]))
        default = get("default_originate") or {}
        port, local = local_of(address)
        remote = get("remote_as")
        peers.append(BgpPeer(
            address=address, remote_as=int(remote) if remote is not None and str(remote).isdigit() else None,
            group=n.get("peer_group", ""), families=tuple(fams), password=password_ref(get("password")),
            passive=bool(get("passive")), shutdown=bool(get("shutdown")),
            route_map_in=tuple(maps_in), route_map_out=tuple(maps_out),
            default_originate=tuple(fams) if default.get("enabled", bool(default)) else (),
            maximum_prefix=int(get("maximum_routes")) if get("maximum_routes") is not None else None,
            maximum_prefix_restart_min=restart_s.get(address, restart_s.get(n.get("peer_group", ""), 0)) // 60,
            timers=_timers(get("timers")), bfd=bool(get("bfd")),
            ttl_security=int(get("ttl_maximum_hops")) if get("ttl_maximum_hops") else None,
            side=_SIDE.get(str((get("metadata") or {}).get("type", ""))), description=str(n.get("description", "")),
            local_port=port, local_address=local, where=f"router_bgp.neighbors[{k}]"))
    return BgpView(
        name=name, file=device_path(name, "structured-config.json"), asn=int(bgp["as"]),
        router_id=bgp.get("router_id"), multipath_relax=RELAX in bgp.get("bgp_defaults", []),
        peers=tuple(sorted(peers, key=lambda p: p.address)), families=tuple(families),
        prefix_lists=tuple(_prefix_lists(cfg)), route_maps=tuple(_route_maps(cfg)), ports=tuple(ports),
        loopbacks=tuple(loopbacks),
        startup_hold_s=next((int(x.removeprefix(CONVERGENCE)) for x in bgp.get("bgp_defaults", [])
                             if x.startswith(CONVERGENCE) and x.removeprefix(CONVERGENCE).isdigit()), 0))
