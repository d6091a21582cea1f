"""teton.frr: the route-policy layout is one definition that both spellings carry, and frr.conf parses back."""

from __future__ import annotations

from dataclasses import replace

from teton.fabric.bgpview import PortAddress
from teton.frr.conf import read_frr_bgp
from teton.frr.policy import import_policy, route_policy, routing_of, routing_view
from teton.targets.eos.bgp import read_eos_bgp
from teton.targets.eos.structured import _routing as eos_spelling
from teton.targets.frr import render_frr


def _rack_switch(fabric):
    return next(d for d in fabric.devices.values() if d.role == "rtsw" and d.routing is not None)


def test_both_spellings_carry_every_policy_name_and_sequence(lab_fabric):
    d = _rack_switch(lab_fabric)
    text = render_frr(d.name, d.routing)
    eos = eos_spelling(d.routing)
    eos_lists = {pl["name"]: pl for pl in eos.get("prefix_lists", []) + eos.get("ipv6_prefix_lists", [])}
    eos_maps = {rm["name"]: rm for rm in eos["route_maps"]}
    for p in route_policy(d.routing):
        for pl in (p.local, p.originate):
            assert [s["sequence"] for s in eos_lists[pl.name]["sequence_numbers"]] == [e.seq for e in pl.entries]
            for e in pl.entries:
                assert f"{pl.name} seq {e.seq} permit {e.prefix}" in text
        for rm in (p.connected, p.export):
            assert f"route-map {rm.name} permit {rm.seq}" in text
            assert eos_maps[rm.name]["sequence_numbers"][0]["sequence"] == rm.seq
    inbound = [i for p in route_policy(d.routing) for i in import_policy(d.routing, p.family)]
    assert inbound
    for i in inbound:
        assert [s["sequence"] for s in eos_lists[i.prefix_list.name]["sequence_numbers"]] == \
            [e.seq for e in i.prefix_list.entries]
        assert f"route-map {i.route_map.name} permit {i.route_map.seq}" in text
        assert eos_maps[i.route_map.name]["sequence_numbers"][0]["sequence"] == i.route_map.seq
        for who in i.targets:
            assert f"  neighbor {who} route-map {i.route_map.name} in" in text


def test_eos_read_back_finds_transit_by_the_applied_route_map_not_its_name(lab_fabric):
    d = _rack_switch(lab_fabric)
    for transit in (False, True):
        cfg = eos_spelling(replace(d.routing, transit=transit))
        for rm in cfg["route_maps"]:        # renamed: read-back must follow route_map_out, not the EXPORT_ prefix
            rm["name"] = "X" + rm["name"]
        for fam in ("ipv4", "ipv6"):
            for g in cfg["router_bgp"].get(f"address_family_{fam}", {}).get("peer_groups", []):
                g["route_map_out"] = "X" + g["route_map_out"]
        bgp = read_eos_bgp(d.name, cfg)
        assert bgp is not None and routing_of(bgp).transit is transit


def test_frr_conf_parses_back_to_its_router_bgp(lab_fabric):
    d = _rack_switch(lab_fabric)
    bgp = read_frr_bgp(d.name, "frr.conf", render_frr(d.name, d.routing), [], [])
    assert bgp is not None and (bgp.asn, bgp.router_id) == (d.routing.asn, d.routing.router_id)
    want = sorted((n.address, n.remote_as) for n in d.routing.neighbors)
    assert [(n.address, n.remote_as) for n in bgp.peers] == want


def test_every_spelling_reads_back_into_the_routing_it_spells(lab_fabric):
    """One view, one inverse: the FRR and EOS spellings read back by their NOS's one BGP reader, and the view of the
    intent itself, give the intent again through `routing_of`, for every routed switch of the lab (EOS has no per-peer
    connect-retry timer; a drained switch and one that sends a default route included)."""
    routed = [d for d in lab_fabric.devices.values() if d.routing is not None]
    assert len(routed) > 20
    for d in routed:
        r = replace(d.routing, drain_prepend=2) if d.role == "ctsw" else d.routing
        ports = [PortAddress(i.name, a) for i in d.interfaces for a in (i.ipv4, i.ipv6) if a]
        loopbacks = [x for x in (r.loopback4, r.loopback6) if x]
        frr = read_frr_bgp(d.name, "frr.conf", render_frr(d.name, r), ports, loopbacks)
        assert frr is not None and routing_of(frr) == r, d.name
        assert routing_of(routing_view(d.name, "fabric.json", r, ports, loopbacks)) == r, d.name
        cfg = eos_spelling(r)
        cfg["ethernet_interfaces"] = [{"name": i.name, "ip_address": i.ipv4, "ipv6_addresses": [i.ipv6] if i.ipv6
                                       else []} for i in d.interfaces if i.ipv4 or i.ipv6]
        eos = read_eos_bgp(d.name, cfg)
        no_retry = replace(r, timers=replace(r.timers, connect_retry=None))
        assert eos is not None and replace(routing_of(eos), loopback4=r.loopback4, loopback6=r.loopback6) == no_retry
