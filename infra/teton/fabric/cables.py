"""The physical cables of a fabric: one `Cable` per link, A->Z once (the lower tier or the server at A, as the
Fabric orients links), with what a technician orders and pulls: both ends' place (hall, row, rack, RU), the cage
each end plugs into (its label as printed on the box, from the box's port map) and its electrical interface, the
part at each end, the reach class, the cord, the run's length and its stock length class.

The medium is the design's (`teton.design.media`: a tier's `medium_down`, or the cheapest that joins both ends);
what it takes comes from the media model (`teton.catalogue.media`, docs/cabling.md):

- DAC, AEC and AOC: one assembly per cable, of the stock length that reaches (`teton.fabric.floor.length_class`),
  named by both ends' electrical interfaces ("400G QSFP-DD 8x50G to OSFP 4x100G AEC, 2.5 m");
- optics: a module in each cage, named by its host side and PMD ("400G QSFP-DD DR4", "800G OSFP twin-port 2xSR4"),
  and a cord of the PMD's fibre and connector ("MPO-12/APC OS2 cord, 30 m"); single-mode: DR4 within both modules'
  reach, else FR4, else LR4; multimode: SR8 on an 8-lane host side, SR4 on a 4-lane one; a tier's `optics_down`
  replaces any of these;
- a cage that holds two logical ports (`ports_per_cage: 2`, the QM9700's OSFP) takes one twin-port transceiver
  feeding both ports' cables: it is one module in the bill of materials, and each of the two cables names the other
  in its notes.

Rule `physical` (`teton.checks.physical_rules`) proves that each cable's medium can join its two ends.

A cable's id is its rack's name, the rack unit of the switch in that rack it plugs into, and that switch's port
(`z01-r001-45-016`: rack z01-r001, the switch at RU 45, port 16 of its model's port list): short enough for a label,
unique (no two devices share a rack unit, no two cables a port), and a function of the cable's place alone.  The
design gives every upper-tier port by the identity of what it joins (`teton.design.room`), so adding or removing a
zone, a rack, a host, an aggregator or a spine renumbers no existing cable.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from teton.catalogue.media import (
    AEC_POWER_W,
    AEC_REACH_M,
    AOC_REACH_M,
    DAC_REACH_M,
    FIBRES,
    PMDS,
    Electrical,
    mmf_pmd,
    module_power,
    module_reach,
    shared_mode,
    smf_pmd,
)
from teton.fabric.floor import FloorPlan, OpticRule, Place, length_class, link_m, places
from teton.fabric.model import Device, End, Fabric, Link
from teton.fabric.physical import Ends

OPTICAL = ("smf", "mmf")
COPPER = {"dac": "DAC", "aec": "AEC", "aoc": "AOC"}


class CableEnd(NamedTuple):
    device: str
    port: str
    rack: str
    ru: int
    row: int
    position: int
    form_factor: str      # the cage: QSFP-DD, OSFP ...
    optic: str            # the transceiver's part class ("" for DAC, AEC and AOC: the cable is the part)
    module: str           # what one transceiver is: "<device> <port>", or "<device> cage <n>" for a twin-port one
    model: str
    cage: str = ""        # the cage's label on the box ("" on a server's NIC)
    electrical: str = ""  # its electrical interface at the link's speed: "QSFP-DD 8x50G"
    pmd: str = ""         # the module's PMD on the fibre ("" where the cable is the part)
    reach_m: float = 0.0  # the module's reach (optics), else the assembly's


class Cable(NamedTuple):
    id: str
    kind: str
    zone: int | None
    rack: str             # the link's rack (the one its id starts with)
    site: str
    hall: str
    a: CableEnd
    b: CableEnd
    speed_gbps: int
    medium: str
    reach: str            # the PMD (DR4, FR4, LR4, SR8, SR4), or DAC, AEC, AOC
    fibre: str            # the cord: "OS2 SMF, MPO-12/APC", "twinax copper", "active optical"
    length_m: float
    length_class: float | None   # stock length; None when nothing stock reaches
    notes: str
    part: str = ""        # the assembly (DAC, AEC, AOC) or the cord, as ordered
    cord: str = ""        # optics: the cord's fibre type (OS2, OM4 ...)
    connector: str = ""   # optics: the cord's connector and polish (MPO-12/APC ...)


def cable_id(fabric: Fabric, link: Link, ordinal: int | None = None) -> str:
    """`<rack>-<RU>-<port>` of the switch end in the link's rack (the lower end when both are), else the lower end.
    `ordinal`: that end's port ordinal when the caller has it (else read from the device)."""
    end, device = cable_end(fabric, link)
    if ordinal is None:
        port = device.interface(end.port)
        ordinal = port.ordinal if port is not None else 0
    return cable_label(link, device, ordinal)


def cable_end(fabric: Fabric, link: Link) -> tuple[End, Device]:
    """The end a cable is named after, and its device: the switch end in the link's rack (the lower end when both
    are), else the lower end."""
    a, b = link.a, link.b
    da, db = fabric.device(a.device), fabric.device(b.device)
    if da.rack == link.rack and da.nos is not None:
        return a, da
    if db.rack == link.rack and db.nos is not None:
        return b, db
    return a, da


def cable_label(link: Link, device: Device, ordinal: int) -> str:
    """`<rack>-<RU>-<port>`: the id of `link`'s cable, named after its end on `device` (`cable_end`), port `ordinal`."""
    return f"{link.rack}-{device.ru:02d}-{ordinal:03d}"


_LAST: list[tuple[Fabric, list[Cable]]] = []


def cables(fabric: Fabric) -> list[Cable]:
    """Every link of `fabric` as a cable, in the design's link order (the last fabric's are kept: the plan, the BOM
    and the run list of one render ask for the same)."""
    if _LAST and _LAST[0][0] is fabric:
        return list(_LAST[0][1])
    found = _cables(fabric)
    _LAST[:] = [(fabric, found)]
    return list(found)


def kept_cables(fabric: Fabric) -> list[Cable] | None:
    """`cables(fabric)` if they are kept (made already in this process), else None: never made here."""
    return list(_LAST[0][1]) if _LAST and _LAST[0][0] is fabric else None


def module_part(speed: int, e: Electrical, pmd: str) -> str:
    """A transceiver's part class: "400G QSFP-DD DR4", "800G OSFP twin-port 2xSR4"."""
    return f"{2 * speed}G {e.form_factor} twin-port 2x{pmd}" if e.twin else f"{speed}G {e.form_factor} {pmd}"


def assembly_part(medium: str, speed: int, a: Electrical, b: Electrical, size: str) -> str:
    """A DAC, AEC or AOC as ordered: "400G QSFP-DD 8x50G to OSFP 4x100G AEC, 2.5 m" (a DAC or AOC by the lanes both
    ends run)."""
    mode = shared_mode(a, b, speed) if medium != "aec" else None
    sa, sb = (a.spell(speed, mode), b.spell(speed, mode))
    return f"{speed}G {sa if sa == sb else f'{sa} to {sb}'} {COPPER[medium]}, {size}"


class _Shape(NamedTuple):
    """What a cable is by its shape alone (`_cables`): every field that does not name a device, a port or a place."""

    stock: float | None
    size: str
    pmds: tuple[str, str]
    fibre: str
    part: str
    reach: str
    cord: str
    connector: str
    long: str                        # the note of a run longer than any stock length ("" when one reaches)
    ends: tuple[tuple[str, float, str], tuple[str, float, str]]   # per end: optic, reach_m, electrical spelling


def _shape(kind_rule: OpticRule | None, medium: str, speed: int, metres: float, ea: Electrical,
           eb: Electrical) -> _Shape:
    """The part of a cable that follows from its link's optic rule, medium and speed, its run and both ends'
    electrical interfaces (see `_cables`)."""
    optical = medium in OPTICAL
    stock = length_class(metres, dac=not optical)
    size = f"{stock:g} m" if stock is not None else f"{metres:g} m (custom)"
    rule = kind_rule
    pmds = ("", "")
    copper_m = 0.0
    mode = shared_mode(ea, eb, speed) if medium in ("dac", "aoc") else None
    fibre, part, reach = "twinax copper" if medium != "aoc" else "active optical", "", COPPER.get(
        medium, medium.upper())
    cord = connector = ""
    if optical:
        if rule is not None and rule.pmd:
            pmds = (rule.pmd, rule.pmd)
        elif medium == "smf":
            pmds = (smf_pmd(ea, eb, metres),) * 2
        else:
            pmds = (mmf_pmd(ea, speed), mmf_pmd(eb, speed))
        cord = (rule.cord if rule is not None and rule.cord else "") or PMDS[pmds[0]].cord
        connector = (rule.connector if rule is not None and rule.connector else "") or PMDS[pmds[0]].connector
        fibre = f"{cord} {FIBRES.get(cord, '')}, {connector}"
        part = f"{connector} {cord} cord, {size}"
        reach = pmds[0] if pmds[0] == pmds[1] else f"{pmds[0]}/{pmds[1]}"
    elif medium in COPPER:
        part = assembly_part(medium, speed, ea, eb, size)
        copper_m = {"aec": AEC_REACH_M, "aoc": AOC_REACH_M}.get(
            medium, DAC_REACH_M.get(mode[1], 0.0) if mode else 0.0)
    long = f"{metres} m is longer than any stock {'fibre' if optical else medium.upper()}" if stock is None else ""
    made = []
    for el, pmd in ((ea, pmds[0]), (eb, pmds[1])):
        optic, reach_m = "", copper_m
        if optical:
            optic = module_part(speed, el, pmd)
            reach_m = module_reach(el.form_factor, pmd, el.twin)
        made.append((optic, reach_m, el.spell(speed, mode)))
    return _Shape(stock, size, pmds, fibre, part, reach, cord, connector, long, (made[0], made[1]))


def _cables(fabric: Fabric) -> list[Cable]:
    """Every link as a `Cable`.  Most of a cable follows from its shape: the link's kind (its optic rule), medium,
    speed and run length and both ends' electrical interfaces (`_shape`: the stock length, PMDs, parts, fibre,
    each end's optic, reach and spelling); the 24k RoCE's 67,000 links have 8,300 shapes, so each is worked out once
    (keyed by the ends' `Electrical`s by identity: `Ends.both` gives one object per distinct end, kept alive by
    `ends` for the whole loop).  What is per link (names, places, the breakout notes, the module of a twin-port
    cage, the id) is made per link, each end's device, cage and port looked up once, and the id's end picked as
    `cable_end` picks it from the devices at hand.  24k RoCE: 0.83 s -> 0.49 s."""
    plan = fabric.floor or FloorPlan()
    where = places(plan, {d.rack for d in (*fabric.devices.values(), *fabric.externals.values())})
    ends = Ends(fabric.models)
    ordinals = {(d.name, i.name): i.ordinal for d in fabric.devices.values() for i in d.interfaces}
    rules = {r.kind: r for r in reversed(plan.optics)}       # `FloorPlan.optic_rule`: the first of a kind
    shapes: dict[tuple[str, str, int, float, int, int], _Shape] = {}
    device, site, hall = fabric.device, fabric.site, plan.hall
    out: list[Cable] = []
    for link in fabric.links:
        a, b, speed, medium = link.a, link.b, link.speed_gbps, link.medium
        da, db = device(a.device), device(b.device)
        pa, pb = where[da.rack], where[db.rack]
        metres = link_m(plan, where, da, db)
        ea, porta = ends.both(da, a.port)
        eb, portb = ends.both(db, b.port)
        key = (link.kind, medium, speed, metres, id(ea), id(eb))
        shape = shapes.get(key)
        if shape is None:
            shape = shapes[key] = _shape(rules.get(link.kind), medium, speed, metres, ea, eb)
        notes = [shape.long] if shape.long else []
        twin = medium in OPTICAL
        if porta is not None and speed < porta.speed_gbps:
            notes.append(f"{da.name} {a.port} runs at {speed}G of its {porta.speed_gbps}G (breakout)")
        if portb is not None and speed < portb.speed_gbps:
            notes.append(f"{db.name} {b.port} runs at {speed}G of its {portb.speed_gbps}G (breakout)")
        (optic_a, reach_a, spelled_a), (optic_b, reach_b, spelled_b) = shape.ends
        end_a = CableEnd(da.name, a.port, da.rack, da.ru, pa.row, pa.position, ea.form_factor, optic_a,
                         f"{da.name} cage {ea.cage}" if twin and ea.twin else f"{da.name} {a.port}", da.model,
                         ea.cage, spelled_a, shape.pmds[0], reach_a)
        end_b = CableEnd(db.name, b.port, db.rack, db.ru, pb.row, pb.position, eb.form_factor, optic_b,
                         f"{db.name} cage {eb.cage}" if twin and eb.twin else f"{db.name} {b.port}", db.model,
                         eb.cage, spelled_b, shape.pmds[1], reach_b)
        if da.rack == link.rack and da.nos is not None:      # `cable_end`
            named, on = a, da
        elif db.rack == link.rack and db.nos is not None:
            named, on = b, db
        else:
            named, on = a, da
        out.append(Cable(cable_label(link, on, ordinals.get((named.device, named.port), 0)), link.kind, link.zone,
                         link.rack, site, hall, end_a, end_b, speed, medium, shape.reach, shape.fibre, metres,
                         shape.stock, "; ".join(notes), shape.part, shape.cord, shape.connector))
    return _twin_notes(out)


def _twin_notes(out: list[Cable]) -> list[Cable]:
    """The cables of one twin-port module take one PMD (the longest reach any of them needs, through every module
    they share), and each names the module and the other cable it feeds."""
    sharing: dict[str, list[int]] = {}
    for n, c in enumerate(out):
        for e in (c.a, c.b):
            if " cage " in e.module:
                sharing.setdefault(e.module, []).append(n)
    if not sharing:
        return out
    rank = {"DR4": 0, "FR4": 1, "LR4": 2}
    changed = True
    while changed:
        changed = False
        for members in sharing.values():
            need = max((out[n].reach for n in members), key=lambda r: rank.get(r, -1))
            for n in members:
                if out[n].reach != need and need in rank and out[n].reach in rank:
                    out[n] = _with_pmd(out[n], need)
                    changed = True
    done = []
    for c in out:
        extra = []
        for e in (c.a, c.b):
            if e.module in sharing:
                others = [out[x].id for x in sharing[e.module] if out[x].id != c.id]
                extra.append(f"{e.module}: one twin-port {e.optic} module, "
                             f"{'with cable ' + ', '.join(others) if others else 'its other port unused'}")
        done.append(c._replace(notes="; ".join(x for x in (c.notes, *extra) if x)))
    return done


def _with_pmd(c: Cable, pmd: str) -> Cable:
    def end(e: CableEnd) -> CableEnd:
        return e._replace(optic=e.optic.replace(e.pmd, pmd), pmd=pmd,
                          reach_m=module_reach(e.form_factor, pmd, " cage " in e.module))
    spec = PMDS[pmd]
    size = c.part.rsplit(", ", 1)[-1]
    return c._replace(reach=pmd, fibre=f"{spec.cord} {spec.fibre}, {spec.connector}", a=end(c.a), b=end(c.b),
                      part=f"{spec.connector} {spec.cord} cord, {size}", cord=spec.cord, connector=spec.connector)


class Counts(NamedTuple):
    optics: dict[str, int]          # transceiver modules by part class
    dacs: dict[str, int]            # DAC assemblies by part ("400G QSFP-DD 8x50G DAC, 2 m")
    aocs: dict[str, int]
    fibres: dict[str, int]          # fibre patch cords by type, connector and stock length
    aecs: dict[str, int]            # active electrical cables by part
    specs: dict[str, tuple[float, float]]   # per part class: (reach in m, power in W of one part; 0: draws none)


def counts(found: Iterable[Cable]) -> Counts:
    """What to order: one module per distinct transceiver (a twin-port one once for its two cables), one assembly
    per DAC, AEC or AOC, one cord per optical cable."""
    modules: dict[str, str] = {}
    parts: dict[str, Counter[str]] = {"dac": Counter(), "aec": Counter(), "aoc": Counter(), "cord": Counter()}
    specs: dict[str, tuple[float, float]] = {}
    for c in found:
        if c.medium in OPTICAL:
            for e in (c.a, c.b):
                modules[e.module] = e.optic
                specs[e.optic] = (e.reach_m, module_power(e.form_factor, e.pmd, " cage " in e.module))
            parts["cord"][c.part] += 1
        else:
            parts.get(c.medium, parts["aoc"])[c.part] += 1
            specs[c.part] = (c.a.reach_m, AEC_POWER_W if c.medium == "aec" else 0.0)
    return Counts(dict(sorted(Counter(modules.values()).items())), dict(sorted(parts["dac"].items())),
                  dict(sorted(parts["aoc"].items())), dict(sorted(parts["cord"].items())),
                  dict(sorted(parts["aec"].items())), dict(sorted(specs.items())))


__all__ = ["Cable", "CableEnd", "Counts", "Place", "cable_id", "cables", "counts", "kept_cables"]
