"""The host-platform catalogue (hosts.yaml): each server platform's NICs by name and PCI address.

The host playbooks name every NIC from it (a systemd .link file per NIC, matched on its PCI path), so the names the
build uses (be0..be7, fe0, fe1) exist on the host before systemd-networkd reads the .network files.  The addresses
are placeholders until a site fills in its own (hosts.yaml says where they come from).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import NamedTuple

import yaml

from teton.catalogue.media import STANDARD_GBPS, Electrical, rates_up_to

_BUILTIN = Path(__file__).with_name("hosts.yaml")


class NicPort(NamedTuple):
    """A platform's NIC port as the media model sees it."""

    form_factor: str
    lanes: int
    lane_gbps: int      # the fastest lane rate
    model: str


class HostNic(NamedTuple):
    name: str      # interface name the build uses, e.g. be0
    pci: str       # PCI address, domain:bus:device.function


@cache
def host_platforms() -> dict[str, tuple[HostNic, ...]]:
    """{platform: its NICs in catalogue order}."""
    entries = yaml.safe_load(_BUILTIN.read_text(encoding="utf-8"))
    return {e["name"]: tuple(HostNic(n["name"], n["pci"]) for n in e["nics"]) for e in entries}


@cache
def nic_ports() -> dict[str, NicPort]:
    """{platform: the electrical interface of its NICs' ports}."""
    entries = yaml.safe_load(_BUILTIN.read_text(encoding="utf-8"))
    return {e["name"]: NicPort(e["nic_port"]["form_factor"], int(e["nic_port"]["lanes"]),
                               int(e["nic_port"]["lane_gbps"]), e["nic_port"]["model"]) for e in entries}


def nic_port(platform: str) -> Electrical:
    """The port of `platform`'s NICs (a ConnectX-7 class OSFP where the catalogue does not know the platform)."""
    p = nic_ports().get(platform) or NicPort("OSFP", 4, 100, "ConnectX-7 class [I]")
    return Electrical(p.form_factor, p.lanes, rates_up_to(p.lane_gbps),
                      tuple(s for s in STANDARD_GBPS if s <= p.lanes * p.lane_gbps))


def nic_links(platform: str, names: list[str]) -> tuple[HostNic, ...]:
    """The catalogue's NICs of `platform` that carry the names in `names` (in that order); a name the catalogue
    does not list is left out (rule host-nic-unknown reports it)."""
    by_name = _nics_by_name(platform)
    return tuple(by_name[n] for n in names if n in by_name)


@cache
def _nics_by_name(platform: str) -> dict[str, HostNic]:
    """{NIC name: the NIC} of `platform` (`nic_links`: once per platform, not per host)."""
    return {n.name: n for n in host_platforms().get(platform, ())}
