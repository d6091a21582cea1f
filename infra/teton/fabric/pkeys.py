"""The InfiniBand partition (P_Key) each GPU host's jobs run in, and the index of that P_Key in its HCAs' tables.

A queue pair connects only to a port that holds its P_Key as a full member (a limited member reaches only full ones),
so a job spans the hosts of one P_Key: the default partition 0x7fff for the hosts of no tenant, a tenant's for its
members (limited in 0x7fff).  The scheduler's partitions follow these (the slurm target, one per P_Key) and so does
NCCL's `NCCL_IB_PKEY`, the P_Key *index* every QP of a job uses (the ansible target's `teton_nccl`, `ib/nccl.env`).

The index is what the subnet manager intent fixes: a tenant's P_Key is at index 0 of its members' tables (`indx0` in
partitions.conf); a host of no tenant holds 0x7fff alone, at index 0.  A tenant partition without `indx0` leaves the
index to the order OpenSM fills the tables in (it differed between two statements of one partition in lab-ib), so
it is refused here rather than written as a guess.
"""

from __future__ import annotations

from typing import NamedTuple

from teton.fabric.model import Fabric
from teton.findings import Finding, SpecError

DEFAULT_PKEY = 0x7FFF
FULL_MEMBER = 0x8000        # the membership bit: a full member's table holds pkey | 0x8000
DEFAULT_NAME = "Default"    # partitions.conf's name of 0x7fff


class PkeyPartition(NamedTuple):
    name: str                  # the InfiniBand partition's name (DEFAULT_NAME for 0x7fff)
    pkey: int                  # 15 bits
    pkey_index: int            # of the P_Key in its hosts' HCA tables: NCCL_IB_PKEY
    hosts: tuple[str, ...]     # the GPU hosts that are its full members (and in no other), in the Fabric's order

    @property
    def tenant(self) -> bool:
        return self.pkey != DEFAULT_PKEY

    @property
    def spelled(self) -> str:
        """'0x0a01', as partitions.conf writes it."""
        return f"0x{self.pkey:04x}"

    @property
    def table_value(self) -> str:
        """'0x8a01': the P_Key as a full member's table holds it (sysfs .../pkeys/<index>, `smpquery pkeys`)."""
        return f"0x{self.pkey | FULL_MEMBER:04x}"


def pkey_partitions(f: Fabric) -> list[PkeyPartition]:
    """The P_Keys GPU hosts run jobs in: the default partition's (the hosts of no tenant; left out when every host is
    a tenant's), then each tenant's in the intent's order (one with no GPU host too, with no hosts).  [] for a fabric
    without a subnet manager (RoCE)."""
    sm = f.subnet_manager
    if sm is None:
        return []
    gpus = [d.name for d in f.by_role("host")]
    owner = {h: p.name for p in sm.partitions for h in p.members}
    out = []
    default = tuple(h for h in gpus if h not in owner)
    if default:
        out.append(PkeyPartition(DEFAULT_NAME, DEFAULT_PKEY, 0, default))
    for i, p in enumerate(sm.partitions):
        if not p.index0:
            raise SpecError([Finding("fabric.json", f"subnet_manager.partitions[{i}]", f"tenant partition {p.name!r} "
                                     f"(0x{p.pkey:04x}) does not put its P_Key at index 0 of its members' tables "
                                     "(indx0): the index NCCL_IB_PKEY needs would be whatever OpenSM picks",
                                     rule="render")])
        out.append(PkeyPartition(p.name, p.pkey, 0, tuple(h for h in gpus if owner.get(h) == p.name)))
    return out


def host_pkeys(f: Fabric) -> dict[str, PkeyPartition]:
    """{GPU host: the partition its jobs run in}."""
    return {h: p for p in pkey_partitions(f) for h in p.hosts}
