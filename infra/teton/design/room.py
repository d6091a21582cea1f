"""The room a cluster is laid out for: the most zones, racks per zone, aggregators, spines per plane and storage
racks it will have, declared under `room:` or taken from what the chosen models' ports hold.  A spec without `room:`
is laid out for exactly what it has (as every teton before the room), so its pools need not hold more.

Every position the designers hand out is a function of a device's stable identity (zone, rack, plane, storage group
and rack) and of this room, never of how many devices exist now: the n-th loopback, link net, host block, port of an
upper-tier switch and management address belong to one identity whether or not its neighbours exist.  So adding a
zone, a rack, a storage rack, an ATSW or a front-end spine up to the room gives the new devices the places kept for
them, and an existing device only gains the ports where they attach (`docs/specs.md`, "Room to grow").

A room below what the spec has is clamped here (the designers never overlap two identities) and refused by the spec
rule `room` (`teton.checks.spec_rules.room_too_small`), which names the spec path.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from teton import limits
from teton.spec.model import Cluster, RoceBackend, SwitchModel

MAX_ZONES = 99              # the spec's own bounds (Cluster.zones, Cluster.racks_per_zone)
MAX_RACKS_PER_ZONE = 999


@dataclass(frozen=True)
class Room:
    """The room of each dimension, and where it comes from ("declared", or the ports that bound it)."""

    zones: int
    racks_per_zone: int
    atsw: int
    ssw_per_plane: int
    storage_racks: int                          # per storage group (the most of any group, without a room)
    services: bool                              # a service rack (zone 0 of the front end, slot 0)
    groups: int                                 # storage groups
    storage_slots: tuple[int, ...] = ()         # each group's racks in the layout: the room, or (without a room)
                                                # its racks now, so a rack added to the last group still appends
    why: dict[str, str] = field(default_factory=dict, compare=False)
    short: tuple[tuple[str, int, int], ...] = ()    # (spec path, room, what the spec has) where the room is too small

    @property
    def zone0_racks(self) -> int:
        """Racks of the front end's zone 0: the service rack, then every storage group's room."""
        return (1 if self.services else 0) + sum(self._storage())

    def zone0_slot(self, group: int | None, rack: int) -> int:
        """Slot of a zone-0 rack: 0 for the service rack (group None), then storage group g's rack r (1-based)."""
        if group is None:
            return 0
        return (1 if self.services else 0) + sum(self._storage()[:group - 1]) + rack - 1

    def _storage(self) -> tuple[int, ...]:
        return self.storage_slots or (self.storage_racks,) * self.groups

    def rack_slot(self, zone: int, rack: int) -> int:
        """Slot of compute rack `rack` of zone `zone` (both 1-based) among every compute rack of the room."""
        return (zone - 1) * self.racks_per_zone + rack - 1


NO_ROOM = "none declared: laid out for what the spec has (`room: {}` lays out for what the ports allow)"


def _no_room(cluster: Cluster) -> Room:
    """The room of a spec that declares none: exactly what it has (the layout of a cluster that is rebuilt, not
    grown: a zone added renumbers, and `teton diff` says so)."""
    be, fe = cluster.backend, cluster.frontend
    return Room(zones=cluster.zones, racks_per_zone=cluster.racks_per_zone,
                atsw=be.atsw.count if isinstance(be, RoceBackend) else 0,
                ssw_per_plane=fe.ssw.per_plane if fe is not None and fe.ssw is not None else 1,
                storage_racks=max((g.racks for g in cluster.storage), default=1), services=bool(cluster.services),
                groups=len(cluster.storage), storage_slots=tuple(g.racks for g in cluster.storage),
                why=dict.fromkeys(("zones", "racks_per_zone", "atsw", "ssw_per_plane", "storage_racks"), NO_ROOM))


def ports_at(model: SwitchModel, speed: int) -> int:
    """Front-panel ports of `model` that run at `speed` or faster."""
    return sum(g.count for g in model.port_groups if g.speed_gbps >= speed)


def room_of(cluster: Cluster, models: dict[str, SwitchModel]) -> Room:
    """The room of `cluster`: declared where `room:` says, else what the models' ports hold; never below what the
    spec has (a shortfall is listed in `short` for the rule)."""
    be, fe = cluster.backend, cluster.frontend
    if cluster.room is None:
        return _no_room(cluster)
    r = cluster.room
    why: dict[str, str] = {}
    short: list[tuple[str, int, int]] = []

    def pick(name: str, declared: int | None, bounds: list[tuple[int, str]], have: int, cap: int,
             cap_why: str = "the spec's limit") -> int:
        if declared is not None:
            why[name] = "declared"
            value = declared
        else:
            value, why[name] = min([(cap, cap_why), *((max(0, n), w) for n, w in bounds)])
        if value < have:
            short.append((f"room.{name}", value, have))
            value = have
        return value

    atsw_have = be.atsw.count if isinstance(be, RoceBackend) else 0
    atsw = pick("atsw", r.atsw, [], atsw_have, atsw_have, "the spec's count")
    ssw_have = fe.ssw.per_plane if fe is not None and fe.ssw is not None else 1
    ssw = pick("ssw_per_plane", r.ssw_per_plane, [], ssw_have, ssw_have, "the spec's count")
    zone_bounds: list[tuple[int, str]] = []
    rack_bounds: list[tuple[int, str]] = []
    if isinstance(be, RoceBackend) and be.rtsw.model in models and be.ctsw.model in models:
        ct = models[be.ctsw.model]
        rack_bounds.append(((ports_at(ct, be.rtsw.uplink_speed_gbps) - atsw * be.ctsw.uplinks_per_atsw)
                            // be.rtsw.uplinks_per_ctsw, f"{ct.name} CTSW ports"))
        if be.atsw.model in models and atsw:
            at = models[be.atsw.model]
            per_zone = be.ctsw.per_zone * be.ctsw.uplinks_per_atsw
            zone_bounds.append((ports_at(at, be.ctsw.uplink_speed_gbps) // per_zone, f"{at.name} ATSW ports"))
    fsw_down = None
    if fe is not None and fe.fsw.model in models:
        fm = models[fe.fsw.model]
        kept = ssw * fe.ssw.uplinks_per_ssw if fe.ssw is not None else 0
        fsw_down = (ports_at(fm, fe.uplink_speed_gbps) - kept) // fe.uplinks_per_fsw
        rack_bounds.append((fsw_down, f"{fm.name} FSW ports"))
        if fe.ssw is not None and fe.ssw.model in models:
            sm = models[fe.ssw.model]
            fe_zones = ports_at(sm, fe.ssw.uplink_speed_gbps) // fe.ssw.uplinks_per_ssw - 1   # zone 0's kept
            zone_bounds.append((fe_zones, f"{sm.name} front-end spine ports"))
    zones = pick("zones", r.zones, zone_bounds, cluster.zones, MAX_ZONES)
    racks = pick("racks_per_zone", r.racks_per_zone, rack_bounds, cluster.racks_per_zone, MAX_RACKS_PER_ZONE)
    groups = len(cluster.storage)
    have_storage = max((g.racks for g in cluster.storage), default=1)
    storage_bounds = []
    if fsw_down is not None and groups:
        storage_bounds.append(((fsw_down - (1 if cluster.services else 0)) // groups,
                               "the storage FSWs' ports, shared by the groups"))
    storage = pick("storage_racks", r.storage_racks, storage_bounds, have_storage,
                   have_storage if fe is None else limits.MAX_STORAGE_RACKS)
    # aggregators and spines left out of a declared room: what the CTSWs' and FSWs' ports hold after the racks'
    # room, so adding one renumbers nothing (their places come after the racks'; `room: {}` gives the racks every
    # port, and so leaves them at the spec's count)
    if r.atsw is None and isinstance(be, RoceBackend) and be.ctsw.model in models:
        free = ports_at(models[be.ctsw.model], be.ctsw.uplink_speed_gbps) - racks * be.rtsw.uplinks_per_ctsw
        if free // be.ctsw.uplinks_per_atsw > atsw:
            atsw = min(limits.MAX_ATSW, free // be.ctsw.uplinks_per_atsw)
            why["atsw"] = f"{be.ctsw.model} CTSW ports left after the racks' room"
    if r.ssw_per_plane is None and fe is not None and fe.ssw is not None and fe.fsw.model in models:
        zone0 = Room(zones, racks, atsw, ssw, storage, bool(cluster.services), groups).zone0_racks
        free = ports_at(models[fe.fsw.model], fe.ssw.uplink_speed_gbps) - max(racks, zone0) * fe.uplinks_per_fsw
        if free // fe.ssw.uplinks_per_ssw > ssw:
            ssw = min(limits.MAX_SSW_PER_PLANE, free // fe.ssw.uplinks_per_ssw)
            why["ssw_per_plane"] = f"{fe.fsw.model} FSW ports left after the racks' room"
    return Room(zones=zones, racks_per_zone=racks, atsw=atsw, ssw_per_plane=ssw, storage_racks=storage,
                services=bool(cluster.services), groups=groups, why=why, short=tuple(short))
