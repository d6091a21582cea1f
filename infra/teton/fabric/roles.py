"""The vocabulary of a fabric's devices and links: every role and every link kind, defined once.

A role is what a device is (`rtsw`, `leaf`, `host` ...): the network it belongs to, its tier (rack switch, spine,
aggregation, or a server), its level from the servers up, and where it goes in a deploy's waves and in a diff's
report.  A link kind is what a cable joins (`host-rtsw` ...), with the network it belongs to and whether it is a
rail (a GPU's backend link).  Every module that needs "the RoCE tiers", "the rack switches" or "the rails" asks the
queries below instead of spelling a tuple; adding a role or a link kind is one entry in `ROLES` or `LINK_KINDS`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Literal

# the first two: `Fabric.backend`; "site": a site's aggregation tier above its clusters (teton.design.site)
Network = Literal["roce", "infiniband", "frontend", "hosts", "storage", "services", "site"]
Tier = Literal["server", "rack", "spine", "aggregation"]
"""rack: one rack's switch; spine: every one of a zone at once takes the zone's uplinks away; aggregation: every one
at once takes the zones' connection away."""

UNRANKED = 1 << 16   # the rank of a role this module does not know: after every known one


@dataclass(frozen=True)
class Role:
    name: str                  # as `Device.role` spells it
    network: Network
    tier: Tier
    level: int                 # 0 for servers, 1 for rack switches, then one per tier up
    deploy: int | None         # a deploy's waves go tier by tier in this order (None: not pushed as a switch)
    report: int                # a diff report lists changed devices in this order
    peer_group: str | None = None   # the BGP peer groups towards it are named after this (RTSW_V4 ...)

    @property
    def switch(self) -> bool:
        return self.tier != "server"

    @property
    def rack_level(self) -> bool:
        return self.tier == "rack"


ROLES: tuple[Role, ...] = (
    Role("rtsw", "roce", "rack", 1, deploy=0, report=4, peer_group="RTSW"),
    Role("ctsw", "roce", "spine", 2, deploy=3, report=2, peer_group="CTSW"),
    Role("atsw", "roce", "aggregation", 3, deploy=6, report=0, peer_group="ATSW"),
    # a site's backend aggregation tier above the clusters' ATSWs (teton.design.site): in a cluster's build an external
    Role("bag", "site", "aggregation", 4, deploy=9, report=-1, peer_group="BAG"),
    Role("leaf", "infiniband", "rack", 1, deploy=2, report=5),
    Role("spine", "infiniband", "spine", 2, deploy=5, report=3),
    Role("core", "infiniband", "aggregation", 3, deploy=8, report=1),
    Role("fe-rsw", "frontend", "rack", 1, deploy=1, report=9, peer_group="RSW"),
    Role("fsw", "frontend", "spine", 2, deploy=4, report=8, peer_group="FSW"),
    Role("ssw", "frontend", "aggregation", 3, deploy=7, report=7, peer_group="SSW"),   # joins the zones' FSWs
    Role("host", "hosts", "server", 0, deploy=None, report=6),
    Role("storage", "storage", "server", 0, deploy=None, report=10),
    Role("service", "services", "server", 0, deploy=None, report=11),   # the Slurm controller, a subnet manager
)
BY_NAME = {r.name: r for r in ROLES}


@dataclass(frozen=True)
class LinkKind:
    name: str                  # as `Link.kind` and `Interface.kind` spell it: "<south role>-<north role>"
    network: Network           # the network the link is part of (a host's front-end link: "frontend")
    south: str                 # the role of its lower end (a server, or the switch nearer the racks)
    north: str                 # the role of its upper end
    rail: bool = False         # a GPU's backend link: its injection bandwidth, one rail of the host


LINK_KINDS: tuple[LinkKind, ...] = (
    LinkKind("host-rtsw", "roce", "host", "rtsw", rail=True),
    LinkKind("rtsw-ctsw", "roce", "rtsw", "ctsw"),
    LinkKind("ctsw-atsw", "roce", "ctsw", "atsw"),
    LinkKind("atsw-bag", "site", "atsw", "bag"),
    LinkKind("host-leaf", "infiniband", "host", "leaf", rail=True),
    LinkKind("service-leaf", "infiniband", "service", "leaf"),   # a subnet manager's HCA, on a free leaf port
    LinkKind("leaf-spine", "infiniband", "leaf", "spine"),
    LinkKind("spine-core", "infiniband", "spine", "core"),
    LinkKind("host-fersw", "frontend", "host", "fe-rsw"),
    LinkKind("storage-fersw", "frontend", "storage", "fe-rsw"),
    LinkKind("service-fersw", "frontend", "service", "fe-rsw"),
    LinkKind("fersw-fsw", "frontend", "fe-rsw", "fsw"),
    LinkKind("fsw-ssw", "frontend", "fsw", "ssw"),
)


def role(name: str) -> Role | None:
    """The role named `name`, None for one this module does not know."""
    return BY_NAME.get(name)


@cache
def tier_roles(network: str) -> tuple[str, ...]:
    """The switch roles of `network` ("roce", "infiniband", "frontend"), from the racks up."""
    return tuple(r.name for r in sorted(ROLES, key=lambda r: r.level) if r.network == network and r.switch)


@cache
def tier_levels(network: str) -> Mapping[str, int]:
    """{switch role: level} of `network`'s switch roles."""
    return MappingProxyType({r.name: r.level for r in ROLES if r.network == network and r.switch})


@cache
def switch_roles() -> frozenset[str]:
    """Every switch role, of every network."""
    return frozenset(r.name for r in ROLES if r.switch)


@cache
def server_roles() -> frozenset[str]:
    """The roles of servers (GPU hosts, storage servers and service hosts): no switch, no NOS."""
    return frozenset(r.name for r in ROLES if not r.switch)


@cache
def of_tier(tier: Tier) -> frozenset[str]:
    """The switch roles of one tier, of every network: `of_tier("rack")` are the rack switches."""
    return frozenset(r.name for r in ROLES if r.tier == tier)


def deploy_rank(name: str) -> int:
    """Where a role's wave goes in a deploy (from the racks up); an unknown role ranks last."""
    r = BY_NAME.get(name)
    return r.deploy if r is not None and r.deploy is not None else UNRANKED


def report_rank(name: str) -> int:
    """Where a role's devices go in a diff report; an unknown role ranks last."""
    r = BY_NAME.get(name)
    return r.report if r is not None else UNRANKED


@cache
def link_kinds(network: str) -> tuple[str, ...]:
    """The link kinds of `network`, from the servers up."""
    return tuple(k.name for k in LINK_KINDS if k.network == network)


@cache
def server_link_kinds(network: str) -> tuple[str, ...]:
    """The link kinds of `network` whose lower end is a server (a GPU host's or a storage server's NIC)."""
    return tuple(k.name for k in LINK_KINDS if k.network == network and k.south in server_roles())


@cache
def rail_kinds() -> tuple[str, ...]:
    """The link kinds that are a GPU's backend link (one rail), of every backend."""
    return tuple(k.name for k in LINK_KINDS if k.rail)
