"""The addresses of a build's externals: devices of another build of the site (a site's aggregation tier in a
cluster's build, the clusters' ATSWs in the tier's) cabled to this build's switches (`Fabric.externals`).

A BGP neighbour on one of these is a session to another build of the site: a single build's checks
(`teton validate --rendered`, `teton verify BUILD`) count it and leave it out; `teton verify` of the site proves it
from both builds' files.
"""

from __future__ import annotations

from typing import NamedTuple

from teton.fabric.model import Fabric


class ExternalPort(NamedTuple):
    device: str
    port: str
    address: str               # with its prefix length
    asn: int | None


def external_addresses(fabric: Fabric | None) -> dict[str, ExternalPort]:
    """{address without its length: the external's port holding it} over every external's interfaces."""
    out: dict[str, ExternalPort] = {}
    if fabric is None:
        return out
    for name, d in sorted(fabric.externals.items()):
        for i in d.interfaces:
            for a in (i.ipv4, i.ipv6):
                if a:
                    out.setdefault(a.split("/", 1)[0], ExternalPort(name, i.name, a, d.asn))
    return out


def site_sessions_line(count: int) -> str:
    """How a single build's report says what it left to the site's verify."""
    return (f"{count:,} session{'s' if count != 1 else ''} to the site's other builds, proven by `teton verify` of "
            "the site")
