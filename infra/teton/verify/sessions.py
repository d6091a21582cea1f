"""The BGP sessions of a build, from both ends: a session is up only if both switches' files agree.

For every neighbour a switch configures: the address must be another switch's interface address on a subnet of one
of this switch's ports (a single-hop eBGP session), and that switch must configure this one back by its address on
the link; each end's remote ASN must be the other's local ASN; the address's family must be activated at both ends;
the passwords must both be unset or both reference the same secret; not both ends passive; neither neighbour shut
down, neither port down.  Each disagreement is a finding (rule `bgp-session`) that names both ends; every session up
is one `Session` per family, later two directed edges of the session graph.

A neighbour whose address is on a port of one of the build's externals (`Fabric.externals`: a device of another build
of the site) is a session to that build: it is checked against the external's ASN and one hop away, then counted
(`Outside`) and left out of the model; `teton verify` of the site proves it from both builds' files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from teton.fabric.bgpview import BgpPeer, BgpView
from teton.fabric.externals import ExternalPort
from teton.fabric.intent import Family
from teton.findings import Finding


@dataclass(frozen=True)
class Session:
    """An agreed session: switch `a` (its entry `pa` for b) and switch `b` (its entry `pb` for a), in `family`."""

    family: Family
    a: int
    b: int
    pa: BgpPeer
    pb: BgpPeer


@dataclass(frozen=True)
class Outside:
    """A session of switch `switch` (its entry `peer`) to a device of another build of the site."""

    family: Family
    switch: int
    peer: BgpPeer
    external: ExternalPort


def _family(address: str) -> Family:
    return "ipv6" if ":" in address else "ipv4"


def match_sessions(views: Sequence[BgpView], externals: Mapping[str, ExternalPort] | None = None,
                   ) -> tuple[list[Session], list[Finding], list[Outside]]:
    """The sessions both ends agree on (by family, in a fixed order), a finding for every one they do not, and the
    sessions to the externals at `externals`' addresses (another build's devices), which this build cannot prove."""
    owner: dict[str, tuple[int, str, bool]] = {}          # interface address -> (switch, port, up)
    for i, v in enumerate(views):
        for port in v.ports:
            owner.setdefault(port.address.split("/", 1)[0], (i, port.port, port.up))
    entries: dict[tuple[int, str], BgpPeer] = {(i, p.address): p for i, v in enumerate(views) for p in v.peers}
    sessions: list[Session] = []
    findings: list[Finding] = []
    outside: list[Outside] = []
    seen: set[tuple[int, str]] = set()
    for i, v in enumerate(views):
        for p in v.peers:
            if (i, p.address) in seen:
                continue
            ext = externals.get(p.address) if externals and p.address not in owner else None
            if ext is not None:
                problem = _outside(v, p, ext)
                if problem is None:
                    outside.append(Outside(_family(p.address), i, p, ext))
                else:
                    findings.append(Finding(v.file, p.where, f"{v.name}: the session with neighbour {p.address} "
                                            f"({ext.device} {ext.port}, of another build of the site) cannot come "
                                            f"up: {problem}", rule="bgp-session"))
                continue
            problem, other = _check(views, owner, entries, i, p)
            if other is not None:
                seen.add(other)
            if problem is None:
                j, q = other[0], entries[other]  # type: ignore[index]
                a, b, pa, pb = (i, j, p, q) if v.name < views[j].name else (j, i, q, p)
                sessions.append(Session(_family(p.address), a, b, pa, pb))
            else:
                findings.append(Finding(v.file, p.where, f"{v.name}: the session with neighbour {p.address} cannot "
                                        f"come up: {problem}", rule="bgp-session"))
    sessions.sort(key=lambda s: (s.family, s.a, s.b, s.pa.address))
    outside.sort(key=lambda o: (o.family, o.switch, o.peer.address))
    _DOWN.clear()
    return sessions, findings, outside


def _outside(v: BgpView, p: BgpPeer, ext: ExternalPort) -> str | None:
    """Why switch v's neighbour p, an external's address, cannot be a session (None: what this build can tell holds)."""
    if p.remote_as != ext.asn:
        return f"{v.name} expects AS {p.remote_as} but {ext.device} runs AS {ext.asn}"
    if not p.local_port:
        return f"no port of {v.name} is on the subnet of {p.address}: not one hop away"
    if _family(p.address) not in p.families:
        return f"{v.name} does not activate {p.address} in {_family(p.address)} unicast"
    if p.shutdown:
        return f"{v.name} shuts down its neighbour {p.address}"
    if p.local_port in _down_ports(v):
        return f"{v.name}'s port {p.local_port} is shut down"
    return None


def _check(views: Sequence[BgpView], owner: dict[str, tuple[int, str, bool]],
           entries: dict[tuple[int, str], BgpPeer], i: int, p: BgpPeer) -> tuple[str | None, tuple[int, str] | None]:
    """Why the session of switch i's neighbour entry p is not up (None: it is), and the other end's entry key."""
    v = views[i]
    got = owner.get(p.address)
    if got is None:
        return f"no switch of the build has the address {p.address} on a port", None
    j, port, up = got
    t = views[j]
    if j == i:
        return f"{p.address} is {v.name}'s own address ({port})", None
    if not p.local_port:
        return f"no port of {v.name} is on the subnet of {p.address} ({t.name} {port}): not one hop away", None
    other = (j, p.local_address)
    q = entries.get(other)
    if q is None:
        return (f"{t.name} configures no neighbour {p.local_address} ({v.name}'s address on {p.local_port}); "
                f"{t.name}'s neighbours on {port}: {_on_port(t, port) or 'none'}"), None
    return _agree(v, p, t, q, up, port), other


_DOWN: dict[int, tuple[BgpView, frozenset[str]]] = {}


def _down_ports(v: BgpView) -> frozenset[str]:
    """The ports of `v` that are shut down (remembered per view while it lives)."""
    got = _DOWN.get(id(v))
    if got is None or got[0] is not v:
        got = _DOWN[id(v)] = (v, frozenset(a.port for a in v.ports if not a.up))
    return got[1]


def _on_port(t: BgpView, port: str) -> str:
    return ", ".join(q.address for q in t.peers if q.local_port == port)


def _agree(v: BgpView, p: BgpPeer, t: BgpView, q: BgpPeer, up: bool, port: str) -> str | None:
    fam = _family(p.address)
    if p.remote_as != t.asn:
        return f"{v.name} expects AS {p.remote_as} but {t.name} runs AS {t.asn}"
    if q.remote_as != v.asn:
        return f"{t.name} ({q.where}) expects AS {q.remote_as} but {v.name} runs AS {v.asn}"
    for who, entry in ((v.name, p), (t.name, q)):
        if fam not in entry.families:
            return f"{who} does not activate {entry.address} in {fam} unicast"
    if p.password != q.password:
        def say(x: str | None) -> str:
            return "no password" if x is None else ("a plaintext password" if x.startswith("plaintext:")
                                                    else f"the password of secret {x}")
        return f"{v.name} has {say(p.password)}, {t.name} has {say(q.password)}"
    if p.passive and q.passive:
        return "both ends are passive: neither opens the session"
    for who, entry in ((v.name, p), (t.name, q)):
        if entry.shutdown:
            return f"{who} shuts down its neighbour {entry.address}"
    if p.local_port in _down_ports(v):
        return f"{v.name}'s port {p.local_port} is shut down"
    if not up:
        return f"{t.name}'s port {port} is shut down"
    return None
