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


def storage_rack_name(group: int, rack: int) -> str:
    return f"s{group}-r{rack:02d}"


def storage_server_name(rack: str, server: int) -> str:
    return f"{rack}-sp{server:02d}"
