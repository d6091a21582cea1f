"""End to end: the lab with FBOSS rack switches (RTSWs on Minipack2, front-end RSWs on Wedge400) as a twin.  FBOSS
cannot run here: each FBOSS switch runs the FRR spelling of the routing read back from its bgpcpp.conf and agent.conf,
as an EOS switch does, and the twin's report says which switches do."""

from __future__ import annotations

import pytest
import yaml

from tests.helpers import LAB, fboss, write_spec

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def spec(tmp_path_factory):
    return write_spec(tmp_path_factory.mktemp("spec"), fboss(yaml.safe_load(LAB.read_text())), "lab.yaml")


@pytest.fixture(scope="module")
def twin(spec):
    from teton.twin import service

    service.down(str(spec))
    report = service.up(str(spec))
    try:
        yield report
    finally:
        service.down("lab")


def test_the_fboss_lab_comes_up_and_verifies(twin, spec):
    from teton.twin import service

    assert (twin.switches, twin.hosts, twin.links) == (29, 15, 140)
    assert twin.sessions == 168 and twin.ecmp_mismatches == ()
    fboss_switches = {"z01-r001-rtsw", "z02-r002-rtsw", "z01-r001-frsw", "svc-r01-frsw"}
    assert fboss_switches <= set(twin.eos_as_frr)          # the report lists every switch run as its FRR spelling
    assert "ssw01-01" not in twin.eos_as_frr               # a SONiC spine runs its own frr.conf
    r = service.verify(str(spec))
    assert r.ok, r
    assert r.bgp.established == r.bgp.expected_sessions == 168
    assert r.same_rail_ping.pinged == r.same_rail_ping.of == 28 * 8 * 2
    assert r.frontend_ping is not None and r.frontend_ping.failed == ()
    assert r.ecmp.mismatched == ()
