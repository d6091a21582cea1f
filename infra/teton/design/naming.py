"""Device and rack names a technician can read: zone, rack, role.  Fixed widths, so names sort and never shift."""

from __future__ import annotations


def rack_name(zone: int, rack: int) -> str:
    return f"z{zone:02d}-r{rack:03d}"


def rtsw_name(zone: int, rack: int) -> str:
    return f"{rack_name(zone, rack)}-rtsw"


def host_name(zone: int, rack: int, host: int) -> str:
    return f"{rack_name(zone, rack)}-h{host}"


def ctsw_name(zone: int, plane: int) -> str:
    return f"z{zone:02d}-ctsw{plane:02d}"


def atsw_name(index: int) -> str:
    return f"atsw{index:02d}"


def net_rack_name(zone: int | None, index: int) -> str:
    """Network racks holding spines (per zone) or aggregators (zone None)."""
    return f"z{zone:02d}-n{index:02d}" if zone is not None else f"agg-n{index:02d}"


def fe_rsw_name(rack: str) -> str:
    return f"{rack}-frsw"


def fsw_name(zone: int | None, index: int) -> str:
    return f"z{zone:02d}-fsw{index:02d}" if zone is not None else f"st-fsw{index:02d}"


def ssw_name(plane: int, index: int) -> str:
    """Front-end spine <index> of plane <plane> (the plane FSW <plane> of every zone joins)."""
    return f"ssw{plane:02d}-{index:02d}"


def fe_spine_rack_name(plane: int, index: int) -> str:
    """Network rack <index> holding front-end spines of plane <plane>."""
    return f"fe-p{plane:02d}-n{index:02d}"


SERVICE_RACK = "svc-r01"   # the service hosts' rack (front-end zone 0, with the storage racks)


def storage_rack_name(group: int, rack: int) -> str:
    return f"s{group}-r{rack:02d}"


def storage_server_name(rack: str, server: int) -> str:
    return f"{rack}-sp{server:02d}"


# InfiniBand: a zone is a scalable unit (SU); leaf<i> of an SU serves rail i (the hosts' HCA i, mlx5_i by default).
def leaf_name(zone: int, rail: int) -> str:
    return f"z{zone:02d}-leaf{rail}"


def spine_name(pod: int | None, rail: int | None, index: int) -> str:
    """Two levels: spine<j>; three levels: the spines of one pod of SUs and one rail."""
    return f"spine{index:02d}" if pod is None else f"p{pod:02d}-rail{rail}-spine{index:02d}"


def core_name(plane: int, index: int) -> str:
    """Core <index> of plane <plane>: the cores that spine <plane> of every pod and rail reaches."""
    return f"core{plane:02d}-{index:02d}"
