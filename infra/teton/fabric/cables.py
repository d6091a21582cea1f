"""The physical cables of a fabric: one `Cable` per link, A->Z once (the lower tier or the server at A, as the
Fabric orients links), with what a technician orders and pulls: both ends' place (hall, row, rack, RU), the cage's form
factor, the transceiver's part class, the reach class, the fibre, the run's length and its stock length class.

What each end takes (the choices are [I], written down in docs/cabling.md):

- DAC and AOC: one assembly per cable, of the stock length that reaches (`teton.fabric.floor.length_class`);
- single-mode fibre: DR4 (MPO-12 APC, 500 m), else FR4 (duplex LC, 2 km), else LR4 (10 km), chosen by the run's
  length; multimode: SR8 on an 8-lane port (MPO-16, 100 m on OM4), SR4 on a 4-lane one (MPO-12, 50 m);
- a cage that holds two logical ports (`ports_per_cage: 2`, the QM9700's OSFP) takes one twin-port transceiver
  (`2xDR4`, `2xSR4`) feeding both ports' cables: it is one module in the bill of materials, and each of the two
  cables names the other in its notes;
- a server's NIC is an OSFP cage at 400G, QSFP56 at 200G and QSFP28 at 100G [I: ConnectX-7 class].

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

from teton.fabric.floor import FloorPlan, Place, length_class, places, run_m
from teton.fabric.model import Device, Fabric, Link
from teton.fabric.roles import server_roles
from teton.spec.model import SwitchModel

OPTICAL = ("smf", "mmf")
NIC_FORM_FACTOR = {400: "OSFP", 200: "QSFP56", 100: "QSFP28"}   # [I] a ConnectX-7 class NIC
NIC_LANES = 4
REACH_M = {"DR4": 500, "FR4": 2000, "LR4": 10000, "SR8": 100, "SR4": 50}
FIBRE = {"DR4": "OS2 SMF, MPO-12 APC", "FR4": "OS2 SMF, duplex LC", "LR4": "OS2 SMF, duplex LC",
         "SR8": "OM4 MMF, MPO-16", "SR4": "OM4 MMF, MPO-12", "DAC": "twinax copper", "AOC": "active optical"}


class CableEnd(NamedTuple):
    device: str
    port: str
    rack: str
    ru: int
    row: int
    position: int
    form_factor: str      # the cage: QSFP-DD, OSFP ...
    optic: str            # the transceiver's part class ("" for DAC and AOC: the cable is the part)
    module: str           # what one transceiver is: "<device> <port>", or "<device> cage <n>" for a twin-port one
    model: str


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
    reach: str            # DR4, FR4, LR4, SR8, SR4, DAC, AOC
    fibre: str
    length_m: float
    length_class: float | None   # stock length; None when nothing stock reaches
    notes: str


def cable_id(fabric: Fabric, link: Link, ordinal: int | None = None) -> str:
    """`<rack>-<RU>-<port>` of the switch end in the link's rack (the lower end when both are), else the lower end.
    `ordinal`: that end's port ordinal when the caller has it (else read from the device)."""
    ends = [e for e in (link.a, link.b) if fabric.devices[e.device].rack == link.rack
            and fabric.devices[e.device].nos is not None] or [link.a]
    device = fabric.devices[ends[0].device]
    if ordinal is None:
        port = device.interface(ends[0].port)
        ordinal = port.ordinal if port is not None else 0
    return f"{link.rack}-{device.ru:02d}-{ordinal:03d}"


def _port_shape(model: SwitchModel, ordinal: int) -> tuple[str, int, int, int, bool]:
    """(form factor, lanes, native speed, cage number, twin-port cage) of port `ordinal` of `model`; cages count
    from 1."""
    first, cage0 = 0, 0
    for g in model.port_groups:
        if ordinal < first + g.count:
            return (g.form_factor, g.lanes, g.speed_gbps, cage0 + (ordinal - first) // g.ports_per_cage + 1,
                    g.ports_per_cage > 1)
        first += g.count
        cage0 += -(-g.count // g.ports_per_cage)
    return "?", NIC_LANES, 0, 0, False


def _reach(medium: str, metres: float, lanes: int) -> str:
    if medium == "dac":
        return "DAC"
    if medium == "aoc":
        return "AOC"
    if medium == "mmf":
        return "SR8" if lanes >= 8 else "SR4"
    return "DR4" if metres <= REACH_M["DR4"] else "FR4" if metres <= REACH_M["FR4"] else "LR4"


_SERVERS = server_roles()


class _Ends:
    """Per device: ordinals by port, and the model (None for a server)."""

    def __init__(self, fabric: Fabric):
        self.fabric = fabric
        self.ordinal = {(d.name, i.name): i.ordinal for d in fabric.devices.values() for i in d.interfaces}

    def shape(self, d: Device, port: str, speed: int) -> tuple[str, int, int, int, bool]:
        """(form factor, lanes, native speed, cage, twin-port) of one end."""
        model = self.fabric.models.get(d.model) if d.role not in _SERVERS else None
        if model is None:
            return NIC_FORM_FACTOR.get(speed, "OSFP"), NIC_LANES, speed, 0, False
        return _port_shape(model, self.ordinal.get((d.name, port), 0))


_LAST: list[tuple[Fabric, list[Cable]]] = []


def cables(fabric: Fabric) -> list[Cable]:
    """Every link of `fabric` as a cable, in the design's link order (the last fabric's are kept: the plan, the BOM
    and the run list of one render ask for the same)."""
    if _LAST and _LAST[0][0] is fabric:
        return list(_LAST[0][1])
    found = _cables(fabric)
    _LAST[:] = [(fabric, found)]
    return list(found)


def _cables(fabric: Fabric) -> list[Cable]:
    plan = fabric.floor or FloorPlan()
    where = places(plan, {d.rack for d in fabric.devices.values()})
    ends = _Ends(fabric)
    out: list[Cable] = []
    for link in fabric.links:
        da, db = fabric.devices[link.a.device], fabric.devices[link.b.device]
        pa, pb = where[da.rack], where[db.rack]
        metres = round(run_m(plan, pa, da.ru + da.height_ru / 2, pb, db.ru + db.height_ru / 2, da.rack == db.rack), 1)
        sa, sb = ends.shape(da, link.a.port, link.speed_gbps), ends.shape(db, link.b.port, link.speed_gbps)
        switch_lanes = sa[1] if da.role not in _SERVERS else sb[1]
        reach = _reach(link.medium, metres, switch_lanes)
        notes = []
        optical = link.medium in OPTICAL
        stock = length_class(metres, dac=link.medium == "dac")
        if stock is None:
            notes.append(f"{metres} m is longer than any stock {link.medium.upper()}")
        if optical and metres > REACH_M[reach]:
            notes.append(f"{metres} m is past {reach}'s reach of {REACH_M[reach]} m")
        made = []
        for d, e, (ff, _, native, cage, twin), place in ((da, link.a, sa, pa), (db, link.b, sb, pb)):
            optic = ""
            module = f"{d.name} {e.port}"
            if optical:
                optic = f"{link.speed_gbps}G {ff} {'2x' + reach + ' twin-port' if twin else reach}"
                if twin:
                    module = f"{d.name} cage {cage}"
            if native and link.speed_gbps < native:
                notes.append(f"{d.name} {e.port} runs at {link.speed_gbps}G of its {native}G (breakout)")
            made.append(CableEnd(d.name, e.port, d.rack, d.ru, place.row, place.position, ff, optic, module,
                                 d.model))
        ordinal = ends.ordinal.get((link.a.device, link.a.port), 0)
        own = [e for e in (link.a, link.b) if fabric.devices[e.device].rack == link.rack
               and fabric.devices[e.device].nos is not None]
        if own:
            ordinal = ends.ordinal.get((own[0].device, own[0].port), 0)
        out.append(Cable(cable_id(fabric, link, ordinal), link.kind, link.zone, link.rack, fabric.site, plan.hall,
                         made[0], made[1], link.speed_gbps, link.medium, reach, FIBRE[reach], metres, stock,
                         "; ".join(notes)))
    return _twin_notes(out)


def _twin_notes(out: list[Cable]) -> list[Cable]:
    """The cables of one twin-port module take one reach class (the longest any of them needs, through every module
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
                if out[n].reach != need:
                    out[n] = _with_reach(out[n], need)
                    changed = True
    done = []
    for c in out:
        extra = []
        for e in (c.a, c.b):
            if e.module in sharing:
                others = [out[x].id for x in sharing[e.module] if out[x].id != c.id]
                extra.append(f"{e.module}: one twin-port 2x{c.reach} module, "
                             f"{'with cable ' + ', '.join(others) if others else 'its other port unused'}")
        done.append(c._replace(notes="; ".join(x for x in (c.notes, *extra) if x)))
    return done


def _with_reach(c: Cable, reach: str) -> Cable:
    return c._replace(reach=reach, fibre=FIBRE[reach], a=c.a._replace(optic=c.a.optic.replace(c.reach, reach)),
                      b=c.b._replace(optic=c.b.optic.replace(c.reach, reach)))


class Counts(NamedTuple):
    optics: dict[str, int]          # transceiver modules by part class
    dacs: dict[str, int]            # DAC assemblies by part ("400G QSFP-DD-OSFP DAC 3.0 m")
    aocs: dict[str, int]
    fibres: dict[str, int]          # fibre patch cords by type and stock length


def dac_part(c: Cable) -> str:
    forms = c.a.form_factor if c.a.form_factor == c.b.form_factor else f"{c.a.form_factor}-{c.b.form_factor}"
    size = f"{c.length_class:g} m" if c.length_class is not None else f"{c.length_m:g} m (custom)"
    return f"{c.speed_gbps}G {forms} {c.reach} {size}"


def counts(found: Iterable[Cable]) -> Counts:
    """What to order: one module per distinct transceiver (a twin-port one once for its two cables), one assembly
    per DAC or AOC, one fibre per optical cable."""
    modules: dict[str, str] = {}
    dacs: Counter[str] = Counter()
    aocs: Counter[str] = Counter()
    fibres: Counter[str] = Counter()
    for c in found:
        if c.medium in OPTICAL:
            for e in (c.a, c.b):
                modules[e.module] = e.optic
            size = f"{c.length_class:g} m" if c.length_class is not None else f"{c.length_m:g} m (custom)"
            fibres[f"{c.fibre} {size}"] += 1
        elif c.medium == "dac":
            dacs[dac_part(c)] += 1
        else:
            aocs[dac_part(c)] += 1
    return Counts(dict(sorted(Counter(modules.values()).items())), dict(sorted(dacs.items())),
                  dict(sorted(aocs.items())), dict(sorted(fibres.items())))


__all__ = ["Cable", "CableEnd", "Counts", "Place", "cable_id", "cables", "counts", "dac_part"]
