"""A box's ports as FBOSS's platform mapping describes them, and the port namings FBOSS gives the catalogue's models.

The platform mapping (thrift `PlatformMapping`) keys every port by its logical id: its name (`eth<pim>/<port>/<lane>`),
its controlling port, and per supported speed profile the ports that profile subsumes.  `platformSupportedProfiles`
gives each profile's speed and lanes.  The profile names (`PROFILE_400G_8_PAM4_RS544X2N_COPPER`) are the IDL's enum.

Namings (registered by the target as `fboss-fuji` and `fboss-wedge400`):
- Minipack2 (`fuji`) with 16Q PIMs: a PIM has 16 cages, eth<pim>/1/1 .. eth<pim>/16/1; a 400G port takes eight
  lanes and so the odd cages only (eth<pim>/1/1, /3/1 ... /15/1, each subsuming the even cage after it).  The
  catalogue places its ports on the box's cages (`teton.catalogue.boxes`), so the name is eth<slot>/<cage>/1.
- Wedge400: eth1/1/1 .. eth1/16/1 are the 400G QSFP-DD cages, eth1/17/1 .. eth1/48/1 the 200G QSFP56 ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from teton.catalogue.naming import PortPlace


def fuji_port_name(p: PortPlace) -> str:
    """Minipack2 under FBOSS: eth<pim>/<cage>/1 (the catalogue places the ports on the box's cages)."""
    return f"eth{p.slot}/{p.position}/1"


def wedge400_port_name(p: PortPlace) -> str:
    """Wedge400 under FBOSS: eth1/<cage>/1."""
    return f"eth1/{p.position}/1"


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
    lanes: dict[int, tuple[int, ...]]      # supported profile -> the ASIC's SerDes lanes (core id x 8 + lane)
    transceiver: dict[int, int]            # supported profile -> lanes of the cage it uses


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
        want = "COPPER" if medium in ("dac", "aec") else "OPTICAL"   # an AEC is a copper cable to the cage
        return next((p for p in fits if p.medium == want), fits[0] if fits else None)

    def fastest(self, port: PlatformPort) -> int | None:
        """The profile running `port` at its top speed (the most lanes at that speed)."""
        known = [p for p in sorted(port.profiles) if p in self.profiles]
        return max(known, key=lambda p: (self.profiles[p].speed_mbps, len(port.lanes.get(p, ()))), default=None)

    def speeds(self, port: PlatformPort) -> list[int]:
        """The speeds (Gb/s) the port's profiles run at, fastest first."""
        return sorted({self.profiles[p].speed_mbps // 1000 for p in port.profiles if p in self.profiles},
                      reverse=True)


CORE_LANES = 8   # a Tomahawk SerDes core (chip type ASIC, `BC<n>`) has eight lanes: lane l of core n is n x 8 + l


def _medium(enum_name: str) -> str:
    for m in ("COPPER", "OPTICAL"):
        if m in enum_name.split("_"):
            return m
    return ""


def platform_map(platform: str, mapping: dict[str, Any], profile_names: dict[int, str]) -> PlatformMap:
    """The ports of `mapping` (FBOSS's PlatformMapping JSON); `profile_names`: PortProfileID's values."""
    ports: dict[str, PlatformPort] = {}
    by_id: dict[int, PlatformPort] = {}
    cores = {str(c["name"]): int(c["physicalID"]) for c in mapping.get("chips", []) if c.get("type") == 1}
    for key, entry in mapping.get("ports", {}).items():
        m = entry["mapping"]
        configs = entry.get("supportedProfiles", {})
        supported = {int(p): tuple(int(s) for s in cfg.get("subsumedPorts", [])) for p, cfg in configs.items()}
        lanes = {int(p): tuple(cores.get(x["id"]["chip"], 0) * CORE_LANES + int(x["id"]["lane"])
                               for x in cfg.get("pins", {}).get("iphy", [])) for p, cfg in configs.items()}
        tcvr = {int(p): len(cfg.get("pins", {}).get("transceiver", [])) for p, cfg in configs.items()}
        port = PlatformPort(int(m.get("id", key)), str(m["name"]), int(m.get("controllingPort", key)), supported,
                            lanes, tcvr)
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
