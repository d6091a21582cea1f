"""Prefix lists and route maps as the NOS applies them, evaluated over every prefix of a family at once.

A prefix is two 64-bit words (`PrefixTable.hi`, `.lo`: an IPv4 network in the top 32 bits of `hi`) and a length, so one
comparison on arrays decides a prefix-list line for all prefixes.  Semantics (FRR's and EOS's alike):

- a prefix-list line matches a route inside its network whose length is its own (neither `ge` nor `le`), within
  [ge, the family's maximum] (`ge` alone), [its own, le] (`le` alone) or [ge, le]; the first line that matches decides
  permit or deny; no line matching denies; a prefix list that does not exist matches nothing;
- a route-map clause applies when every prefix list it matches permits (no match statement: always); the first that
  applies permits (with its AS-path prepend) or denies; none applying denies; a clause with a statement the model does
  not evaluate never applies (verify reports it);
- a route map that is referenced but not defined denies everything; no route map permits everything.

`evaluate` gives one int8 per prefix: -1 denied, else the index of the permitting clause's prepend in a `Prepends`
table (0: none).  A switch's summary-only aggregates suppress their more-specifics on every session, as a policy
would: they are part of its out-policy's key (`OutPolicy`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache

import numpy as np

from teton.fabric.bgpview import PrefixListView, PrefixRule, RouteMapView, address_int
from teton.fabric.intent import Family

MAXLEN: dict[Family, int] = {"ipv4": 32, "ipv6": 128}
DENY = -1


@cache
def prefix_words(prefix: str) -> tuple[int, int, int]:
    """(hi, lo, length) of "10.0.0.0/24" or "fd00::/64": the network as two 64-bit words (IPv4 in hi's top 32
    bits), host bits cleared."""
    address, _, length = prefix.partition("/")
    version, value = address_int(address)
    bits = 32 if version == 4 else 128
    plen = int(length) if length else bits
    if not 0 <= plen <= bits:
        raise ValueError(f"{prefix!r}: length out of range")
    value = (value >> (bits - plen) << (bits - plen)) if plen else 0
    if version == 4:
        return value << 32, 0, plen
    return value >> 64, value & ((1 << 64) - 1), plen


@cache
def canonical(prefix: str) -> str:
    """The prefix as a network with host bits cleared ("10.0.0.1/24" -> "10.0.0.0/24")."""
    hi, lo, plen = prefix_words(prefix)
    if ":" in prefix:
        import ipaddress

        return f"{ipaddress.IPv6Address((hi << 64) | lo).compressed}/{plen}"
    v = hi >> 32
    return f"{v >> 24}.{(v >> 16) & 255}.{(v >> 8) & 255}.{v & 255}/{plen}"


@dataclass
class PrefixTable:
    """The prefixes of one family, as arrays (in the order given)."""

    family: Family
    prefixes: list[str]
    hi: np.ndarray = field(init=False)
    lo: np.ndarray = field(init=False)
    length: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        words = [prefix_words(p) for p in self.prefixes]
        self.hi = np.array([w[0] for w in words], dtype=np.uint64)
        self.lo = np.array([w[1] for w in words], dtype=np.uint64)
        self.length = np.array([w[2] for w in words], dtype=np.int16)

    def __len__(self) -> int:
        return len(self.prefixes)

    def inside(self, prefix: str) -> np.ndarray:
        """Which prefixes lie inside `prefix` (its network, any length at least its own)."""
        hi, lo, plen = prefix_words(prefix)
        return self._under(hi, lo, plen) & (self.length >= plen)

    def _under(self, hi: int, lo: int, plen: int) -> np.ndarray:
        """Whether each prefix's first `plen` bits are those of (hi, lo)."""
        if plen == 0:
            return np.ones(len(self.prefixes), dtype=bool)
        if plen <= 64:
            shift = np.uint64(64 - plen)
            return (self.hi >> shift) == np.uint64(hi >> (64 - plen))
        shift = np.uint64(128 - plen)
        return (self.hi == np.uint64(hi)) & ((self.lo >> shift) == np.uint64(lo >> (128 - plen)))

    def matches(self, rule: PrefixRule) -> np.ndarray:
        hi, lo, plen = prefix_words(rule.prefix)
        low = rule.ge if rule.ge is not None else plen
        high = rule.le if rule.le is not None else (MAXLEN[self.family] if rule.ge is not None else plen)
        return self._under(hi, lo, plen) & (self.length >= low) & (self.length <= high)


class Prepends:
    """Every AS-path prepend a permitting clause adds, numbered (0: none)."""

    def __init__(self) -> None:
        self.items: list[tuple[int, ...]] = [()]
        self._index: dict[tuple[int, ...], int] = {(): 0}

    def index(self, prepend: tuple[int, ...]) -> int:
        if prepend not in self._index:
            if len(self.items) >= 127:
                raise ValueError("more than 126 distinct AS-path prepends")
            self._index[prepend] = len(self.items)
            self.items.append(prepend)
        return self._index[prepend]

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(lengths per index, ASNs per index padded with -1)."""
        width = max((len(p) for p in self.items), default=0)
        table = np.full((len(self.items), max(width, 1)), -1, dtype=np.int64)
        for k, p in enumerate(self.items):
            table[k, :len(p)] = p
        return np.array([len(p) for p in self.items], dtype=np.int16), table


PlistKey = tuple[tuple[int, bool, str, int | None, int | None], ...] | None   # None: not defined
ClauseKey = tuple[int, bool, tuple[PlistKey, ...], tuple[int, ...], bool]
MapKey = tuple[ClauseKey, ...] | None | str    # "permit": no route map; None: referenced but not defined


@dataclass(frozen=True)
class OutPolicy:
    """What decides whether a switch sends a route on a session: its route map out (content, not name) and its
    summary-only aggregates (their more-specifics are suppressed)."""

    route_map: MapKey
    suppress: tuple[str, ...] = ()


class Rules(tuple):  # type: ignore[type-arg]
    """A prefix list's rules by content, (seq, permit, prefix, ge, le) each: a tuple (a `PlistKey`) made once per
    list and shared by every clause that matches it, its hash kept, and its rules as arrays once per family (so that
    a route map's cost grows as its clauses plus its lists' rules, never as their product)."""

    def __hash__(self) -> int:
        h: int | None = self.__dict__.get("_hash")
        if h is None:
            h = self.__dict__["_hash"] = tuple.__hash__(self)
        return h

    def __eq__(self, other: object) -> bool:
        return self is other or tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other


@lru_cache(maxsize=256)
def _interned(rules: tuple[tuple[int, bool, str, int | None, int | None], ...]) -> Rules:
    """One `Rules` per content (switches that share a list share its arrays); a few lists kept."""
    return Rules(rules)


def map_key(name: str | None, route_maps: Mapping[str, RouteMapView],
            plists: Mapping[str, PrefixListView]) -> MapKey:
    """A route map by content: two switches whose maps say the same share one evaluation.  Each prefix list is one
    `Rules`, however many clauses match it."""
    if name is None:
        return "permit"
    rm = route_maps.get(name)
    if rm is None:
        return None
    made: dict[str, PlistKey] = {}

    def plist(n: str) -> PlistKey:
        if n not in made:
            pl = plists.get(n)
            made[n] = None if pl is None else _interned(tuple((r.seq, r.permit, r.prefix, r.ge, r.le)
                                                              for r in pl.rules))
        return made[n]

    return tuple((c.seq, c.permit, tuple(plist(m) for m in c.match), c.prepend, bool(c.unmodelled))
                 for c in rm.clauses)


# a prefix list is evaluated over a table in blocks of rules x prefixes of at most this many cells
_BLOCK = 1 << 20
_ALL = (1 << 64) - 1


def _rule_arrays(key: PlistKey, family: Family) -> tuple[np.ndarray, ...]:
    """(hi mask, hi, lo mask, lo, lowest length, highest length, permit) of each rule of `key`, as arrays; kept on a
    `Rules`."""
    memo: dict[Family, tuple[np.ndarray, ...]] | None = key.__dict__.setdefault("_arrays", {}) \
        if isinstance(key, Rules) else None
    if memo is not None and family in memo:
        return memo[family]
    rows = []
    for _, permit, prefix, ge, le in key or ():
        hi, lo, plen = prefix_words(prefix)
        low = ge if ge is not None else plen
        high = le if le is not None else (MAXLEN[family] if ge is not None else plen)
        hmask = _ALL ^ ((1 << (64 - min(plen, 64))) - 1)
        lmask = _ALL ^ ((1 << (128 - plen)) - 1) if plen > 64 else 0
        rows.append((hmask, hi, lmask, lo, low, high, permit))
    cols: list[tuple[int | bool, ...]] = list(zip(*rows, strict=True)) if rows else [()] * 7
    arrays: tuple[np.ndarray, ...] = (*(np.array(c, dtype=np.uint64) for c in cols[:4]),
                                      np.array(cols[4], dtype=np.int16), np.array(cols[5], dtype=np.int16),
                                      np.array(cols[6], dtype=bool))
    if memo is not None:
        memo[family] = arrays
    return arrays


def _plist_permits(table: PrefixTable, key: PlistKey) -> np.ndarray:
    """Which prefixes of `table` prefix list `key` permits (its first matching rule permits), in blocks of rules."""
    n = len(table)
    if key is None or n == 0:
        return np.zeros(n, dtype=bool)
    hmask, hi, lmask, lo, low, high, permit = _rule_arrays(key, table.family)
    decided = np.zeros(n, dtype=np.int8)
    step = max(1, _BLOCK // n)
    for start in range(0, len(hi), step):
        todo = np.flatnonzero(decided == 0)
        if not len(todo):
            break
        b = slice(start, start + step)
        th, tl, tn = table.hi[todo], table.lo[todo], table.length[todo]
        m = (((th[None, :] & hmask[b, None]) == hi[b, None]) & ((tl[None, :] & lmask[b, None]) == lo[b, None])
             & (tn[None, :] >= low[b, None]) & (tn[None, :] <= high[b, None]))
        hit = m.any(axis=0)
        first = m.argmax(axis=0)[hit]
        decided[todo[hit]] = np.where(permit[b][first], 1, -1)
    return decided == 1


def evaluate(table: PrefixTable, policy: OutPolicy | MapKey, prepends: Prepends) -> np.ndarray:
    """Per prefix of `table`: DENY, or the prepend index of the clause that permits it."""
    key = policy.route_map if isinstance(policy, OutPolicy) else policy
    n = len(table)
    if key == "permit":
        out = np.zeros(n, dtype=np.int8)
    elif key is None or isinstance(key, str):
        out = np.full(n, DENY, dtype=np.int8)
    else:
        out = np.full(n, -2, dtype=np.int8)
        permits: dict[int, np.ndarray] = {}      # each prefix list once (by the key's object), whatever the clauses
        for _, permit, plists, prepend, unmodelled in key:
            if unmodelled:
                continue
            applies = out == -2
            if not applies.any():
                break
            for pl in plists:
                got = permits.get(id(pl))
                if got is None:
                    got = permits[id(pl)] = _plist_permits(table, pl)
                applies &= got
            out[applies] = prepends.index(prepend) if permit else DENY
        out[out == -2] = DENY
    if isinstance(policy, OutPolicy):
        for aggregate in policy.suppress:
            hi, lo, plen = prefix_words(aggregate)
            out[table.inside(aggregate) & (table.length > plen)] = DENY
    return out


def _rule_matches(words: tuple[int, int, int], family: Family, prefix: str, ge: int | None, le: int | None) -> bool:
    hi, lo, plen = words
    rh, rl, rn = prefix_words(prefix)
    low = ge if ge is not None else rn
    high = le if le is not None else (MAXLEN[family] if ge is not None else rn)
    if not low <= plen <= high:
        return False
    if rn == 0:
        return True
    v, w = (hi << 64) | lo, (rh << 64) | rl
    return (v >> (128 - rn)) == (w >> (128 - rn))


def permits_scalar(prefixes: Sequence[str], family: Family, key: MapKey) -> list[str]:
    """The prefixes (a few: a switch's connected routes) that route map `key` permits; plain Python, the same
    semantics as `evaluate`."""
    if key == "permit":
        return list(prefixes)
    if key is None or isinstance(key, str):
        return []
    out = []
    for p in prefixes:
        words = prefix_words(p)
        lists: dict[int, bool] = {}      # each prefix list decided once for the prefix, whatever the clauses
        for _, permit, plists, _, unmodelled in key:
            if unmodelled:
                continue
            applies = True
            for pl in plists:
                decided = lists.get(id(pl))
                if decided is None:
                    decided = lists[id(pl)] = next((rule_permit for _, rule_permit, prefix, ge, le in pl or ()
                                                    if _rule_matches(words, family, prefix, ge, le)), False)
                if not decided:
                    applies = False
                    break
            if applies:
                if permit:
                    out.append(p)
                break
    return out
