"""The floor (`floor:`): where the racks stand and how much power each may draw.

Cable lengths come from it (`teton.fabric.floor` places every rack on a grid of rows and measures each run through
the overhead trays), and so do the run list's length classes and the bill of materials' DAC and fibre lengths.  Every
field has a default, so a spec without `floor:` is laid out on a 16-racks-a-row hall and has no power budget (rule
`rack-power` checks only a budget the spec declares).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from teton.spec.base import SpecModel
from teton.spec.grammar import TEXT_PATTERN, Name

Pmd = Literal["DR4", "FR4", "LR4", "SR8", "SR4"]
FibreType = Literal["OS2", "OS1", "OM3", "OM4", "OM5"]
Connector = Literal["MPO-12/APC", "MPO-12/UPC", "MPO-16/APC", "MPO-16/UPC", "LC/UPC", "LC/APC"]
PART_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ./,:()+_x-]{0,119}$"
"""A part class as the run list and the bill of materials spell it ("400G QSFP-DD DR4")."""


class OpticChoice(SpecModel):
    """What a tier's optical downlinks use where teton should not choose: the PMD both modules speak, and the cord."""

    pmd: Pmd | None = Field(default=None, description="optical PMD of both modules; default: DR4, FR4 or LR4 by the "
                            "run's length on single-mode fibre, SR8 or SR4 by the cage's lanes on multimode")
    cord: FibreType | None = Field(default=None, description="fibre type of the patch cords; default: the PMD's "
                                   "(OS2 single-mode, OM4 multimode)")
    connector: Connector | None = Field(default=None, description="connector and polish of the cords; default: "
                                        "the one the modules take (MPO-12/APC for DR4 and SR4, LC/UPC for FR4)")

RACK_PATTERN = r"^[a-z0-9*?][a-z0-9*?-]{0,63}$"
"""A rack's name, or an fnmatch pattern of names ('*' and '?'): `core-n*`."""


class Floor(SpecModel):
    """A hall of rows of racks: each zone's compute rows with its network racks in a row in their middle, then the
    racks of zone 0 (storage, service, aggregation, spines), each group from a new row."""

    hall: Name = Field(default="hall1", description="the data hall's name, in the run list")
    racks_per_row: int = Field(default=16, ge=1, le=256, description="racks in one row")
    row_pitch_m: float = Field(default=3.0, gt=0, le=100, description="from one row to the next (a cold and a hot "
                               "aisle with the racks' depth)")
    rack_width_m: float = Field(default=0.6, gt=0, le=10, description="width of one rack (the distance along a row)")
    tray_m: float = Field(default=0.6, ge=0, le=20, description="from a rack's top to the overhead cable tray")
    slack_m: float = Field(default=2.0, ge=0, le=100, description="service loop added to every run between racks")
    rows_per_zone: int | None = Field(default=None, ge=1, le=999, description="compute rows of each zone; default: "
                                      "what the room's racks per zone fill, so growing a zone moves no other rack")
    rack_power_kw: float | None = Field(default=None, gt=0, le=1000, description="power budget of every rack "
                                        "(ORv3 racks: about 30 kW); unset: no rack is checked")
    rack_power: dict[Annotated[str, Field(pattern=RACK_PATTERN)], Annotated[float, Field(gt=0, le=1000)]] = Field(
        default_factory=dict, max_length=256, description="budget in kW of the racks a name or fnmatch pattern "
        "names (`core-n*: 60`), replacing rack_power_kw; a rack's own name wins over a pattern, a longer pattern "
        "over a shorter one")
    parts: dict[Annotated[str, Field(pattern=PART_PATTERN)], Annotated[str, Field(pattern=TEXT_PATTERN,
                                                                                    max_length=120)]] = Field(
        default_factory=dict, max_length=1024, description="the site's own part number for a part class of the run "
        "list and the bill of materials (`400G OSFP DR4: MMS4X00-NS400`)")
