"""What each address pool and the management network hold against what the cluster's room takes from them: one
computation for the spec rule pool-exhausted and for `teton plan`'s room report.

A pool's blocks are /32 (/128) loopbacks, /31 (/127) link nets or one host block per rack switch; the room's demand is
the number of places the designers lay out (`teton.design.room`), not the number of devices that exist.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from teton.design.addressing import PoolExhausted, host_block_plen, pools
from teton.design.frontend import fe_counts
from teton.design.management import mgmt_capacity, reserved_addresses
from teton.design.roce import RoceShape, roce_room
from teton.design.room import Room
from teton.fabric.model import Fabric
from teton.spec.model import Cluster, RoceBackend

WHICH = ("loopbacks", "fabric_links", "host_links")
PLENS = {"loopbacks": (32, 128), "fabric_links": (31, 127)}


@dataclass(frozen=True)
class PoolUse:
    """One pool: its spec path, network, block size, how many blocks it holds and how many the room takes."""

    path: str                  # backend.addressing.ipv4.host_links, management.network
    plane: str                 # backend, frontend, management
    which: str                 # loopbacks, fabric_links, host_links, switches
    network: str
    plen: int
    capacity: int
    room: int


@dataclass(frozen=True)
class PoolProblem:
    """A pool that cannot be cut at all: smaller than one block, or no family gives it."""

    path: str
    message: str


def pool_uses(cluster: Cluster, room: Room, ib_switches: int = 0) -> tuple[list[PoolUse], list[PoolProblem]]:
    """Every pool of the cluster with the room's demand on it, and the pools that cannot even be cut;
    `ib_switches`: the InfiniBand switches, which take management addresses after the room's places."""
    plans = []
    if isinstance(cluster.backend, RoceBackend):
        r = roce_room(cluster, room)
        plans.append(("backend", cluster.backend.addressing, r,
                      {**PLENS, "host_links": (host_block_plen(4, RoceShape.of(cluster).rtsw_down), 64)}))
    if cluster.frontend is not None:
        n = fe_counts(cluster, room)
        plans.append(("frontend", cluster.frontend.addressing, n,
                      {**PLENS, "host_links": (host_block_plen(4, n["max_host_ports"]), 64)}))
    uses: list[PoolUse] = []
    problems: list[PoolProblem] = []
    for plane, addressing, demand, plens in plans:
        for which in WHICH:
            v4p, v6p = plens[which]
            try:
                v4, v6 = pools(addressing, which, v4_plen=v4p, v6_plen=v6p)
            except PoolExhausted as exc:
                plen = v4p if "ipv4" in exc.pool else v6p
                problems.append(PoolProblem(f"{plane}.addressing.{exc.pool}",
                                            f"{exc.network} is smaller than one /{plen} block"))
                continue
            if v4 is None and v6 is None:
                problems.append(PoolProblem(f"{plane}.addressing", f"neither ipv4 nor ipv6 gives a {which} pool"))
            for fam, pool in (("ipv4", v4), ("ipv6", v6)):
                if pool is not None:
                    uses.append(PoolUse(f"{plane}.addressing.{fam}.{which}", plane, which, pool.network, pool.plen,
                                        pool.capacity, demand[which]))
    m = cluster.management
    if m.network is not None:
        places = sum(demand["loopbacks"] for _, _, demand, _ in plans) + ib_switches
        capacity = mgmt_capacity(m.network, reserved_addresses(m, cluster.ztp))
        uses.append(PoolUse("management.network", "management", "switches", m.network,
                            int(m.network.rsplit("/", 1)[1]), capacity, places))
    return uses, problems




def room_report(cluster: Cluster, room: Room, fabric: Fabric) -> dict[str, Any]:
    """`teton plan`'s room section: each dimension's room, what the spec has now and where the room comes from, and
    every pool's blocks: held, taken at the room, taken now (counted on the designed `fabric`)."""
    ib = sum(1 for d in fabric.devices.values() if d.nos is not None and d.routing is None and d.plane == "backend")
    uses, _ = pool_uses(cluster, room, ib)
    be, fe = cluster.backend, cluster.frontend
    now_dims = {"zones": cluster.zones, "racks_per_zone": cluster.racks_per_zone,
                "atsw": be.atsw.count if isinstance(be, RoceBackend) else 0,
                "ssw_per_plane": fe.ssw.per_plane if fe is not None and fe.ssw is not None else 0,
                "storage_racks": max((g.racks for g in cluster.storage), default=0)}
    dims = {k: {"room": getattr(room, k), "now": v, "why": room.why.get(k, "")} for k, v in now_dims.items()}
    return {"dimensions": dims,
            "pools": [{"pool": u.path, "network": u.network, "block": f"/{u.plen}", "blocks": u.capacity,
                       "room": u.room, "now": _now(fabric, u)} for u in uses]}


def _now(fabric: Fabric, use: PoolUse) -> int:
    """Blocks of `use`'s pool the designed fabric takes."""
    switches = [d for d in fabric.devices.values() if d.nos is not None]
    if use.which == "switches":
        return sum(1 for d in switches if d.mgmt)
    fam = "4" if ".ipv4." in use.path else "6"
    mine = [d for d in switches if d.plane == use.plane]
    if use.which == "loopbacks":
        return sum(1 for d in mine if getattr(d, f"loopback{fam}"))
    if use.which == "host_links":
        return sum(1 for d in mine if getattr(d, f"prefixes{fam}"))
    names = {d.name for d in mine}
    return sum(1 for link in fabric.links if link.a.device in names and link.b.device in names
               and getattr(link.a, f"ipv{fam}"))
