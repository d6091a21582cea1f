"""`ib/partitions.conf` read back as OpenSM 3.3 reads it, and compared with the subnet manager's intent.

OpenSM makes every end port a limited member of the default partition 0x7fff (its own port a full one) before it reads
the file; it then reads each statement (`name=pkey, flags : members ;`) with fresh flags, and a later statement
overrides a port's membership.  So, for each subnet manager instance in turn as SELF (the port its opensm.conf binds),
this works out the membership and index-0 flag every HCA port ends with and names each one that differs from the
intent: a tenant's member full in its partition at index 0, limited in the default, the running SM and the hosts of
no tenant full in the default.  A statement whose flags differ from its partition's first is named too: the
continuation line without `indx0` is how half a tenant once got its P_Key at the wrong index.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from teton.fabric.model import Fabric
from teton.fabric.subnet import SubnetManager
from teton.findings import TetonError

DEFAULT = 0x7FFF
LIMIT = 10                  # ports named per subnet manager instance; the rest are counted
_KEYWORDS = {"ALL", "ALL_CAS", "ALL_SWITCHES", "ALL_ROUTERS", "SELF"}


@dataclass(frozen=True, slots=True)
class Statement:
    line: int
    name: str
    pkey: int                                 # 15 bits
    flags: tuple[str, ...]                    # as written: indx0, ipoib, mtu=5, ...
    members: tuple[tuple[str, str], ...]      # (keyword or port GUID in lower-case hex, full|limited|both)


class PartitionsError(ValueError, TetonError):
    def __init__(self, line: int, message: str):
        super().__init__(f"line {line}: {message}")
        self.line, self.message = line, message


def parse(text: str) -> list[Statement]:
    """The statements of a partitions.conf, in order (comments dropped; a statement may span lines)."""
    out: list[Statement] = []
    pending, start = "", 0
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if not pending:
            start = n
        pending += " " + line
        while ";" in pending:
            stmt, pending = pending.split(";", 1)
            if stmt.strip():
                out.append(_statement(stmt, start))
            pending, start = pending.strip(), n
    if pending.strip():
        raise PartitionsError(start, "statement without its closing ';'")
    return out


def _statement(stmt: str, line: int) -> Statement:
    head, colon, body = stmt.partition(":")
    if not colon:
        raise PartitionsError(line, "no ':' between the partition and its members")
    name_pkey, *flags = (part.strip() for part in head.split(","))
    name, _, pkey = name_pkey.partition("=")
    try:
        value = int(pkey, 0) & 0x7FFF
    except ValueError:
        raise PartitionsError(line, f"partition {name_pkey!r} has no P_Key") from None
    members = []
    for m in (m.strip() for m in body.split(",")):
        if m:
            who, _, how = m.partition("=")
            who = who.strip()
            try:
                guid = who if who in _KEYWORDS else f"0x{int(who, 16):016x}"
            except ValueError:
                raise PartitionsError(line, f"member {who!r} of {name.strip()} is neither a port GUID nor a keyword"
                                      ) from None
            members.append((guid, how.strip() or "limited"))
    return Statement(line, name.strip(), value, tuple(flags), tuple(members))


def memberships(statements: Iterable[Statement], self_guid: str, hca_ports: Iterable[str]) -> dict[
        int, dict[str, tuple[bool, bool]]]:
    """{P_Key: {HCA port GUID: (full, index 0)}} once OpenSM running on `self_guid` has read `statements`."""
    ports = [f"0x{int(g, 16):016x}" for g in hca_ports]
    me = f"0x{int(self_guid, 16):016x}"
    out: dict[int, dict[str, tuple[bool, bool]]] = {DEFAULT: {g: (g == me, False) for g in ports}}
    for st in statements:
        part = out.setdefault(st.pkey, {})
        index0 = "indx0" in st.flags
        for who, how in st.members:
            targets = (ports if who in ("ALL", "ALL_CAS") else [me] if who == "SELF"
                       else [] if who in _KEYWORDS else [who])
            for g in targets:
                part[g] = (how in ("full", "both"), index0)
    return out


def check(f: Fabric, sm: SubnetManager, text: str) -> Iterator[tuple[int | None, str]]:
    """(line or None, problem) of a partitions.conf against the intent `sm`."""
    statements = parse(text)
    first: dict[int, Statement] = {}
    for st in statements:
        head = first.setdefault(st.pkey, st)
        if set(st.flags) != set(head.flags):
            yield st.line, (f"{st.name} (0x{st.pkey:04x}) is spelled with flags {', '.join(st.flags) or 'none'} "
                            f"here but {', '.join(head.flags) or 'none'} on line {head.line}: OpenSM reads every "
                            "statement afresh, so its ports get other settings")
    hosts = sorted(d.name for d in f.devices.values() if d.nos is None and "port_guids" in d.attrs)  # GPU, SM hosts
    port = {(h, a): f"0x{int(g, 16):016x}" for h in hosts for a, g in sorted(f.devices[h].attrs["port_guids"].items())}
    limited = set(sm.default_limited)
    for inst in sm.instances:
        me = port[(inst.host, inst.hca)]
        found = memberships(statements, me, port.values())
        wrong = []
        for (h, a), g in port.items():
            want = {DEFAULT: (g == me or h not in limited, False)}
            want.update({p.pkey: (True, p.index0) for p in sm.partitions if h in p.members})
            have = {k: ports[g] for k, ports in found.items() if g in ports}
            if have != want:
                wrong.append(f"{h} {a} ends {_spell(have)}, the intent is {_spell(want)}")
        if wrong:
            more = f"; and {len(wrong) - LIMIT} more ports" if len(wrong) > LIMIT else ""
            yield None, (f"with the subnet manager on {inst.host} {inst.hca}: " + "; ".join(wrong[:LIMIT]) + more)


def _spell(m: dict[int, tuple[bool, bool]]) -> str:
    return ", ".join(f"0x{k:04x} {'full' if full else 'limited'}{' at index 0' if i0 else ''}"
                     for k, (full, i0) in sorted(m.items())) or "in no partition"
