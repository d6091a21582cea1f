"""Parsing FRR text: an integrated frr.conf (what `router bgp` runs, its split per daemon) and a daemon's log.

`split_frr_conf` gives each daemon its part of an integrated file: FRR 8.4 accepts the whole file with ``-f`` in both
zebra and bgpd, but each logs "No such command" for every line of the other daemon, which would drown real errors.

What a daemon refuses while it reads its config at start-up (FRR 8.4 ``lib/vty.c``; one log line per refused line)::

    ... BGP: [SHWNK-NWT5S][EC 100663304] Command returned Warning Config Failed on config line 5:  timers bgp 1 1
    ... BGP: [SHWNK-NWT5S][EC 100663304] No such command on config line 15: some-unknown-command here

"No such command", "Ambiguous command", "Command returned Incomplete" and the other return codes share the form
"<reason> on config line N: <line>"; a config file that cannot be read gives "failed to read configuration file".
The daemon's own explanation ("% hold time value must be either 0 or greater than 3") goes to its stdout.
`config_complaints` and `daemon_remarks` read both from a byte offset, so that a restarted daemon is judged by what it
said this time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DAEMONS = ("zebra", "bgpd")
"""The daemons teton runs FRR with (the twin's switches), in start order."""

_BGPD_ONLY = (
    "router bgp",
    "bgp ",
    "ip as-path",
    "ip community-list",
    "ip extcommunity-list",
    "ip large-community-list",
    "rpki",
    "bmp ",
    "debug bgp",
)
_ZEBRA_ONLY = (
    "interface ",
    "vrf ",
    "zebra ",
    "no zebra ",
    "ip forwarding",
    "ipv6 forwarding",
    "no ip forwarding",
    "no ipv6 forwarding",
    "ip nht",
    "ipv6 nht",
    "no ip nht",
    "no ipv6 nht",
    "ip protocol",
    "ipv6 protocol",
    "ip import-table",
    "table ",
    "debug zebra",
    "mpls ",
)
_STATICD = ("ip route ", "ipv6 route ")  # staticd: not run by the twin
_DROPPED = (
    "line vty",  # vty over TCP is off (-P 0); zebra rejects the block
    "service integrated-vtysh-config",  # vtysh's own setting: both daemons log "No such command"
    "no service integrated-vtysh-config",
)
_BLOCK_END = ("exit", "exit-vrf", "end")

_NEIGHBOR = re.compile(r"^ neighbor (\S+) remote-as (\d+)$")
_COMPLAINT = re.compile(r" on config line \d+: |failed to read configuration file")
_LOG_LINE = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d")  # FRR log lines also reach stdout before the log is open


@dataclass(frozen=True)
class BgpNeighbor:
    """A ``neighbor X remote-as N`` line of `router bgp`, with its line number in the file (from 1)."""

    address: str
    remote_as: int
    line: int


@dataclass(frozen=True)
class BgpConfig:
    """What the `router bgp` of an frr.conf runs: its ASN, router-id and neighbours (None: not configured)."""

    asn: int | None
    router_id: str | None
    neighbors: tuple[BgpNeighbor, ...]


def bgp_config(text: str) -> BgpConfig:
    """The `router bgp` of an integrated frr.conf, as teton spells it (one instance, neighbours by address)."""
    asn: int | None = None
    rid: str | None = None
    neighbors = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith("router bgp "):
            asn = int(line.split()[2])
        elif line.startswith(" bgp router-id "):
            rid = line.split()[2]
        elif m := _NEIGHBOR.match(line):
            neighbors.append(BgpNeighbor(m.group(1), int(m.group(2)), n))
    return BgpConfig(asn, rid, tuple(neighbors))


def _owner(first_line: str) -> str:
    s = first_line.strip()
    if s.startswith(_BGPD_ONLY):
        return "bgpd"
    if s.startswith(_ZEBRA_ONLY):
        return "zebra"
    if s.startswith(_STATICD):
        return "staticd"
    if s.startswith(_DROPPED):
        return "none"
    return "both"


def split_frr_conf(text: str) -> tuple[dict[str, str], list[str]]:
    """Split an integrated frr.conf into {"zebra": text, "bgpd": text} plus warnings.

    Blocks (a line at column 0 with its indented lines and closing ``exit``) keep their order; ``router bgp`` and
    the bgp lists go to bgpd, ``interface``/``vrf`` and the zebra globals to zebra, everything else (``frr defaults``,
    ``hostname``, ``log``, route-maps, prefix-lists, access-lists ...) to both.  ``!`` comments, ``line vty`` and
    vtysh's own ``service integrated-vtysh-config`` are dropped.
    """
    blocks: list[tuple[str, list[str]]] = []
    for raw in text.splitlines():
        line = raw.rstrip()
        stripped = line.strip()
        if not stripped or stripped.startswith(("!", "#")):
            continue
        indented = line[0].isspace()
        if not indented and stripped in _BLOCK_END:
            if stripped != "end" and blocks:
                blocks[-1][1].append(line)
            continue
        if indented and blocks:
            blocks[-1][1].append(line)
        else:
            blocks.append((_owner(line), [line]))
    out: dict[str, list[str]] = {d: [] for d in DAEMONS}
    warnings: list[str] = []
    for owner, lines in blocks:
        if owner == "staticd":
            warnings.append(f"static route needs staticd, which the twin does not run: {lines[0].strip()}")
        for daemon in DAEMONS:
            if owner in (daemon, "both"):
                out[daemon].extend(lines)
    return {d: "\n".join(lines) + "\n" for d, lines in out.items()}, warnings


def _read_from(path: Path, offset: int) -> list[str]:
    try:
        with path.open("rb") as fh:
            fh.seek(offset)
            return fh.read().decode(errors="replace").splitlines()
    except FileNotFoundError:
        return []


def config_complaints(log: Path, offset: int = 0) -> list[str]:
    """Every line of a daemon's log after byte `offset` saying that it refused (part of) its config file, without
    the timestamp and message ids: "Command returned Warning Config Failed on config line 5:  timers bgp 1 1"."""
    return [line.split("] ", 1)[-1] for line in _read_from(log, offset) if _COMPLAINT.search(line)]


def daemon_remarks(out: Path, offset: int = 0, limit: int = 10) -> list[str]:
    """What a daemon printed on stdout/stderr after byte `offset` other than log lines (FRR's reasons, "% ...")."""
    lines = [line.strip() for line in _read_from(out, offset) if line.strip() and not _LOG_LINE.match(line)]
    return lines[:limit]
