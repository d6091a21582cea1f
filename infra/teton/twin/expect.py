"""What the design promises the routed fabric does, under any failures: sessions, ECMP widths, same-rail reach.

All of it is computed from the Fabric of the build the twin runs (its fabric.json), never from the spec.

eBGP with RFC 7938 ASNs routes valley-free (up some tiers, then down) on shortest AS paths, and with multipath every
equal shortest path is used.  So the expected next hops of switch x towards rack switch t are the links to alive
neighbours on a shortest valley-free path, computed here on the Fabric with failed devices and links removed.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from functools import cache

from teton.fabric.model import Fabric

TIER = {"rtsw": 1, "ctsw": 2, "atsw": 3}
INF = 1 << 30


class EcmpModel:
    def __init__(self, fabric: Fabric, failed_devices: set[str] = frozenset(), failed_links: set[frozenset[str]] = ()):
        """failed_links: {frozenset({"dev:port", "peer:port"})}."""
        self.fabric = fabric
        self.alive = {n for n, d in fabric.devices.items() if d.role in TIER and n not in failed_devices}
        self.adj: dict[str, list[str]] = {n: [] for n in self.alive}   # one entry per up link (parallel links repeat)
        failed = set(failed_links)
        for n in self.alive:
            for i in fabric.devices[n].interfaces:
                if i.peer in self.alive and frozenset({f"{n}:{i.name}", f"{i.peer}:{i.peer_port}"}) not in failed:
                    self.adj[n].append(i.peer)
        self._down = cache(self._down_dist)
        self._any = cache(self._any_dist)

    def _tier(self, n: str) -> int:
        return TIER[self.fabric.devices[n].role]

    def _asn(self, n: str) -> int | None:
        return self.fabric.devices[n].asn

    def _down_dist(self, x: str, t: str, ban: frozenset[int | None]) -> int:
        """Shortest path from x down to t avoiding ASNs in `ban` (BGP drops a path that holds the receiver's ASN)."""
        if x == t:
            return 0
        best = INF
        for n in self.adj[x]:
            if self._tier(n) < self._tier(x) and self._asn(n) not in ban:
                best = min(best, 1 + self._down(n, t, ban | {self._asn(n)}))
        return best

    def _any_dist(self, x: str, t: str, ban: frozenset[int | None]) -> int:
        """Shortest valley-free path from x to t (up some tiers, then down) avoiding ASNs in `ban`."""
        best = self._down(x, t, ban)
        for n in self.adj[x]:
            if self._tier(n) > self._tier(x) and self._asn(n) not in ban:
                best = min(best, 1 + self._any(n, t, ban | {self._asn(n)}))
        return best

    def next_hops(self, x: str, t: str) -> int:
        """Number of equal-cost next-hop links from switch x towards the prefixes of rack switch t (0: unreachable)."""
        if x not in self.alive or t not in self.alive or x == t:
            return 0
        ban = frozenset({self._asn(x)})
        d = self._any(x, t, ban)
        if d >= INF:
            return 0
        count = 0
        for n in self.adj[x]:
            if self._asn(n) in ban:
                continue
            nb = ban | {self._asn(n)}
            if self._tier(n) < self._tier(x) and 1 + self._down(n, t, nb) == d:
                count += 1
            elif self._tier(n) > self._tier(x) and 1 + self._any(n, t, nb) == d:
                count += 1
        return count


@dataclass
class Failures:
    """What the twin has failed on purpose: switches, and links as sorted ["dev:port", "peer:port"] pairs."""

    devices: list[str]
    links: list[list[str]]

    def model(self, fabric: Fabric) -> EcmpModel:
        return EcmpModel(fabric, set(self.devices), {frozenset(x) for x in self.links})


def ecmp_probes(fabric: Fabric, sample: int) -> list[tuple[str, str]]:
    """(switch, remote rack switch) pairs whose ECMP width is checked (a fixed sample on a big twin)."""
    switches = sorted(n for n, d in fabric.devices.items() if d.role in TIER)
    racks = sorted(n for n, d in fabric.devices.items() if d.role == "rtsw")
    pairs = [(x, t) for x in switches for t in racks if x != t]
    if len(pairs) > sample:
        pairs = sorted(random.Random(0).sample(pairs, sample))
    return pairs


def expected_ecmp(fabric: Fabric, failures: Failures, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The design's ECMP width for each (alive switch, rack switch) pair, under `failures`."""
    model = failures.model(fabric)
    return {(x, t): model.next_hops(x, t) for x, t in pairs if x in model.alive}


def expected_sessions(fabric: Fabric, switches: list[str], failures: Failures) -> dict[str, int]:
    """Established sessions each alive switch of `switches` should have: one per family per alive link to a switch,
    as the design's routing intent lists them."""
    model = failures.model(fabric)
    failed_links = {frozenset(x) for x in failures.links}
    out = {}
    for name in switches:
        d = fabric.devices[name]
        if name not in model.alive or d.routing is None:
            continue
        up = {i.name for i in d.interfaces if i.peer in model.alive
              and frozenset({f"{name}:{i.name}", f"{i.peer}:{i.peer_port}"}) not in failed_links}
        out[name] = sum(1 for n in d.routing.neighbors if n.interface in up)
    return out


def same_rail_pairs(fabric: Fabric, sample: int) -> tuple[list[tuple[str, str, str, str]], int]:
    """(host a, source address, host b, destination address) for NIC i of a to NIC i of b, both families; a fixed
    sample of at most `sample` of them, and how many there are in all."""
    hosts = sorted(n for n, d in fabric.devices.items() if d.role == "host")
    nics = {h: {i.name: i for i in fabric.devices[h].interfaces if i.kind == "host-rtsw"} for h in hosts}
    rails = sorted({nic for h in hosts for nic in nics[h]})
    out = []
    for rail in rails:
        for fam in ("ipv4", "ipv6"):
            pairs = [(a, b) for a, b in itertools.combinations(hosts, 2) if rail in nics[a] and rail in nics[b]]
            for a, b in pairs:
                src, dst = getattr(nics[a][rail], fam), getattr(nics[b][rail], fam)
                if src and dst:
                    out.append((a, src.split("/")[0], b, dst.split("/")[0]))
    total = len(out)
    if total > sample:
        out = sorted(random.Random(1).sample(out, sample))
    return out, total
