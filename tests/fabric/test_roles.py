"""The vocabulary of roles and link kinds (`teton.fabric.roles`): the orders that reach output are the ones the
project has always written, and every role and link kind a designed fabric holds is defined there."""

from __future__ import annotations

from teton.fabric import roles
from teton.fabric.roles import (
    deploy_rank,
    link_kinds,
    of_tier,
    rail_kinds,
    report_rank,
    server_link_kinds,
    server_roles,
    switch_roles,
    tier_levels,
    tier_roles,
)


def test_tiers_levels_and_planes():
    assert tier_roles("roce") == ("rtsw", "ctsw", "atsw") and tier_roles("infiniband") == ("leaf", "spine", "core")
    assert tier_roles("frontend") == ("fe-rsw", "fsw", "ssw")
    assert dict(tier_levels("roce")) == {"rtsw": 1, "ctsw": 2, "atsw": 3}
    assert of_tier("rack") == {"rtsw", "fe-rsw", "leaf"} and of_tier("spine") == {"ctsw", "fsw", "spine"}
    assert of_tier("aggregation") == {"atsw", "core", "ssw", "bag"} and server_roles() == {"host", "storage", "service"}
    assert switch_roles() == {"atsw", "ctsw", "rtsw", "ssw", "fsw", "fe-rsw", "leaf", "spine", "core", "bag"}
    assert tier_roles("site") == ("bag",) and dict(tier_levels("site")) == {"bag": 4}   # a site's tier above ATSWs


def test_the_orders_output_depends_on():
    deploy = sorted(switch_roles() | {"host", "mystery"}, key=lambda r: (deploy_rank(r), r))
    assert deploy == ["rtsw", "fe-rsw", "leaf", "ctsw", "fsw", "spine", "atsw", "ssw", "core", "bag", "host",
                      "mystery"]
    report = sorted(switch_roles() | server_roles() | {"mystery"}, key=lambda r: (report_rank(r), r))
    assert report == ["bag", "atsw", "core", "ctsw", "spine", "rtsw", "leaf", "host", "ssw", "fsw", "fe-rsw",
                      "storage", "service", "mystery"]


def test_link_kinds():
    assert link_kinds("roce") == ("host-rtsw", "rtsw-ctsw", "ctsw-atsw") and link_kinds("site") == ("atsw-bag",)
    assert link_kinds("infiniband") == ("host-leaf", "service-leaf", "leaf-spine", "spine-core")
    assert rail_kinds() == ("host-rtsw", "host-leaf")
    assert server_link_kinds("frontend") == ("host-fersw", "storage-fersw", "service-fersw")
    assert link_kinds("frontend") == ("host-fersw", "storage-fersw", "service-fersw", "fersw-fsw", "fsw-ssw")
    for k in roles.LINK_KINDS:
        assert roles.role(k.south) is not None and roles.role(k.north) is not None
        assert roles.role(k.south).level < roles.role(k.north).level   # type: ignore[union-attr]


def test_every_role_and_link_kind_of_a_designed_fabric_is_defined(lab_fabric, lab_ib_fabric):
    for f in (lab_fabric, lab_ib_fabric):
        assert {d.role for d in f.devices.values()} <= set(roles.BY_NAME)
        assert {link.kind for link in f.links} <= {k.name for k in roles.LINK_KINDS}
    assert len(roles.BY_NAME) == len(roles.ROLES) and len({k.name for k in roles.LINK_KINDS}) == len(roles.LINK_KINDS)
