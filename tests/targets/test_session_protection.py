"""Every BGP session of the lab is protected: a password (TCP-MD5) on every tier, the front end's included, and GTSM
(RFC 5082, TTL security) at hops 1, spelled by each NOS and read back; a tier with neither is warned of (rule
`bgp-unprotected`)."""

from __future__ import annotations

import json
from dataclasses import replace

from teton.checks.fabric_rules import unprotected_sessions
from teton.fabric.bgpview import PortAddress
from teton.frr.conf import read_frr_bgp
from teton.frr.policy import routing_of
from teton.targets.eos.bgp import read_eos_bgp
from teton.targets.fboss.bgp import bgp_config
from teton.targets.fboss.readback import _routing as fboss_routing
from teton.targets.frr import render_frr

SONIC = {"z01-r001-rtsw": "bgp_backend", "z01-r001-frsw": "bgp_frontend"}     # a backend and a front-end rack switch
EOS = {"z01-ctsw01": "bgp_backend", "z01-fsw01": "bgp_frontend"}


def test_every_bundled_spec_signs_and_ttl_protects_every_plane():
    from tests.helpers import INVENTORY
    from teton.spec.load import load_spec

    for name in ("lab.yaml", "lab.py", "lab-ib.yaml", "reference-roce-24k.yaml", "reference-ib-24k.yaml"):
        c = load_spec(INVENTORY / name)
        assert c.frontend is not None and c.frontend.password_secret == "bgp_frontend", name
        assert c.frontend.ttl_security_hops == 1, name
        bgp = getattr(c.backend, "bgp", None)
        assert bgp is None or (bgp.password_secret == "bgp_backend" and bgp.ttl_security_hops == 1), name
    # the FBOSS lab: BGP++ signs no session, so its backend runs GTSM alone (the front end is signed as well)
    c = load_spec(INVENTORY / "lab-fboss.yaml")
    bgp = getattr(c.backend, "bgp", None)
    assert bgp is not None and bgp.password_secret is None and bgp.ttl_security_hops == 1
    assert c.frontend is not None and c.frontend.password_secret == "bgp_frontend" and c.frontend.ttl_security_hops == 1


def test_every_frr_peer_group_of_the_lab_is_signed_and_ttl_protected(lab_build):
    for switch, secret in SONIC.items():
        text = (lab_build / "devices" / switch / "frr.conf").read_text()
        groups = [line.split()[1] for line in text.splitlines() if line.endswith(" peer-group")
                  and len(line.split()) == 3]
        assert groups, switch
        for g in groups:
            assert f" neighbor {g} password TETON_SECRET_{secret}\n" in text, (switch, g)
            assert f" neighbor {g} ttl-security hops 1\n" in text, (switch, g)
        assert "ebgp-multihop" not in text      # FRR refuses it beside ttl-security


def test_every_eos_peer_group_of_the_lab_is_signed_and_ttl_protected(lab_build):
    for switch, secret in EOS.items():
        cfg = json.loads((lab_build / "devices" / switch / "structured-config.json").read_text())
        groups = cfg["router_bgp"]["peer_groups"]
        assert groups and all(g["ttl_maximum_hops"] == 1 and g["password"] == f"TETON_SECRET_{secret}"
                              for g in groups), switch
        text = (lab_build / "devices" / switch / "startup-config").read_text()
        for g in groups:
            assert f"   neighbor {g['name']} ttl maximum-hops 1\n" in text, (switch, g["name"])


def test_gtsm_reads_back_from_every_spelling(lab_fabric):
    """FRR, EOS and BGP++ each read their GTSM line back into the routing that spelled it (hops 2, to tell it from a
    default)."""
    for name in ("z01-r001-rtsw", "z01-ctsw01", "z01-fsw01"):
        d = lab_fabric.devices[name]
        r = replace(d.routing, ttl_security_hops=2)
        ports = [PortAddress(i.name, a) for i in d.interfaces for a in (i.ipv4, i.ipv6) if a]
        loopbacks = [x for x in (r.loopback4, r.loopback6) if x]
        frr = read_frr_bgp(name, "frr.conf", render_frr(name, r), ports, loopbacks)
        assert frr is not None and {p.ttl_security for p in frr.peers} == {2}
        assert routing_of(frr).ttl_security_hops == 2
        from teton.targets.eos.structured import _routing as eos_spelling

        eos = read_eos_bgp(name, eos_spelling(r))
        assert eos is not None and routing_of(eos).ttl_security_hops == 2
        cfg = bgp_config(r, {})
        assert {g["ttl_security_hops"] for g in cfg["peer_groups"]} == {2}
        assert fboss_routing(cfg, {}, {}, (), 0).ttl_security_hops == 2


def test_a_tier_without_password_or_gtsm_is_warned_of(lab_fabric):
    assert list(unprotected_sessions(lab_fabric, "lab.yaml")) == []
    bare = {n: replace(d, routing=replace(d.routing, password_secret=None, ttl_security_hops=None))
            if d.routing is not None and d.plane == "frontend" else d for n, d in lab_fabric.devices.items()}
    found = list(unprotected_sessions(replace(lab_fabric, devices=bare), "lab.yaml"))
    assert {(f.path, f.rule, f.severity) for f in found} == {
        ("frontend.rsw", "bgp-unprotected", "warning"), ("frontend.fsw", "bgp-unprotected", "warning"),
        ("frontend.ssw", "bgp-unprotected", "warning")}
    assert "set frontend.password_secret or frontend.ttl_security_hops (1)" in found[0].message
    gtsm_only = {n: replace(d, routing=replace(d.routing, password_secret=None))
                 if d.routing is not None else d for n, d in lab_fabric.devices.items()}
    assert list(unprotected_sessions(replace(lab_fabric, devices=gtsm_only), "lab.yaml")) == []
