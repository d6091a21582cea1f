"""Rule `physical`: every cable's medium can join its two ends (docs/cabling.md, the media model in
`teton.catalogue.media`).

Per cable: each switch end's cage runs the link's speed (the box's port map); a passive DAC or an AOC joins ends that
run the same lanes at the same rate, within passive copper's reach at that rate; an AEC within its reach; optics: both
modules speak one PMD, each PMD has a module for its cage's host side, the cord is of the PMD's fibre type and takes
its connector and polish, and the run is within the shorter module's reach.  A problem shared by many cables is one
finding naming the first cable (id, both ends, what is wrong, what would work) and how many more.
"""

from __future__ import annotations

from collections.abc import Iterator

from teton.catalogue.media import AEC_REACH_M, AOC_REACH_M, DAC_REACH_M, FIBRES, PMDS, shared_mode
from teton.fabric.cables import OPTICAL, Cable, CableEnd, cables
from teton.fabric.model import Fabric
from teton.fabric.physical import Ends, Placed, tier_path
from teton.findings import Finding

HOST_SIDE_PMDS = {8: ("DR4", "FR4", "LR4", "SR8"), 4: ("DR4", "FR4", "LR4", "SR4")}


def _ends(c: Cable) -> str:
    def one(e: CableEnd) -> str:
        cage = f" cage {e.cage}" if e.cage else ""
        return f"{e.device} {e.port}{cage} ({e.electrical})"
    return f"cable {c.id} ({one(c.a)} - {one(c.b)}, {c.length_m:g} m)"


def physical(f: Fabric, file: str) -> Iterator[Finding]:
    """Each cable's problems (`_problems`), grouped by spec path and problem.  Each end's device, cage and port are
    looked up once per cable (`Ends.both`) and a tier's `medium_down` path once per role: a 24k fabric has 67,000
    cables."""
    ends = Ends(f.models)
    grouped: dict[tuple[str, str], list[tuple[Cable, str]]] = {}
    paths: dict[str, str] = {}
    device = f.device
    for c in cables(f):
        da, db = device(c.a.device), device(c.b.device)
        medium_path = paths.get(db.role)
        if medium_path is None:
            medium_path = paths[db.role] = f"{tier_path(db.role)}.medium_down"
        for path, problem, fix in _problems(ends, c, da, db, medium_path):
            grouped.setdefault((path, problem), []).append((c, fix))
    for (path, problem), found in sorted(grouped.items()):
        c, fix = found[0]
        more = f" (and {len(found) - 1} more cables like it)" if len(found) > 1 else ""
        yield Finding(file, path, f"{_ends(c)}: {problem}{more}; {fix}", rule="physical")


def _problems(ends: Ends, c: Cable, da: Placed, db: Placed, medium_path: str) -> Iterator[tuple[str, str, str]]:
    """What is wrong with cable `c`, whose ends are on devices `da` and `db`."""
    ea, port_a = ends.both(da, c.a.port)
    eb, port_b = ends.both(db, c.b.port)
    for d, port in ((da, port_a), (db, port_b)):
        if port is not None and port.speeds and c.speed_gbps not in port.speeds:
            yield (f"{tier_path(d.role)}.model", f"cage {port.cage} of {d.model} does not run {c.speed_gbps}G "
                   f"(it runs {', '.join(f'{s}G' for s in port.speeds)}), so no {c.speed_gbps}G module or cable "
                   "works there", "place the port on a cage that runs it (the box's port map) or run the link slower")
    if c.medium in ("dac", "aoc"):
        mode = shared_mode(ea, eb, c.speed_gbps)
        kind = "a passive DAC" if c.medium == "dac" else "an AOC without a gearbox"
        if mode is None:
            yield (medium_path, f"{kind} cannot join {c.a.electrical} to {c.b.electrical}: the two ends run "
                   "different lane rates or counts", "use an AEC (its gearbox converts lanes) within "
                   f"{AEC_REACH_M:g} m, or optics that speak one PMD at both ends (smf: DR4)")
            return
        reach = DAC_REACH_M.get(mode[1], 0.0) if c.medium == "dac" else AOC_REACH_M
        ordered = c.length_class if c.length_class is not None else c.length_m
        if ordered > reach:
            yield (medium_path, f"a {ordered:g} m {c.medium.upper()} at {mode[1]}G a lane is past its reach of "
                   f"{reach:g} m", f"use an AEC within {AEC_REACH_M:g} m, else optics (smf)")
    elif c.medium == "aec":
        ordered = c.length_class if c.length_class is not None else c.length_m
        if ordered > AEC_REACH_M:
            yield (medium_path, f"a {ordered:g} m AEC is past active copper's reach of {AEC_REACH_M:g} m",
                   "use optics (smf)")
    elif c.medium in OPTICAL:
        yield from _optics(c, ea.native(c.speed_gbps)[0], eb.native(c.speed_gbps)[0], medium_path)


def _optics(c: Cable, lanes_a: int, lanes_b: int, medium_path: str) -> Iterator[tuple[str, str, str]]:
    optics_path = medium_path.replace(".medium_down", ".optics_down")
    a, b = c.a, c.b
    if a.pmd != b.pmd:
        yield (medium_path, f"a {a.optic} module cannot talk to a {b.optic} module: optics must speak the same PMD "
               "on the fibre", "use single-mode optics (smf: DR4 at both ends) or an AEC within "
               f"{AEC_REACH_M:g} m")
        return
    for e, lanes in ((a, lanes_a), (b, lanes_b)):
        if e.pmd not in HOST_SIDE_PMDS.get(lanes, (e.pmd,)):
            yield (f"{optics_path}.pmd", f"no {e.pmd} module has the {e.electrical} host side of {e.device} "
                   f"{e.port}", f"use {' or '.join(HOST_SIDE_PMDS[lanes])}")
    pmd = PMDS[a.pmd]
    if FIBRES.get(c.cord) != pmd.fibre:
        kind = {"MMF": "multimode", "SMF": "single-mode"}
        yield (f"{optics_path}.cord", f"a {kind[pmd.fibre]} {a.pmd} optic on {c.cord} "
               f"{kind.get(FIBRES.get(c.cord, ''), '')} fibre", f"use {pmd.cord} cords, or optics for {c.cord}")
    if c.connector != pmd.connector:
        polish = c.connector.split("/")[-1], pmd.connector.split("/")[-1]
        why = (f"{polish[0]} and {polish[1]} polish do not mate" if polish[0] != polish[1]
               else f"the module takes {pmd.connector}")
        yield (f"{optics_path}.connector", f"a {c.connector} cord on {a.optic} modules ({pmd.connector}): {why}",
               f"order {pmd.connector} {pmd.cord} cords")
    reach = min(a.reach_m, b.reach_m)
    if c.length_m > reach:
        yield (optics_path if c.medium == "mmf" else medium_path,
               f"{c.length_m:g} m is past the {a.optic if a.reach_m <= b.reach_m else b.optic} module's reach of "
               f"{reach:g} m", "use a longer-reach PMD (FR4 to 2 km, LR4 to 6 km) on single-mode fibre")
