"""What each session accepts (`teton.design.routing.imports`, issue 34): every neighbour of every routed switch is in
exactly one import policy; from a rack switch exactly what it originates; from any other switch the plane's pools; a
default route only on an uplink group of the front end, whose spines originate one."""

from __future__ import annotations

import pytest

from teton.design.routing import DEFAULT_ROUTE
from teton.fabric.roles import of_tier
from teton.verify.expected import design_originations


def test_every_session_accepts_only_what_the_design_lets_its_neighbour_send(lab_fabric):
    originates = design_originations(lab_fabric)
    racks = of_tier("rack")
    for d in lab_fabric.devices.values():
        r = d.routing
        if r is None:
            continue
        covered = [(a, i.family) for i in r.imports for a in i.neighbors]
        assert sorted(covered) == sorted((n.address, n.family) for n in r.neighbors), d.name
        policy = {(a, i.family): i for i in r.imports for a in i.neighbors}
        side = {g.name: g.direction for g in r.groups}
        for n in r.neighbors:
            peer = lab_fabric.devices[n.peer.split(":", 1)[0]]
            accept = policy[(n.address, n.family)].accept
            if peer.role in racks:
                assert {a.prefix for a in accept} == {p for p in originates[peer.name]
                                                      if (":" in p) == (n.family == "ipv6")}, (d.name, peer.name)
                assert all(a.le is None and a.ge is None for a in accept)
            else:
                default = any(a.prefix == DEFAULT_ROUTE[n.family] for a in accept)
                assert default == (d.plane == "frontend" and side[n.group] == "up"), (d.name, n.group)
                assert all(a.le is not None for a in accept if a.prefix != DEFAULT_ROUTE[n.family])


@pytest.mark.parametrize("spec", [
    "lab-ib.yaml", "lab-fboss.yaml",
    pytest.param("reference-roce-24k.yaml", marks=pytest.mark.scale24k),
    pytest.param("reference-ib-24k.yaml", marks=pytest.mark.scale24k)])
def test_every_session_of_every_bundled_spec_has_an_inbound_policy(spec):
    """The labs, the FBOSS lab and the 24k references: every neighbour of every routed switch (each FRR neighbour or
    peer group, EOS peer group, BGP++ peer spells one) is in exactly one import policy, and a rack switch's peers accept
    from it exactly what it originates."""
    from tests.helpers import INVENTORY
    from teton.design import design
    from teton.spec.load import load_spec

    fabric = design(load_spec(INVENTORY / spec), INVENTORY)
    originates = design_originations(fabric)
    racks = of_tier("rack")
    routed = [d for d in fabric.devices.values() if d.routing is not None]
    assert routed
    for d in routed:
        r = d.routing
        assert r is not None
        covered = sorted((a, i.family) for i in r.imports for a in i.neighbors)
        assert covered == sorted((n.address, n.family) for n in r.neighbors), d.name
        policy = {(a, i.family): i for i in r.imports for a in i.neighbors}
        for n in r.neighbors:
            peer = fabric.devices[n.peer.split(":", 1)[0]]
            if peer.role in racks:
                assert {a.prefix for a in policy[(n.address, n.family)].accept} == {
                    p for p in originates[peer.name] if (":" in p) == (n.family == "ipv6")}, (d.name, peer.name)
