"""The report's HTML page: one file, its style and diagrams inline (nothing fetched when it is viewed), links to the
build's files by relative path, every list in a fixed order and no clock, so a build gives the same bytes each time.
"""

from __future__ import annotations

import os
from collections import defaultdict
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any
from urllib.parse import quote

from teton.buildfolder import BuildFolder, anta_catalog_path, device_of, host_vars_path
from teton.fabric.model import Device, Fabric
from teton.fabric.plan import plan
from teton.report.diagrams import ORDER, cluster_svg, role_anchor, zone_svg
from teton.report.sections import Provider, Table, gather
from teton.report.svg import COLOURS, anchor

STYLE = """
body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;margin:24px;color:#111;background:#fff;max-width:1400px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ccc}
h3{font-size:15px;margin:18px 0 6px}nav a{margin-right:12px}svg{max-width:100%;height:auto;display:block}
table{border-collapse:collapse;font-size:13px;margin:6px 0}td,th{border:1px solid #ddd;padding:2px 8px;
text-align:left;vertical-align:top}th{background:#f3f3f3}td.n{text-align:right}.na{color:#a33;font-style:italic}
.legend span{display:inline-block;margin-right:14px;font-size:13px}.legend i{display:inline-block;width:12px;
height:12px;border:1px solid #333;margin-right:4px;vertical-align:-1px}.files a{margin-right:8px}.muted{color:#666}
"""


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key in sorted(data):
        value = data[key]
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out += _flatten(value, f"{name}.")
        else:
            out.append((name, value))
    return out


def _cell(value: object) -> str:
    if isinstance(value, float):
        text = f"{value:,.3f}".rstrip("0").rstrip(".")
    elif isinstance(value, int) and not isinstance(value, bool):
        text = f"{value:,}"
    else:
        text = "" if value is None else str(value)
    cls = ' class="n"' if isinstance(value, int | float) and not isinstance(value, bool) else ""
    return f"<td{cls}>{_e(text)}</td>"


def _table(t: Table) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in t.columns)
    rows = "\n".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in t.rows)
    note = f'<p class="muted">{_e(t.note)}</p>' if t.note else ""
    return f"<h3>{_e(t.title)}</h3>\n<table><tr>{head}</tr>\n{rows}\n</table>{note}"


class _Files:
    """The build's files by device, and their hrefs relative to the report's folder."""

    def __init__(self, build: BuildFolder | None, out: str, fabric: Fabric):
        self.base = ""
        self.by_device: dict[str, list[str]] = defaultdict(list)
        self.cluster: list[str] = []
        if build is None or build.root is None:
            return
        self.base = os.path.relpath(build.root.resolve(), os.path.abspath(out)).replace(os.sep, "/")
        manifest = build.manifest() or {}
        named = {host_vars_path(d.name): d.name for d in fabric.devices.values() if d.nos is None}
        named.update({anta_catalog_path(d.name): d.name for d in fabric.switches("eos")})   # its tests: with its files
        for rel in sorted(manifest.get("files", {})):
            device = device_of(rel) or named.get(rel)
            if device is not None:
                self.by_device[device].append(rel)
            else:
                self.cluster.append(rel)
        for top in ("fabric.json", "manifest.json"):
            if top not in self.cluster and build.exists(top):
                self.cluster.append(top)
        self.cluster.sort()

    def href(self, rel: str) -> str:
        return quote(f"{self.base}/{rel}" if self.base not in ("", ".") else rel)

    def links(self, rels: Sequence[str], short: bool = True) -> str:
        return " ".join(f'<a href="{_e(self.href(r))}">{_e(r.rsplit("/", 1)[-1] if short else r)}</a>'
                        for r in rels)


def _legend(fabric: Fabric) -> str:
    roles = sorted({d.role for d in fabric.devices.values()}, key=lambda r: (ORDER.index(r) if r in ORDER else 99, r))
    items = "".join(f'<span><i style="background:{COLOURS.get(r, "#bbbbbb")}"></i>{_e(r)}</span>' for r in roles)
    return (f'<p class="legend">{items}<span class="muted">one square per device; a dashed box stands for a group '
            "too large to draw device by device (its count inside); click a device for its files</span></p>")


def _device_rows(devices: list[Device], files: _Files) -> str:
    rows = []
    for d in devices:
        own = files.by_device.get(d.name, [])
        rows.append(f'<tr id="{_e(anchor(d.name))}"><td>{_e(d.name)}</td><td>{_e(d.model)}</td>'
                    f"<td>{_e(d.nos or '')}</td><td>{_e(f'z{d.zone:02d}' if d.zone else '')}</td>"
                    f"<td>{_e(d.rack)}</td><td class=\"n\">{_e(d.ru)}</td><td>{_e(d.mgmt or '')}</td>"
                    f'<td class="files">{files.links(own) if own else ""}</td></tr>')
    return "\n".join(rows)


def page(fabric: Fabric, out: str, build: BuildFolder | None = None,
         providers: Mapping[str, Provider] | None = None) -> str:
    """The report's HTML for `fabric`, its links relative to folder `out` (where the page is written)."""
    files = _Files(build, out, fabric)
    figures = plan(fabric)
    zones = sorted({d.zone for d in fabric.devices.values() if d.zone})
    parts = [f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(fabric.name)}: teton report'
             f"</title><style>{STYLE}</style></head><body>",
             f"<h1>{_e(fabric.name)}</h1><p>site {_e(fabric.site)}, {_e(fabric.backend)} backend: "
             f"{figures['gpus']:,} GPUs in {figures['hosts']:,} hosts, {figures['racks']:,} racks, "
             f"{figures['zones']} zones; {len(fabric.devices):,} devices, {len(fabric.links):,} links.</p>",
             '<nav><a href="#cluster">cluster</a><a href="#figures">figures</a><a href="#zones">zones</a>'
             '<a href="#bom">bill of materials</a><a href="#verify">verification</a><a href="#what_if">what-if</a>'
             '<a href="#files">files</a><a href="#devices">devices</a></nav>',
             '<h2 id="cluster">The cluster</h2>', _legend(fabric), cluster_svg(fabric),
             '<h2 id="figures">Figures (teton plan)</h2><table><tr><th>figure</th><th>value</th></tr>']
    parts += [f"<tr><td>{_e(k)}</td>{_cell(v)}</tr>" for k, v in _flatten(figures)]
    parts.append("</table>")
    parts.append('<h2 id="zones">Zones</h2>')
    for z in zones:
        parts += [f'<h3 id="zone-z{z:02d}">Zone z{z:02d}</h3>', zone_svg(fabric, z)]
    for section, tables, why in gather(fabric, build, providers):
        parts.append(f'<h2 id="{_e(section.key)}">{_e(section.title)}</h2>')
        parts.append("\n".join(_table(t) for t in tables) if tables else f'<p class="na">{_e(why)}</p>')
    parts.append('<h2 id="files">Files of the build</h2>')
    if files.base:
        parts.append(f'<p>The build: <code>{_e(files.base)}/</code>. Cluster-wide files:</p><p class="files">'
                     f"{files.links(files.cluster, short=False)}</p>")
    else:
        parts.append('<p class="na">not available: the report was made without a build folder</p>')
    parts.append('<h2 id="devices">Devices</h2>')
    by_role: dict[str, list[Device]] = defaultdict(list)
    for d in fabric.devices.values():
        by_role[d.role].append(d)
    for role in sorted(by_role, key=lambda r: (ORDER.index(r) if r in ORDER else 99, r)):
        devices = sorted(by_role[role], key=lambda d: d.name)
        parts.append(f'<h3 id="{_e(role_anchor(role))}">{_e(role)} \u00d7 {len(devices):,}</h3><table><tr>'
                     "<th>device</th><th>model</th><th>NOS</th><th>zone</th><th>rack</th><th>RU</th><th>management"
                     f"</th><th>files</th></tr>\n{_device_rows(devices, files)}\n</table>")
    parts.append('<p class="muted">Rendered by teton from the build\'s Fabric (`teton docs`): render again, do not '
                 "edit.</p></body></html>\n")
    return "\n".join(parts)
