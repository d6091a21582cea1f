"""Plain SVG, written by teton: a few shapes, escaped text, integer coordinates, attributes in a fixed order, so a
diagram is the same bytes on every machine and every run.

A device is drawn as one symbol (`symbol`, carrying `data-device` and linking to its row of the report's device
index), a group too large to stay readable as one aggregate box (`aggregate`, carrying `data-role` and
`data-count`): the report's tests count devices in a diagram by those two attributes.

A canvas given `marks` (device -> how a change touches it: `CHANGES`) draws the diagram of a change: a marked
symbol carries `data-change` and an outline in its class's colour (a removed one is drawn faded and dashed), an
aggregate box holding marked devices carries `data-changed` (how many) and says the count ("192 added", or "7
changed" when of several classes); `legend` explains them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from html import escape

SYMBOL = 22          # a device symbol's side, px
GAP = 6
PITCH = SYMBOL + GAP
FONT = "DejaVu Sans, Verdana, Arial, sans-serif"

# fill colours by role (a colour-blind-safe palette: Okabe-Ito, then greys)
COLOURS = {
    "atsw": "#0072B2", "core": "#0072B2", "ctsw": "#56B4E9", "spine": "#56B4E9", "rtsw": "#009E73", "leaf": "#009E73",
    "host": "#E69F00", "ssw": "#CC79A7", "fsw": "#D55E00", "fe-rsw": "#F0E442", "storage": "#999999",
    "service": "#666666",
}


# a change's classes (teton.diff.classify's), in the legend's order, with their outline colours and the letter
# written on a symbol (colour is not all a reader has to go by)
CHANGES = {"added": "#1A7F37", "removed": "#CF222E", "attached": "#0969DA", "renumbered": "#8250DF",
           "changed": "#9A6700"}
GLYPHS = {"added": "+", "removed": "\u2212", "attached": "A", "renumbered": "N", "changed": "C"}
MARK_WIDTH = 4


def colour(role: str) -> str:
    return COLOURS.get(role, "#bbbbbb")


def _a(value: object) -> str:
    return escape(str(value), quote=True)


def anchor(device: str) -> str:
    """The id of a device's row in the report's device index."""
    return f"dev-{device}"


@dataclass
class Canvas:
    """An SVG drawing: elements appended in order, the size given at the end."""

    parts: list[str] = field(default_factory=list)
    marks: Mapping[str, str] = field(default_factory=dict)     # device -> its class in a change (CHANGES)

    def rect(self, x: int, y: int, w: int, h: int, fill: str, stroke: str = "#333333", rx: int = 0,
             cls: str = "") -> None:
        c = f' class="{_a(cls)}"' if cls else ""
        r = f' rx="{rx}"' if rx else ""
        self.parts.append(f'<rect{c} x="{x}" y="{y}" width="{w}" height="{h}"{r} fill="{fill}" stroke="{stroke}"/>')

    def text(self, x: int, y: int, value: object, size: int = 12, anchor_: str = "start", weight: str = "normal",
             fill: str = "#111111") -> None:
        w = f' font-weight="{weight}"' if weight != "normal" else ""
        self.parts.append(f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor_}"{w} fill="{fill}">'
                          f"{escape(str(value))}</text>")

    def line(self, x1: int, y1: int, x2: int, y2: int, stroke: str = "#777777", width: int = 1,
             opacity: str = "") -> None:
        o = f' stroke-opacity="{opacity}"' if opacity else ""
        self.parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{stroke}" '
                          f'stroke-width="{width}"{o}/>')

    def symbol(self, x: int, y: int, device: str, role: str, title: str) -> None:
        """One device: a square (a switch) or a rounded one (a server), linking to its row of the device index;
        outlined in its class's colour when the change marks it."""
        rx = 6 if role in ("host", "storage", "service") else 2
        mark, stroke, glyph = self.marks.get(device), 'stroke="#333333"', ""
        if mark:
            stroke = (f'data-change="{_a(mark)}" stroke="{CHANGES[mark]}" stroke-width="{MARK_WIDTH}"'
                      + (' fill-opacity="0.35" stroke-dasharray="4 2"' if mark == "removed" else ""))
            title = f"{title}: {mark}"
            glyph = _glyph(x, y, mark)
        self.parts.append(f'<a href="#{_a(anchor(device))}"><rect class="dev" data-device="{_a(device)}" '
                          f'data-role="{_a(role)}" x="{x}" y="{y}" width="{SYMBOL}" height="{SYMBOL}" rx="{rx}" '
                          f'fill="{colour(role)}" {stroke}><title>{escape(title)}</title></rect>{glyph}</a>')

    def aggregate(self, x: int, y: int, w: int, role: str, devices: list[str], href: str) -> None:
        """A group of devices of `role` as one box, linking to the role's part of the device index; outlined, and
        saying how many, when the change marks some of them."""
        count = len(devices)
        label, stroke, changed, title = f"{count} {role}", 'stroke="#333333"', "", ""
        marked = Counter(self.marks[d] for d in devices if d in self.marks)
        if marked:
            n = sum(marked.values())
            most = min(marked, key=lambda k: (-marked[k], list(CHANGES).index(k)))
            label += f" ({n} {most if len(marked) == 1 else 'changed'})"
            stroke = f'stroke="{CHANGES[most]}" stroke-width="{MARK_WIDTH}"'
            changed = f' data-changed="{n}"'
            title = (f"<title>{n} of {count} {escape(role)}: "
                     + ", ".join(f"{marked[k]} {k}" for k in CHANGES if marked[k]) + "</title>")
        self.parts.append(f'<a href="#{_a(href)}"><g class="agg" data-role="{_a(role)}" data-count="{count}"{changed}>'
                          f'{title}<rect x="{x}" y="{y}" width="{w}" height="{SYMBOL}" rx="3" fill="{colour(role)}" '
                          f'{stroke} stroke-dasharray="4 2"/><text x="{x + w // 2}" y="{y + 15}" '
                          f'font-size="12" text-anchor="middle" fill="#111111">{escape(label)}</text></g></a>')

    def legend(self, x: int, y: int, caption: str) -> int:
        """The change's legend at (x, y): `caption`, then each class's outline and how many devices it marks; the
        height used."""
        n = Counter(self.marks.values())
        self.text(x, y + 14, caption, 13, weight="bold")
        for i, (kind, stroke) in enumerate(CHANGES.items()):
            lx = x + i * 150
            self.parts.append(f'<rect class="key" x="{lx}" y="{y + 20}" width="{SYMBOL}" height="{SYMBOL}" rx="2" '
                              f'fill="#ffffff" stroke="{stroke}" stroke-width="{MARK_WIDTH}"/>'
                              + _glyph(lx, y + 20, kind))
            self.text(lx + SYMBOL + 6, y + 36, f"{kind} \u00d7 {n[kind]}", 12)
        self.text(x, y + 60, "outlined and lettered: the devices the change adds, removes (faded) or touches; a box "
                  "standing for a group says how many of it change", 11, fill="#444444")
        return 70

    def svg(self, width: int, height: int, title: str, cls: str) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{_a(cls)}" width="{width}" height="{height}" '
                f'viewBox="0 0 {width} {height}" font-family="{FONT}" role="img" aria-label="{_a(title)}">'
                f"<title>{escape(title)}</title>\n" + "\n".join(self.parts) + "\n</svg>")


def _glyph(x: int, y: int, mark: str) -> str:
    """The letter of a change's class on the symbol at (x, y)."""
    return (f'<text x="{x + SYMBOL // 2}" y="{y + 16}" font-size="13" text-anchor="middle" font-weight="bold" '
            f'fill="#111111" pointer-events="none">{GLYPHS[mark]}</text>')


def grid(count: int, width: int) -> tuple[int, int]:
    """(symbols per row, rows) of `count` symbols in `width` px."""
    per_row = max(1, (width + GAP) // PITCH)
    return per_row, (count + per_row - 1) // per_row if count else 0
