"""A site: clusters in one building or region joined by a backend aggregation tier (BAG), and the site's plan.

Meta joins its training clusters with a backend aggregation layer above the clusters' aggregation switches: eBGP,
an oversubscription into it of about 4.5:1 (docs/sources.md section 15).  A site spec names its clusters (each a
cluster spec of today, by file, optionally with values changed for this site: `overrides`), the tier that joins them,
the address and ASN plan every cluster's pools must sit inside, and its room: how many clusters the tier is laid out
for, so a cluster added within it changes only the tier's attachment lines.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from teton import limits
from teton.spec.base import SpecModel, limit_text
from teton.spec.grammar import TEXT_PATTERN, Asn, Name, Network
from teton.spec.management import Management
from teton.spec.model import Addressing, Nos

CLUSTER_NAME = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"   # no "--": it joins cluster and device names in the site
SPEC_FILE = r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}){0,7}$"


class SiteCluster(SpecModel):
    """One cluster of the site: a cluster spec file (relative to the site spec's folder, inside it), with values
    changed for this site."""

    name: str = Field(pattern=CLUSTER_NAME, max_length=31, description="the cluster's name in the site (its build "
                      "folder); the spec's `name` is set to it")
    spec: str = Field(pattern=SPEC_FILE, description="the cluster spec file (.yaml, .yml, .json or .py), relative to "
                      "the site spec's folder and inside it")
    overrides: dict[str, Any] = Field(
        default_factory=dict, description="values merged into the cluster spec's own before it is checked: a mapping "
        "replaces keys recursively, any other value replaces the spec's (a second copy of a cluster with its own "
        "pools, ASNs and management network)")


class BagTier(SpecModel):
    """The backend aggregation tier: switches above every cluster's aggregation switches (ATSW)."""

    model: Name = Field(description="switch model: a catalogue key (or one of the site's switch_models)")
    nos: Nos
    count: int = Field(ge=1, le=limits.MAX_BAG, description=f"aggregation switches, {limit_text('MAX_BAG')}")
    planes: int = Field(default=1, ge=1, le=64, description="the BAG switches are split into this many planes; ATSW "
                        "k of every cluster attaches to the switches of plane k mod planes")
    uplinks_per_atsw: int = Field(default=1, ge=1, le=limits.MAX_PARALLEL_LINKS,
                                  description="parallel links from each ATSW to each BAG switch of its plane, "
                                              f"{limit_text('MAX_PARALLEL_LINKS')}")
    uplink_speed_gbps: int = Field(default=400, ge=1)
    oversubscription: float = Field(default=4.5, gt=0, description="goal: an ATSW's downlink:uplink capacity ratio "
                                    "into the tier (Meta: about 4.5:1, docs/sources.md section 15); a rule checks it")
    medium: str = Field(default="smf", pattern=r"^(smf|mmf|aoc)$", description="the attachment cables' medium")
    asn: Asn = Field(default=4200000000, description="one ASN shared by every BAG switch (4-byte private range)")
    addressing: Addressing = Field(description="the tier's loopbacks and its links' /31 and /127 (fabric_links)")


class SitePlan(SpecModel):
    """The site's address and ASN plan: every cluster's backend and front-end pools sit inside `backend` and
    `frontend`, its management network inside `management`; no two clusters share an address or an ASN."""

    backend: list[Network] = Field(min_length=1, max_length=64, description="the backend planes' blocks (IPv4 and "
                                   "IPv6): every backend switch accepts any prefix inside them from its peers")
    frontend: list[Network] = Field(default_factory=list, max_length=64)
    management: list[Network] = Field(default_factory=list, max_length=64)
    asn_first: Asn = Field(default=4200000000)
    asn_last: Asn = Field(default=4294967294)


class SiteRoom(SpecModel):
    clusters: int = Field(ge=1, le=limits.MAX_SITE_CLUSTERS, description="clusters the tier is laid out for (the "
                          f"ones named and those to come), {limit_text('MAX_SITE_CLUSTERS')}")
    atsw_per_cluster: int = Field(ge=1, le=limits.MAX_ATSW, description="the most ATSWs a cluster attaches: each "
                                  "cluster's place on the BAG switches holds this many")


class Site(SpecModel):
    """A site of clusters: the root of a site spec."""

    site: str = Field(pattern=CLUSTER_NAME, max_length=31, description="the site's name; names the tier's build folder")
    location: Annotated[str, Field(pattern=TEXT_PATTERN, max_length=64)] = Field(
        default="", description="building or region")
    clusters: list[SiteCluster] = Field(min_length=1, max_length=limits.MAX_SITE_CLUSTERS)
    bag: BagTier
    plan: SitePlan
    room: SiteRoom
    management: Management = Field(default_factory=Management, description="the tier's management plane")
