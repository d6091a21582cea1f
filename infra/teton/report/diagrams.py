"""The report's diagrams, from the Fabric: the cluster (its tiers, zones, spine planes, storage) and each zone (its
racks, rack switches, spine switches and rails).

The cluster: a band of the backend's cluster-wide switches on top (RoCE ATSWs; InfiniBand spines and cores), a
column per zone (its spine and rack switches, its GPU hosts, its front-end switches), a column of what sits outside
the zones (storage racks, service hosts and their switches), and the front end's spine planes (SSWs) at the bottom;
between them one line per pair of groups that links join, labelled with the link count.  Every group says how many
devices it holds; it draws one symbol per device up to `MAX_SYMBOLS` and one aggregate box beyond, so the 24k cluster
stays a readable page and the lab shows every device.

A zone: its spine switches (RoCE CTSWs) or its rail leaves (InfiniBand: leaf n carries rail n of every host of the
SU) on top, then its racks, each with its rack switch, its GPU hosts and its front-end switch; lines for the uplinks
and the rails where there are few enough to read (`MAX_LINES`), a sentence saying what they are where not.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace

from teton.fabric.model import Device, Fabric
from teton.fabric.roles import BY_NAME, rail_kinds
from teton.report.svg import GAP, PITCH, SYMBOL, Canvas, grid

MAX_SYMBOLS = 64       # a group of more devices is drawn as one aggregate box
MAX_LINES = 400        # a zone's uplink or rail lines beyond this are said, not drawn
ORDER = ("atsw", "core", "spine", "ctsw", "rtsw", "leaf", "host", "storage", "service", "fe-rsw", "fsw", "ssw")
MARGIN = 20
COLUMN = 250
TITLE = 18
TOP, BOTTOM, OUTSIDE = "top", "bottom", "outside"


def _rank(role: str) -> int:
    return ORDER.index(role) if role in ORDER else len(ORDER)


def role_anchor(role: str) -> str:
    return f"role-{role}"


def _title(d: Device) -> str:
    where = f", zone {d.zone}" if d.zone else ""
    return f"{d.name} ({d.role}, {d.model}{where}, rack {d.rack})"


def column_of(d: Device) -> str:
    """Where a device is drawn in the cluster: the top band, the bottom band, a zone (`zNN`) or outside the zones."""
    if d.zone:
        return f"z{d.zone:02d}"
    role = BY_NAME.get(d.role)
    if role is not None and role.network in ("roce", "infiniband"):
        return TOP
    return BOTTOM if d.role == "ssw" else OUTSIDE


def _by_role(devices: Iterable[Device]) -> list[tuple[str, list[Device]]]:
    groups: dict[str, list[Device]] = defaultdict(list)
    for d in devices:
        groups[d.role].append(d)
    return [(r, sorted(groups[r], key=lambda d: d.name)) for r in sorted(groups, key=lambda r: (_rank(r), r))]


def _group(c: Canvas, x: int, y: int, width: int, role: str, devices: list[Device], label: str = "") -> int:
    """One group at (x, y): its title with the count, then its symbols or its aggregate box; the height used."""
    c.text(x, y + 12, f"{label or role} \u00d7 {len(devices)}", size=12, weight="bold")
    y0 = y + TITLE
    if len(devices) > MAX_SYMBOLS:
        c.aggregate(x, y0, min(width, 220), role, [d.name for d in devices], role_anchor(role))
        return TITLE + SYMBOL + GAP
    per_row, rows = grid(len(devices), width)
    for i, d in enumerate(devices):
        c.symbol(x + (i % per_row) * PITCH, y0 + (i // per_row) * PITCH, d.name, d.role, _title(d))
    return TITLE + rows * PITCH


def _groups_height(groups: list[tuple[str, list[Device]]], width: int) -> int:
    h = 0
    for _, devices in groups:
        h += TITLE + (SYMBOL + GAP if len(devices) > MAX_SYMBOLS else grid(len(devices), width)[1] * PITCH)
    return h


def _planes(ssws: list[Device]) -> list[tuple[str, list[Device]]]:
    """The front-end spine planes: SSW `sswPP-NN` is in plane PP."""
    planes: dict[str, list[Device]] = defaultdict(list)
    for d in ssws:
        m = re.match(r"ssw(\d+)-", d.name)
        planes[f"plane {m[1]}" if m else "spine"].append(d)
    return sorted(planes.items())


def cluster_svg(fabric: Fabric, marks: Mapping[str, str] | None = None, caption: str = "") -> str:
    """The cluster drawn; with `marks` (device -> its class in a change, `svg.CHANGES`; removed devices are among
    `fabric`'s to be drawn), the diagram of that change: `caption` and the legend on top, the marked outlined."""
    columns: dict[str, list[Device]] = defaultdict(list)
    for d in fabric.devices.values():
        columns[column_of(d)].append(d)
    zones = sorted(k for k in columns if k not in (TOP, BOTTOM, OUTSIDE))
    cols = zones + ([OUTSIDE] if columns.get(OUTSIDE) else [])
    width = max(2 * MARGIN + len(cols) * (COLUMN + MARGIN) - MARGIN, 900)
    inner = width - 2 * MARGIN
    c = Canvas(marks=marks or {})
    y = MARGIN
    count = sum(1 for d in fabric.devices if c.marks.get(d) != "removed")
    c.text(MARGIN, y + 4, f"{fabric.name}: {fabric.backend} backend, {count} devices", 16, weight="bold")
    y += 20
    if marks is not None:
        y += c.legend(MARGIN, y, caption)
    band_box: dict[str, tuple[int, int]] = {}         # column -> (y top, y bottom) of its box
    top = _by_role(columns.get(TOP, []))
    if top:
        h = _groups_height(top, inner - 20) + 26
        c.rect(MARGIN, y, inner, h, "#f3f6fb", rx=6)
        c.text(MARGIN + 10, y + 16, "backend: cluster-wide tiers", 13, weight="bold")
        gy = y + 24
        for role, devices in top:
            gy += _group(c, MARGIN + 10, gy, inner - 20, role, devices)
        band_box[TOP] = (y, y + h)
        y += h + 50
    col_top = y
    heights = {k: _groups_height(_by_role(columns[k]), COLUMN - 20) + 30 for k in cols}
    col_h = max(heights.values(), default=0)
    x_of = {k: MARGIN + i * (COLUMN + MARGIN) for i, k in enumerate(cols)}
    for k in cols:
        x = x_of[k]
        outside = k == OUTSIDE
        c.rect(x, col_top, COLUMN, col_h, "#f7f7f7" if outside else "#fbfbf3", rx=6)
        gpus = sum(int(d.attrs.get("gpus", 0)) for d in columns[k] if d.role == "host")
        head = "storage and services" if outside else f"zone {k}" + (f": {gpus} GPUs" if gpus else "")
        c.text(x + 10, col_top + 17, head, 13, weight="bold")
        gy = col_top + 26
        for role, devices in _by_role(columns[k]):
            gy += _group(c, x + 10, gy, COLUMN - 20, role, devices)
        band_box[k] = (col_top, col_top + col_h)
    y = col_top + col_h + 50
    bottom = columns.get(BOTTOM, [])
    if bottom:
        planes = _planes(bottom)
        h = sum(TITLE + grid(len(ds), inner - 20)[1] * PITCH if len(ds) <= MAX_SYMBOLS else TITLE + PITCH
                for _, ds in planes) + 26
        c.rect(MARGIN, y, inner, h, "#fbf3f8", rx=6)
        c.text(MARGIN + 10, y + 16, "front end: spine planes (SSW)", 13, weight="bold")
        gy = y + 24
        for label, devices in planes:
            gy += _group(c, MARGIN + 10, gy, inner - 20, "ssw", devices, label)
        band_box[BOTTOM] = (y, y + h)
        y += h
    _links(c, fabric, band_box, x_of)
    if marks is not None:
        return c.svg(width, y + MARGIN, f"what changes in cluster {fabric.name}", "changes")
    return c.svg(width, y + MARGIN, f"cluster {fabric.name}", "cluster")


def change_svg(fabric: Fabric, marks: Mapping[str, str], removed: Iterable[Device] = (), caption: str = "") -> str:
    """The diagram of a change: the cluster of its new side, `fabric`, with each device of `marks` outlined in its
    class's colour (added, attached, renumbered, changed) and the `removed` ones (from the old side) drawn faded where
    they were; a legend on top counting each class."""
    gone = {d.name: d for d in removed if d.name not in fabric.devices}
    drawn = replace(fabric, devices=dict(sorted({**fabric.devices, **gone}.items())))
    return cluster_svg(drawn, {**{n: k for n, k in marks.items() if n in fabric.devices},
                               **dict.fromkeys(gone, "removed")}, caption)


def _links(c: Canvas, fabric: Fabric, boxes: dict[str, tuple[int, int]], x_of: dict[str, int]) -> None:
    """One line per (zone or outside column, band) pair that links join, with the link count."""
    pairs: Counter[tuple[str, str]] = Counter()
    for link in fabric.links:
        a, b = column_of(fabric.device(link.a.device)), column_of(fabric.device(link.b.device))
        if a == b:
            continue
        if a in (TOP, BOTTOM):
            a, b = b, a
        if b in (TOP, BOTTOM) and a in x_of:
            pairs[a, b] += 1
    for (col, band), n in sorted(pairs.items()):
        x = x_of[col] + COLUMN // 2 + (12 if band == BOTTOM else -12)
        if band == TOP:
            y1, y2 = boxes[TOP][1], boxes[col][0]
        else:
            y1, y2 = boxes[col][1], boxes[BOTTOM][0]
        c.line(x, y1, x, y2, "#555555", 2)
        c.text(x + 4, (y1 + y2) // 2 + 4, f"{n} links", 11)


def zone_svg(fabric: Fabric, zone: int) -> str:
    devices = [d for d in fabric.devices.values() if d.zone == zone]
    ib = fabric.backend == "infiniband"
    upper_role = "leaf" if ib else "ctsw"
    upper = sorted((d for d in devices if d.role == upper_role), key=lambda d: d.name)
    racks: dict[str, list[Device]] = defaultdict(list)
    for d in devices:
        if d.role not in (upper_role, "fsw"):
            racks[d.rack].append(d)
    fsws = sorted((d for d in devices if d.role == "fsw"), key=lambda d: d.name)
    rack_w = 4 * PITCH + 14
    per_row = max(1, min(len(racks), 16))
    width = max(2 * MARGIN + per_row * (rack_w + 10), 2 * MARGIN + len(upper) * PITCH, 700)
    c = Canvas()
    hosts = [d for d in devices if d.role == "host"]
    gpus = sum(int(d.attrs.get("gpus", 0)) for d in hosts)
    c.text(MARGIN, MARGIN + 4, f"zone z{zone:02d}: {len(racks)} racks, {len(hosts)} GPU hosts, {gpus} GPUs", 15,
           weight="bold")
    pos: dict[str, tuple[int, int]] = {}               # device -> centre of its symbol
    y = MARGIN + 16
    label = "rail leaves (leaf n: rail n of every host of the SU)" if ib else "spine switches (CTSW)"
    y += _row(c, MARGIN, y, width - 2 * MARGIN, upper, label, pos)
    y += 40
    ordered = [(rack, sorted(members, key=lambda d: (_rank(d.role), d.name)))
               for rack, members in sorted(racks.items())]
    rack_h = max((_rack(c, 0, 0, rack_w, rack, members, pos, dry=True) for rack, members in ordered), default=0)
    rows = (len(racks) + per_row - 1) // per_row
    for i, (rack, members) in enumerate(ordered):
        _rack(c, MARGIN + (i % per_row) * (rack_w + 10), y + (i // per_row) * (rack_h + 12), rack_w, rack, members,
              pos, height=rack_h)
    y += rows * (rack_h + 12) + 20
    y += _row(c, MARGIN, y, width - 2 * MARGIN, fsws, "front-end zone switches (FSW)", pos)
    notes = _zone_lines(c, fabric, devices, upper, pos, ib)
    for note in notes:
        y += 16
        c.text(MARGIN, y, note, 12)
    return c.svg(width, y + MARGIN, f"zone z{zone:02d} of {fabric.name}", "zone")


def _row(c: Canvas, x: int, y: int, width: int, devices: list[Device], label: str,
         pos: dict[str, tuple[int, int]]) -> int:
    if not devices:
        return 0
    c.text(x, y + 12, f"{label} \u00d7 {len(devices)}", 12, weight="bold")
    per_row, rows = grid(len(devices), width)
    for i, d in enumerate(devices):
        sx, sy = x + (i % per_row) * PITCH, y + TITLE + (i // per_row) * PITCH
        c.symbol(sx, sy, d.name, d.role, _title(d))
        pos[d.name] = (sx + SYMBOL // 2, sy + SYMBOL // 2)
    return TITLE + rows * PITCH


def _rack(c: Canvas, x: int, y: int, w: int, rack: str, members: list[Device], pos: dict[str, tuple[int, int]],
          dry: bool = False, height: int = 0) -> int:
    """A rack box: its name, then its switches, then its servers; the height it takes."""
    switches = [d for d in members if d.role not in ("host", "storage", "service")]
    servers = [d for d in members if d.role in ("host", "storage", "service")]
    per_row = max(1, (w - 8 + GAP) // PITCH)
    rows = (len(switches) + per_row - 1) // per_row + (len(servers) + per_row - 1) // per_row
    h = 22 + rows * PITCH + 10
    if dry:
        return h
    c.rect(x, y, w, height or h, "none", "#888888", rx=4)          # lines show through
    c.text(x + 4, y + 14, rack, 11)
    sy = y + 20
    for group in (switches, servers):
        for i, d in enumerate(group):
            sx = x + 4 + (i % per_row) * PITCH
            c.symbol(sx, sy + (i // per_row) * PITCH, d.name, d.role, _title(d))
            pos[d.name] = (sx + SYMBOL // 2, sy + (i // per_row) * PITCH + SYMBOL // 2)
        sy += ((len(group) + per_row - 1) // per_row) * PITCH
    return h


def _zone_lines(c: Canvas, fabric: Fabric, devices: list[Device], upper: list[Device],
                pos: dict[str, tuple[int, int]], ib: bool) -> list[str]:
    """The uplinks (RTSW -> CTSW) and the rails (host -> its rail switches) as lines, or said when too many."""
    rails = set(rail_kinds())
    upper_names = {d.name for d in upper}
    ups = sorted({(d.name, i.peer) for d in devices if d.role == "rtsw" for i in d.interfaces
                  if i.peer in upper_names})
    rail_pairs = Counter((d.name, i.peer) for d in devices if d.role == "host" for i in d.interfaces
                         if i.kind in rails)
    notes = []
    parts: list[str] = []
    drawn = Canvas(parts)
    if ups and len(ups) <= MAX_LINES:
        for a, b in ups:
            (x1, y1), (x2, y2) = pos[a], pos[b]
            drawn.line(x1, y1, x2, y2, "#56B4E9", 1, "0.6")
    elif ups:
        per = Counter(a for a, _ in ups)
        notes.append(f"uplinks: each of the {len(per)} RTSWs reaches {max(per.values())} of the {len(upper)} CTSWs "
                     "(uplink j to CTSW j), not drawn")
    if rail_pairs and len(rail_pairs) <= MAX_LINES:
        for (a, b), n in sorted(rail_pairs.items()):
            if a in pos and b in pos:
                (x1, y1), (x2, y2) = pos[a], pos[b]
                drawn.line(x1, y1, x2, y2, "#E69F00", 2 if n > 1 else 1, "0.7")
        per_host = Counter(a for a, _ in rail_pairs.elements()) if rail_pairs else Counter()
        n = max(per_host.values(), default=0)
        notes.append(f"rails: {n} per host" + ("; each host's rails all on its rack's RTSW" if not ib else
                                                "; rail n on leaf n of the SU") + " (orange lines)")
    elif rail_pairs:
        notes.append(f"rails: {sum(rail_pairs.values())} host NICs, "
                     + ("each host's on its rack's RTSW" if not ib else "rail n of every host on leaf n") +
                     ", not drawn")
    c.parts[:0] = parts                                  # lines under the symbols
    return notes
