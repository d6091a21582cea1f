"""Shared-buffer decisions: pools and the lossless priority group's headroom, per switch.

Headroom (xoff) is what still arrives after a port sends PFC pause, until the sender stops (IEEE 802.1Qbb):

    bits in flight = port speed x (2 x cable length x 5 ns/m     the cable, there and back
                                   + 4 x 300 ns                  PHY, FEC and MAC of both ports, both ways
                                   + 1,200 ns)                   pause decision at the receiver, sender's reaction
    xoff = 1.32 x bits in flight / 8 + 2 x MTU                   one frame leaving, one arriving when it stops

rounded up to whole buffer cells.  The factor 1.32 is the buffer's cell tax and margin: with it the formula stays
within 1 % of the upstream Tomahawk3 SKU tables (Dell Z9332f pg_profile_lookup.ini: 178,562 bytes at 400G and 5 m,
373,888 at 300 m), which `tests/design/test_buffers.py` checks.  A catalogue entry's `headroom` list replaces the
formula for the speeds and cable lengths a vendor has measured.  Cable lengths are nominal per medium (DAC 5 m, AOC
30 m, multimode 100 m, single-mode 300 m) until the cabling plan carries real ones.
"""

from __future__ import annotations

import math

from teton.fabric.intent import Buffers, PgProfile
from teton.fabric.model import Interface
from teton.spec.model import SwitchModel

CABLE_M = {"dac": 5, "aec": 5, "aoc": 30, "mmf": 100, "smf": 300}   # an AEC reaches no further than a DAC
STANDARD_CABLES_M = (5, 40, 300)
PROPAGATION_NS_PER_M = 5
INTERFACE_NS = 300
PFC_RESPONSE_NS = 1200
CELL_FACTOR = 1.32
RESERVED_CELLS = 72        # guaranteed buffer of the lossless PG (size = xon)
XON_OFFSET_CELLS = 18


def cable_m(medium: str) -> int:
    return CABLE_M.get(medium, 300)


def xoff_bytes(speed_gbps: int, cable: int, mtu: int, cell: int) -> int:
    """The 802.1Qbb headroom of one lossless priority group, in bytes, rounded up to whole cells."""
    in_flight_ns = 2 * cable * PROPAGATION_NS_PER_M + 4 * INTERFACE_NS + PFC_RESPONSE_NS
    raw = CELL_FACTOR * speed_gbps / 8 * in_flight_ns + 2 * mtu
    return math.ceil(raw / cell) * cell


def profile(model: SwitchModel, speed_gbps: int, cable: int, mtu: int) -> PgProfile:
    vendor = {(h.speed_gbps, h.cable_m): h.xoff_bytes for h in model.headroom}
    xoff = vendor.get((speed_gbps, cable))
    cell = model.cell_bytes
    return PgProfile(speed_gbps, cable, xoff if xoff is not None else xoff_bytes(speed_gbps, cable, mtu, cell),
                     RESERVED_CELLS * cell, RESERVED_CELLS * cell, XON_OFFSET_CELLS * cell,
                     "vendor" if xoff is not None else "formula")


def _buffers(model: SwitchModel, used: tuple[tuple[int, int], ...], mtu: int) -> Buffers:
    total = int(model.buffer_mb * 1024 * 1024)
    speeds = sorted({g.speed_gbps for g in model.port_groups} | {s for s, _ in used})
    cables = sorted(set(STANDARD_CABLES_M) | {c for _, c in used})
    return Buffers(
        ingress_lossless_pool=total * 7 // 10, ingress_xoff_pool=total * 2 // 10,
        egress_lossless_pool=total * 9 // 10, egress_lossy_pool=total * 6 // 10, cell_bytes=model.cell_bytes,
        profiles=tuple(profile(model, s, c, mtu) for s, c in used),
        lookup=tuple(profile(model, s, c, mtu) for s in speeds for c in cables))


BufferCache = dict[tuple[str, tuple[tuple[int, int], ...], int], Buffers]


def buffers(model: SwitchModel, interfaces: tuple[Interface, ...], cache: BufferCache) -> Buffers | None:
    """The switch's buffer carve-up: one object per (model, speeds and cables used, MTU) of one design, shared by
    its switches through `cache`."""
    if not interfaces:
        return None
    used = tuple(sorted({(i.speed_gbps, cable_m(i.medium)) for i in interfaces}))
    key = (model.name, used, max(i.mtu for i in interfaces))
    if key not in cache:
        cache[key] = _buffers(model, used, key[2])
    return cache[key]
