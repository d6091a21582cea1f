"""Plain SVG, written by teton: a few shapes, escaped text, integer coordinates, attributes in a fixed order, so a
diagram is the same bytes on every machine and every run.

A device is drawn as one symbol (`symbol`, carrying `data-device` and linking to its row of the report's device
index), a group too large to stay readable as one aggregate box (`aggregate`, carrying `data-role` and
`data-count`): the report's tests count devices in a diagram by those two attributes.
"""

from __future__ import annotations

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
        """One device: a square (a switch) or a rounded one (a server), linking to its row of the device index."""
        rx = 6 if role in ("host", "storage", "service") else 2
        self.parts.append(f'<a href="#{_a(anchor(device))}"><rect class="dev" data-device="{_a(device)}" '
                          f'data-role="{_a(role)}" x="{x}" y="{y}" width="{SYMBOL}" height="{SYMBOL}" rx="{rx}" '
                          f'fill="{colour(role)}" stroke="#333333"><title>{escape(title)}</title></rect></a>')

    def aggregate(self, x: int, y: int, w: int, role: str, count: int, label: str, href: str) -> None:
        """A group of `count` devices of `role` as one box, linking to the role's part of the device index."""
        self.parts.append(f'<a href="#{_a(href)}"><g class="agg" data-role="{_a(role)}" data-count="{count}">'
                          f'<rect x="{x}" y="{y}" width="{w}" height="{SYMBOL}" rx="3" fill="{colour(role)}" '
                          f'stroke="#333333" stroke-dasharray="4 2"/><text x="{x + w // 2}" y="{y + 15}" '
                          f'font-size="12" text-anchor="middle" fill="#111111">{escape(label)}</text></g></a>')

    def svg(self, width: int, height: int, title: str, cls: str) -> str:
        return (f'<svg xmlns="http://www.w3.org/2000/svg" class="{_a(cls)}" width="{width}" height="{height}" '
                f'viewBox="0 0 {width} {height}" font-family="{FONT}" role="img" aria-label="{_a(title)}">'
                f"<title>{escape(title)}</title>\n" + "\n".join(self.parts) + "\n</svg>")


def grid(count: int, width: int) -> tuple[int, int]:
    """(symbols per row, rows) of `count` symbols in `width` px."""
    per_row = max(1, (width + GAP) // PITCH)
    return per_row, (count + per_row - 1) // per_row if count else 0
