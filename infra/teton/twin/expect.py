"""What the design promises the routed fabric does: ECMP width per switch and prefix, under any failures.

eBGP with RFC 7938 ASNs routes valley-free (up some tiers, then down) on shortest AS paths, and with multipath every
equal shortest path is used.  So the expected next hops of switch x towards rack switch t are the links to alive
neighbours on a shortest valley-free path, computed here on the Fabric with failed devices and links removed.
"""

from __future__ import annotations

from functools import cache

from teton.design.fabric import Fabric

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
