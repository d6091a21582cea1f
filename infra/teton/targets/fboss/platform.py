"""A box's ports as FBOSS's platform mapping describes them, and the port namings FBOSS gives the catalogue's models.

The platform mapping (thrift `PlatformMapping`) keys every port by its logical id: its name (`eth<pim>/<port>/<lane>`),
its controlling port, and per supported speed profile the ports that profile subsumes.  `platformSupportedProfiles`
gives each profile's speed and lanes.  The profile names (`PROFILE_400G_8_PAM4_RS544X2N_COPPER`) are the IDL's enum.

Namings (registered by the target as `fboss-fuji` and `fboss-wedge400`):
- Minipack2 (`fuji`) with 16Q PIMs: a PIM has 16 QSFP56 ports, eth<pim>/1/1 .. eth<pim>/16/1; a 400G port takes eight
  lanes and so the odd ports only (eth<pim>/1/1, /3/1 ... /15/1, each subsuming the even port after it).  The
  catalogue's 64 x 400G Minipack2 (8 per PIM, PIMs 2-9) is therefore eth<slot>/<2 * position - 1>/1.
- Wedge400: eth1/1/1 .. eth1/16/1 are the 400G QSFP-DD ports, eth1/17/1 .. eth1/48/1 the 200G QSFP56 ones, in the
  catalogue's port order.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from teton.catalogue.naming import PortPlace


def fuji_port_name(p: PortPlace) -> str:
    """Minipack2 under FBOSS (16Q PIMs, a 400G port on every odd cage): eth<pim>/<2 * position - 1>/1."""
    return f"eth{p.slot}/{2 * p.position - 1}/1"


def wedge400_port_name(p: PortPlace) -> str:
    """Wedge400 under FBOSS: eth1/<port>/1 in the front panel's order (400G first, then 200G)."""
    return f"eth1/{p.index + 1}/1"


NAMINGS = {"fboss-fuji": fuji_port_name, "fboss-wedge400": wedge400_port_name}


@dataclass(frozen=True)
class Profile:
    id: int
    speed_mbps: int
    lanes: int
    medium: str          # COPPER, OPTICAL or "" (from the profile's enum name)


@dataclass(frozen=True)
class PlatformPort:
    id: int
    name: str
    controlling: int
    profiles: dict[int, tuple[int, ...]]   # supported profile -> the logical ids it subsumes


@dataclass(frozen=True)
class PlatformMap:
    platform: str
    ports: dict[str, PlatformPort]         # by name
    by_id: dict[int, PlatformPort]
    profiles: dict[int, Profile]           # the platform's supported profiles

    def profile_for(self, port: PlatformPort, speed_gbps: int, medium: str) -> Profile | None:
        """The profile to run `port` at `speed_gbps` over `medium` (copper for DAC, else optical): one the port
        supports at that speed, of that medium where there is one."""
        fits = [self.profiles[p] for p in sorted(port.profiles) if p in self.profiles
                and self.profiles[p].speed_mbps == speed_gbps * 1000]
        want = "COPPER" if medium == "dac" else "OPTICAL"
        return next((p for p in fits if p.medium == want), fits[0] if fits else None)

    def speeds(self, port: PlatformPort) -> list[int]:
        """The speeds (Gb/s) the port's profiles run at, fastest first."""
        return sorted({self.profiles[p].speed_mbps // 1000 for p in port.profiles if p in self.profiles},
                      reverse=True)


def _medium(enum_name: str) -> str:
    for m in ("COPPER", "OPTICAL"):
        if m in enum_name.split("_"):
            return m
    return ""


def platform_map(platform: str, mapping: dict[str, Any], profile_names: dict[int, str]) -> PlatformMap:
    """The ports of `mapping` (FBOSS's PlatformMapping JSON); `profile_names`: PortProfileID's values."""
    ports: dict[str, PlatformPort] = {}
    by_id: dict[int, PlatformPort] = {}
    for key, entry in mapping.get("ports", {}).items():
        m = entry["mapping"]
        supported = {int(p): tuple(int(s) for s in cfg.get("subsumedPorts", []))
                     for p, cfg in entry.get("supportedProfiles", {}).items()}
        port = PlatformPort(int(m.get("id", key)), str(m["name"]), int(m.get("controllingPort", key)), supported)
        ports[port.name] = port
        by_id[port.id] = port
    profiles = {}
    for e in mapping.get("platformSupportedProfiles", []):
        pid = int(e["factor"]["profileID"])
        if pid in profiles:
            continue   # a profile listed again for other PIMs: same speed and lanes
        prof = e["profile"]
        profiles[pid] = Profile(pid, int(prof["speed"]), int(prof.get("iphy", {}).get("numLanes", 0)),
                                _medium(profile_names.get(pid, "")))
    return PlatformMap(platform, ports, by_id, profiles)
