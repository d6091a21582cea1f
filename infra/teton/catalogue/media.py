"""The media model: what can join two ends, by the physics of each medium (docs/cabling.md, docs/sources.md
section 10).

An end is an `Electrical` interface: a switch cage from the box's port map (`teton.catalogue.ports`) or a host NIC
(`teton.catalogue.hosts`), with its form factor, its electrical lanes and the lane rates its SerDes run.  Media:

- a passive DAC has no electronics: both ends must run the same lane rate over the same lanes, and its reach falls
  with the lane rate (5 m at 25G, 3 m at 50G, 2 m at 100G);
- an active electrical cable (AEC) has a gearbox at each end: it joins any two ends of one speed (8 x 50G to
  4 x 100G), within its reach;
- an active optical cable (AOC) has no gearbox here: the lane rates must match, as on a DAC;
- optics are a module in each cage and a fibre cord between: the two modules must speak the same PMD on the fibre
  (DR4 to DR4, whatever each one's host side), the cord must be of the PMD's fibre type and carry its connector and
  polish, and the run must be within the shorter module's reach.  A twin-port module (QM9700's OSFP) feeds two
  ports, each with its own cord.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

LANE_RATES = (100, 50, 25, 10)
STANDARD_GBPS = (800, 400, 200, 100, 50, 40, 25, 10)

# Passive copper reach by lane rate, metres [S IEEE 802.3by/bj 5 m; 802.3cd 3 m; NVIDIA LinkX 100G-PAM4 DAC 2 m].
DAC_REACH_M = {100: 2.0, 50: 3.0, 25: 5.0, 10: 7.0}
# Active copper: no gearbox AEC reach is published in our sources; NVIDIA's active copper (ACC) reaches 4-5 m [P].
AEC_REACH_M = 5.0
AEC_POWER_W = 10.0         # both ends together [I: under 5 W per end on the one AEC data sheet found]
AOC_REACH_M = 30.0         # the longest stock AOC teton orders [I]


class Electrical(NamedTuple):
    """One end's electrical interface: a cage or a NIC port."""

    form_factor: str               # QSFP-DD, OSFP, QSFP56 ...
    lanes: int                     # electrical lanes it has
    lane_rates: tuple[int, ...]    # lane rates (Gb/s) its SerDes run, fastest first
    speeds: tuple[int, ...]        # speeds (Gb/s) it runs, fastest first
    twin: bool = False             # a twin-port cage: one module feeds two ports
    cage: str = ""                 # the cage's label on a switch ("" on a NIC)

    def modes(self, speed: int) -> list[tuple[int, int]]:
        """The (lanes, lane rate) it can run `speed` with, fastest lanes first."""
        return list(_modes(self.lanes, self.lane_rates, speed))

    def native(self, speed: int) -> tuple[int, int]:
        """How it runs `speed` on its own (the fastest lanes that carry it): what a module's host side takes."""
        modes = _modes(self.lanes, self.lane_rates, speed)
        return modes[0] if modes else (self.lanes, speed // max(1, self.lanes))

    def spell(self, speed: int, mode: tuple[int, int] | None = None) -> str:
        """"QSFP-DD 8x50G": its form factor and the lanes it runs `speed` with (`mode`, else its own)."""
        lanes, rate = mode or self.native(speed)
        return f"{self.form_factor} {lanes}x{rate}G"


@lru_cache(maxsize=1024)
def _modes(lanes: int, lane_rates: tuple[int, ...], speed: int) -> tuple[tuple[int, int], ...]:
    """`Electrical.modes`, worked out once per (lanes, lane rates, speed): asked for every end of every link."""
    return tuple((speed // r, r) for r in lane_rates if speed % r == 0 and speed // r <= lanes)


def rates_up_to(top: int) -> tuple[int, ...]:
    return tuple(r for r in LANE_RATES if r <= top)


class Pmd(NamedTuple):
    """An optical physical medium dependent: what two modules must share on the fibre."""

    name: str
    fibre: str             # SMF or MMF
    cord: str              # the fibre type a cord of it is: OS2, OM4
    connector: str         # connector and polish the module takes
    reach_m: float         # IEEE's reach (a module class may reach less, see MODULE_REACH_M)


PMDS = {   # docs/sources.md section 10
    "DR4": Pmd("DR4", "SMF", "OS2", "MPO-12/APC", 500),      # 400GBASE-DR4, 802.3bs [S]
    "FR4": Pmd("FR4", "SMF", "OS2", "LC/UPC", 2000),         # 400GBASE-FR4, 802.3cu [S]
    "LR4": Pmd("LR4", "SMF", "OS2", "LC/UPC", 6000),         # 400GBASE-LR4-6, 802.3cu [S]
    "SR8": Pmd("SR8", "MMF", "OM4", "MPO-16/APC", 100),      # 400GBASE-SR8, 802.3cm, 100 m OM4, MPO-16 [S]; APC [I]
    "SR4": Pmd("SR4", "MMF", "OM4", "MPO-12/APC", 50),       # NVIDIA MMA4Z00-NS400/-NS: 50 m OM4, MPO-12/APC [P]
}
FIBRES = {"OS2": "SMF", "OS1": "SMF", "OM3": "MMF", "OM4": "MMF", "OM5": "MMF"}
# A module class's own reach where it is shorter than its PMD's, and power (W): (form factor, PMD, twin-port).
MODULE_REACH_M = {("OSFP", "DR4", False): 100.0}           # NVIDIA MMS4X00-NS400: 100 m [P]
MODULE_POWER_W = {("OSFP", "DR4", False): 9.0, ("OSFP", "DR4", True): 17.0, ("OSFP", "SR4", False): 9.0,
                  ("OSFP", "SR4", True): 15.0, ("QSFP-DD", "DR4", False): 12.0, ("QSFP-DD", "FR4", False): 12.0,
                  ("QSFP-DD", "SR8", False): 8.0, ("OSFP", "FR4", False): 12.0}   # [P NVIDIA; S data sheets]
DEFAULT_MODULE_POWER_W = 12.0


def module_reach(form_factor: str, pmd: str, twin: bool) -> float:
    return MODULE_REACH_M.get((form_factor, pmd, twin), PMDS[pmd].reach_m)


def module_power(form_factor: str, pmd: str, twin: bool) -> float:
    return MODULE_POWER_W.get((form_factor, pmd, twin), DEFAULT_MODULE_POWER_W)


def shared_mode(a: Electrical, b: Electrical, speed: int) -> tuple[int, int] | None:
    """The (lanes, lane rate) both ends can run `speed` with, fastest first; None: no passive medium joins them."""
    theirs = set(b.modes(speed))
    return next((m for m in a.modes(speed) if m in theirs), None)


def mmf_pmd(e: Electrical, speed: int) -> str:
    """The multimode PMD a module in this end runs: SR8 on an 8-lane host side, SR4 on a 4-lane one."""
    return "SR8" if e.native(speed)[0] >= 8 else "SR4"


def smf_pmd(a: Electrical, b: Electrical, metres: float) -> str:
    """The single-mode PMD for a run: DR4 within both modules' reach, else FR4, else LR4."""
    if metres <= min(module_reach(a.form_factor, "DR4", a.twin), module_reach(b.form_factor, "DR4", b.twin)):
        return "DR4"
    return "FR4" if metres <= PMDS["FR4"].reach_m else "LR4"


def choose(a: Electrical, b: Electrical, speed: int, metres: float) -> str:
    """The cheapest medium that joins `a` and `b` at `speed` over `metres`: a DAC within its lane rate's reach, else
    an AEC within its reach, else single-mode optics."""
    mode = shared_mode(a, b, speed)
    if mode is not None and metres <= DAC_REACH_M.get(mode[1], 0.0):
        return "dac"
    if metres <= AEC_REACH_M:
        return "aec"
    return "smf"
