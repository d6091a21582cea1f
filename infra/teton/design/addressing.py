"""Address pools: /31 (/127) link nets, /32 (/128) loopbacks and per-RTSW host blocks, by index arithmetic.

Allocation is a pure function of an index, so it is deterministic and O(1) per address.  A pool that is too small
raises PoolExhausted, which the checks turn into a finding (see `teton.checks.spec_rules.pool_exhausted`).
IPv6 link nets and loopbacks skip every block that holds an address with an all-zero interface id (the
Subnet-Router anycast address: RFC 6164 section 5.1, RFC 4291 section 2.6.1), so `fd00:1::/127` is never handed out.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from functools import cached_property

from teton.findings import TetonError
from teton.spec.model import Addressing, AddressPools

IID = (1 << 64) - 1        # the interface-id half of an IPv6 address


class PoolExhausted(TetonError):
    def __init__(self, pool: str, network: str, needed: int, available: int):
        super().__init__(f"pool {network} has room for {available} but {needed} are needed")
        self.pool, self.network, self.needed, self.available = pool, network, needed, available


@dataclass(frozen=True)
class Pool:
    """`network` cut into blocks of prefix length `plen`; block i is at base + i * size."""

    name: str
    network: str
    plen: int

    def __post_init__(self) -> None:
        net = ipaddress.ip_network(self.network)
        if self.plen < net.prefixlen:
            raise PoolExhausted(self.name, self.network, 1, 0)

    @cached_property
    def _net(self) -> ipaddress.IPv4Network | ipaddress.IPv6Network:     # parsed once per pool (frozen: no setattr)
        return ipaddress.ip_network(self.network)

    @property
    def capacity(self) -> int:
        """Blocks it hands out: IPv6 ones less those holding an all-zero interface id (one per /64 it spans)."""
        net = self._net
        blocks = 1 << (self.plen - net.prefixlen)
        if net.version == 6 and self.plen > 64:
            zero = 1 << max(0, 64 - net.prefixlen) if net.prefixlen <= 64 else int(not int(net.network_address) & IID)
            blocks -= zero
        return blocks

    def block(self, i: int) -> tuple[int, int]:
        """(first address as int, size) of block i."""
        net = self._net
        size = 1 << (net.max_prefixlen - self.plen)
        return int(net.network_address) + i * size, size


class LinkNets:
    """Hands out point-to-point nets (/31 or /127) from one or two pools: north end first address, south second."""

    __slots__ = ("_v4base", "_v6base")

    def __init__(self, base4: int | None, base6: int | None):
        self._v4base, self._v6base = base4, base6

    @classmethod
    def from_pools(cls, v4: Pool | None, v6: Pool | None) -> LinkNets:
        return cls(_base(v4), _base(v6))

    def pair(self, i: int) -> tuple[tuple[str | None, str | None], tuple[str | None, str | None]]:
        """((north4, north6), (south4, south6)) with prefix lengths, for link i."""
        n4 = s4 = n6 = s6 = None
        if self._v4base is not None:
            a = self._v4base + 2 * i
            n4, s4 = f"{_v4(a)}/31", f"{_v4(a + 1)}/31"
        if self._v6base is not None:
            a = nonzero_iid(self._v6base, i, 2)
            n6, s6 = f"{_v6(a)}/127", f"{_v6(a + 1)}/127"
        return (n4, n6), (s4, s6)


def _base(pool: Pool | None) -> int | None:
    return None if pool is None else int(ipaddress.ip_network(pool.network).network_address)


def _v4(value: int) -> str:
    """Dotted quad of an IPv4 address given as an int (the C library's, ~6x faster than ipaddress)."""
    return socket.inet_ntoa(value.to_bytes(4, "big"))


def _v6(value: int) -> str:
    """RFC 5952 text of an IPv6 address given as an int: the C library's inet_ntop (~6x faster than ipaddress), the
    same text as ipaddress except for addresses in ::/80, which inet_ntop writes with a dotted quad (::ffff:1.2.3.4):
    those go through ipaddress (tests/design/test_addressing.py compares the two)."""
    if value >> 48 == 0:
        return str(ipaddress.IPv6Address(value))
    return socket.inet_ntop(socket.AF_INET6, value.to_bytes(16, "big"))


def host_block_plen(family: int, links: int) -> int:
    """Prefix length of one RTSW's block of `links` host /31s: a /27 for 16 links; IPv6 always a /64."""
    if family == 6:
        return 64
    need = 2 * links
    bits = max(1, (need - 1).bit_length())
    return 32 - bits


def loopback(pool: Pool, i: int) -> str:
    if pool.plen == 32:
        start, _ = pool.block(i)
        return f"{_v4(start)}/32"
    return f"{_v6(nonzero_iid(pool.block(0)[0], i, 1))}/128"


def nonzero_iid(base: int, i: int, step: int) -> int:
    """First address of the i-th block of `step` IPv6 addresses from `base` that holds no all-zero interface id: block 0
    of every /64 is skipped (RFC 6164 section 5.1)."""
    per64 = (1 << 64) // step
    start64, offset = base & ~IID, (base & IID) // step
    used = i if offset == 0 else offset - 1 + i          # usable blocks before it, counted from the /64's start
    position = used + used // (per64 - 1) + 1
    return start64 + position * step


def pools(addressing: Addressing, which: str, *, v4_plen: int, v6_plen: int) -> tuple[Pool | None, Pool | None]:
    """The v4 and v6 pools named `which` (loopbacks, fabric_links or host_links), cut at the given prefix lengths."""

    def one(p: AddressPools | None, plen: int, fam: str) -> Pool | None:
        net = getattr(p, which) if p is not None else None
        return None if net is None else Pool(f"{fam}.{which}", net, plen)

    return one(addressing.ipv4, v4_plen, "ipv4"), one(addressing.ipv6, v6_plen, "ipv6")


def block_text(family: int, start: int, plen: int) -> str:
    """"10.64.0.0/27" for a block given as (first address as int, prefix length)."""
    return f"{_v4(start)}/{plen}" if family == 4 else f"{_v6(start)}/{plen}"


def router_id(loopback4: str | None, index: int) -> str:
    """The IPv4 loopback; on an IPv6-only fabric a unique 32-bit id from the switch's index (RFC 6286)."""
    if loopback4:
        return loopback4.split("/", 1)[0]
    return _v4((1 << 24) + index + 1)
