"""What a review needs to know of one device, beside its files: its BGP sessions, its addresses, its links, and which
of its record's fields changed.  Derived from the device's record alone (so from its slice), they are cached with
the rendered files under the slice digest, and a side replayed from the cache needs no Fabric.

    {"asn": 4201001001,
     "sessions": ["10.1.0.0 10.1.0.1 4200000101", ...],      local address, peer address, peer ASN
     "addresses": {"loopback4": "10.0.0.30/32", "mgmt": "...", "Ethernet0": "10.64.0.0/31 fd00:1::/127", ...},
     "links": {"Ethernet0": "down z01-r001-h1:be0 400G mtu 9100", ...},
     "routing": {"maximum_prefixes": "7000", "groups": ["ATSW_V4 ipv4 up active", ...], ...},
                                          every field of its routing but the neighbours (the sessions above), as text
     "fields": {"routing": "<digest>", "qos": "<digest>", ...}}   every field of the record, by digest

The routing's own fields tell a neighbour list that only grows (an expansion: `teton.diff.classify`) from a policy
that changes (maximum-prefix 7000 -> 8000).
"""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from teton.fabric.intent import Routing
from teton.fabric.model import Device, Fabric
from teton.fabric.slice import DigestMemo, field_values
from teton.pipeline.cache import RenderCache

_ADDRESS_FIELDS = ("loopback4", "loopback6", "router_id", "mgmt")
_LISTS = ("prefixes4", "prefixes6")
_NOT_FIELDS = frozenset({"name"})


def _short(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()[:16]


def routing_facts(r: Routing | None) -> dict[str, Any]:
    """The routing's fields but its neighbours, as text: its peer groups and its import policies (what each accepts,
    not from whom) as sorted lists, the rest one string each."""
    if r is None:
        return {}
    out: dict[str, Any] = {}
    for f in dataclasses.fields(r):
        value = getattr(r, f.name)
        if f.name == "neighbors":
            continue
        if f.name == "groups":
            out[f.name] = sorted(f"{g.name} {g.family} {g.direction} {'passive' if g.passive else 'active'}"
                                 for g in value)
        elif f.name == "imports":          # what each import policy accepts; whom it applies to is the sessions
            out[f.name] = sorted(f"{i.name} {i.family} " + " ".join(
                a.prefix + (f" ge {a.ge}" if a.ge is not None else "") + (f" le {a.le}" if a.le is not None else "")
                for a in i.accept) for i in value)
        elif isinstance(value, tuple) and all(isinstance(x, str) for x in value):
            out[f.name] = " ".join(value)
        else:
            out[f.name] = str(value)
    return out


def device_facts(d: Device, memo: DigestMemo | None = None) -> dict[str, Any]:
    addresses: dict[str, str] = {f: str(getattr(d, f)) for f in _ADDRESS_FIELDS if getattr(d, f) is not None}
    for f in _LISTS:
        if getattr(d, f):
            addresses[f] = " ".join(getattr(d, f))
    links: dict[str, str] = {}
    for i in d.interfaces:
        a = " ".join(x for x in (i.ipv4, i.ipv6) if x)
        if a:
            addresses[i.name] = a
        links[i.name] = f"{i.direction} {i.peer}:{i.peer_port} {i.speed_gbps}G mtu {i.mtu}"
    sessions = sorted(f"{n.local_address} {n.address} {n.remote_as}" for n in d.routing.neighbors) if d.routing else []
    return {"asn": d.asn, "sessions": sessions, "addresses": addresses, "links": links,
            "routing": routing_facts(d.routing),
            "fields": {name: _short(value) for name, value in field_values(d, memo or DigestMemo())
                       if name not in _NOT_FIELDS}}


def facts_of(names: list[str], digests: dict[str, str], fabric: Fabric | None,
             cache: RenderCache | None) -> dict[str, dict[str, Any]] | None:
    """Facts of `names`: from the fabric when there is one (and remembered in the cache), else from the cache by
    digest; None when the cache lacks one (the caller designs that side)."""
    out: dict[str, dict[str, Any]] = {}
    memo = DigestMemo()
    for n in names:
        key = cache.key("facts", digests[n]) if cache is not None else ""
        if fabric is not None:
            out[n] = device_facts(fabric.devices[n], memo)
            if cache is not None:
                cache.write_json("facts", key, out[n])
            continue
        found = cache.read_json("facts", key) if cache is not None else None
        if not isinstance(found, dict):
            return None
        out[n] = found
    return out


def session_key(entry: str) -> tuple[str, str]:
    """A session seen from either end: (lower address, higher address)."""
    local, peer, _ = entry.split(" ", 2)
    return (local, peer) if local <= peer else (peer, local)
