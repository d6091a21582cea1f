"""The diff as text (every line, for a terminal or an artifact), markdown (a pull-request comment, kept under GitHub's
limit) or JSON (for scripts: `devices_changed`, `verdict`, `reasons`, `summary`, `classification`, every device's
diffs).  Every format says each device's class (`teton.diff.classify`): added, removed, attached, renumbered, changed,
and for an expansion what the attached devices gain and what the renumbered ones move, in bounded lists.

The markdown links the new side's report (`teton docs`, published by CI at `Links.report_url`) and shows the diagram
of what changes (`change_diagram`, the report's cluster drawing with the changed devices outlined), an SVG file that
CI publishes next to the report's index.html: a comment cannot hold an SVG itself."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from teton.diff.classify import CLASSES, Classification, DeviceClass, bounded, classify
from teton.diff.engine import Comparison, DeviceChange
from teton.diff.textdiff import FileDiff
from teton.diff.verdict import Reason
from teton.fabric.roles import report_rank
from teton.findings import TetonError
from teton.report import INDEX, change_svg

MARKDOWN_LIMIT = 60_000          # characters; GitHub refuses a comment over 65,536
MARKDOWN_FILE_LINES = 120        # diff lines shown per file in markdown
JSON_LIST = 50                   # items of a class's lists in JSON (ports, sessions, moves, device names)
SHORT_LIST = 8                   # ... in markdown and text
EXAMPLES = 10                    # devices of each class described in markdown and text


@dataclass(frozen=True)
class Links:
    """Where the review comment points: `report_url`, the folder where CI publishes the new side's `teton docs`
    output (its index.html), and `diagram`, the path the diagram of what changes is written to; the comment shows it
    from `report_url`/<its file name>, so it is published in that folder."""

    report_url: str | None = None
    diagram: str | None = None

    def __post_init__(self) -> None:
        if self.report_url is not None and not re.fullmatch(r"https?://[^\s<>\"'`]+", self.report_url):
            raise TetonError(f"--report-url {self.report_url!r}: not an http(s) URL without spaces, quotes or <>")

    def lines(self, c: Comparison, drawn: bool) -> list[str]:
        """The comment's lines for the report and, when `drawn` (something changes), the diagram."""
        counts = classify(c).counts()
        alt = ", ".join(f"{n:,} {k}" for k, n in counts.items() if n)
        name = PurePosixPath(self.diagram.replace("\\", "/")).name if self.diagram else ""
        spec = c.new.label if ":" not in c.new.label else "SPEC"
        if self.report_url:
            base = self.report_url.rstrip("/")
            out = [f"**Report:** [`{c.new.label}` drawn, its figures and every device's files](<{base}/{INDEX}>)"]
            if drawn and name:
                out += ["", f"![what changes: {alt}](<{base}/{name}>)"]
            return out
        out = [f"_Report: `teton docs {spec} -o DIR` writes it (the cluster drawn, its figures and every device's "
               "files); `teton diff --report-url URL` links it here._"]
        if drawn and name:
            out += ["", f"_The diagram of what changes ({alt}): `{self.diagram}`; with `--report-url` it shows here._"]
        return out


def change_diagram(c: Comparison) -> str:
    """The new side's cluster drawn (`teton.report.change_svg`) with each device of the diff outlined by its class,
    the removed ones (from the old side) faded where they were."""
    found = classify(c)
    removed = [d.name for d in found.named("removed")]
    gone = [c.old.get_fabric().devices[n] for n in removed] if removed else []
    marks = {d.name: d.kind for d in found.devices if d.kind != "removed"}
    return change_svg(c.new.get_fabric(), marks, gone, f"what changes: {c.old.label} \u2192 {c.new.label}")


def _group_key(d: DeviceChange) -> tuple[int, str, int]:
    role = d.info.role
    return (report_rank(role), role, d.info.zone or 0)


def groups(c: Comparison) -> list[tuple[str, int | None, list[DeviceChange]]]:
    """Changed devices grouped by tier (role) and zone, tiers top-down, zones in order."""
    by: dict[tuple[int, str, int], list[DeviceChange]] = defaultdict(list)
    for d in c.devices:
        by[_group_key(d)].append(d)
    return [(role, items[0].info.zone, items) for (_, role, _), items in sorted(by.items())]


def summary(c: Comparison) -> dict[str, Any]:
    sessions_added: set[tuple[str, str]] = set()
    sessions_removed: set[tuple[str, str]] = set()
    addr = [0, 0, 0]
    for d in c.devices:
        a, r = d.sessions()
        sessions_added |= a
        sessions_removed |= r
        for i, n in enumerate(d.addresses()):
            addr[i] += n
    files = [f for d in c.devices for f in d.files] + c.files
    tiers: dict[str, dict[str, int]] = {}
    for d in c.devices:
        t = tiers.setdefault(d.info.role, {"changed": 0, "added": 0, "removed": 0})
        t[d.status] += 1
    hosts = [d for d in c.devices if d.is_host]
    return {
        "devices": len(c.devices),
        "switches": sum(1 for d in c.devices if d.info.nos is not None),
        "tiers": dict(sorted(tiers.items(), key=lambda kv: report_rank(kv[0]))),
        "lines_added": sum(f.added for f in files),
        "lines_removed": sum(f.removed for f in files),
        "files_changed": len(files),
        "bgp_sessions_added": len(sessions_added),
        "bgp_sessions_removed": len(sessions_removed),
        "addresses_added": addr[0], "addresses_removed": addr[1], "addresses_changed": addr[2],
        "hosts_changed": len(hosts),
        "hosts_with_changed_variables": sorted(d.name for d in hosts),
        "fabric_wide_changes": list(c.head),
    }


def as_json(c: Comparison, level: str, reasons: list[Reason]) -> str:
    def file(f: FileDiff) -> dict[str, Any]:
        return {"path": f.path, "status": f.status, "added": f.added, "removed": f.removed, "diff": "\n".join(f.lines)}

    found = classify(c)
    data = {
        "old": c.old.label, "new": c.new.label, "verdict": level,
        "reasons": [r._asdict() for r in reasons],
        "devices_changed": [d.name for d in c.devices],
        "summary": summary(c),
        "classification": classification(found, JSON_LIST),
        "devices": [{"name": d.name, "role": d.info.role, "zone": d.info.zone, "rack": d.info.rack,
                     "plane": d.info.plane, "status": d.status, "files": [file(f) for f in d.files],
                     "changed_fields": d.changed_fields(),
                     "sessions_added": sorted(" ".join(s) for s in d.sessions()[0]),
                     "sessions_removed": sorted(" ".join(s) for s in d.sessions()[1]),
                     **_class_json(found.of[d.name]),
                     "variables": d.variables() if d.is_host else []} for d in c.devices],
        "files": [file(f) for f in c.files],
    }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def classification(found: Classification, limit: int) -> dict[str, Any]:
    """The classes of the devices: 'expansion' (or 'decommission', or None), counts per class and per role, the
    devices added and removed, and of each existing class the devices' names (each list bounded by `limit`)."""
    return {"kind": found.kind, "counts": found.counts(),
            "roles": dict(sorted(found.by_role().items(), key=lambda kv: report_rank(kv[0]))),
            **{kind: bounded([k.name for k in found.named(kind)], limit) for kind in CLASSES}}


def _class_json(k: DeviceClass) -> dict[str, Any]:
    return {"class": k.kind, "ports_added": bounded(k.ports_added, JSON_LIST),
            "ports_removed": bounded(k.ports_removed, JSON_LIST), "moved": bounded(k.moved, JSON_LIST),
            "intents": bounded(k.intents, JSON_LIST), "reason": k.reason}


def _class_lines(found: Classification, code: str = "") -> list[str]:
    """The classification in lines of text (markdown with `code` = "`"): counts, then examples of each class."""
    n = found.counts()
    q = code
    out = [f"{_kind_text(found.kind)}: {n['added']:,} added, {n['removed']:,} removed; of the existing devices that "
           f"change, {n['attached']:,} attached, {n['renumbered']:,} renumbered, {n['changed']:,} changed"]
    for kind in ("added", "removed"):
        if n[kind]:
            out.append(f"{kind}: " + ", ".join(f"{q}{x}{q}" if not x.startswith("and ") else x
                                               for x in bounded([k.name for k in found.named(kind)], SHORT_LIST)))
    for kind in ("attached", "renumbered", "changed"):
        items = sorted(found.named(kind), key=lambda k: report_rank(k.role))     # switches top-down, then hosts
        for k in items[:EXAMPLES]:
            out.append(f"{kind} {q}{k.name}{q}: {_class_detail(k)}")
        if len(items) > EXAMPLES:
            out.append(f"{kind}: and {len(items) - EXAMPLES:,} more")
    return out


def _kind_text(kind: str | None) -> str:
    return {None: "not an expansion", "expansion": "an expansion", "decommission": "a decommission"}.get(
        kind, f"an {kind}")


def _class_detail(k: DeviceClass) -> str:
    def some(what: str, items: tuple[str, ...]) -> str:
        return f"{what} {len(items):,} ({', '.join(bounded(items, SHORT_LIST))})"

    parts = []
    if k.kind == "renumbered":
        parts.append(some("moves", k.moved) + f"; {k.reason}")
    if k.intents:
        parts.append(some("changes", k.intents))
    for what, items in (("gains ports", k.ports_added), ("gains sessions", k.sessions_added),
                        ("loses ports", k.ports_removed), ("loses sessions", k.sessions_removed)):
        if items:
            parts.append(some(what, items))
    return "; ".join(parts)


def _totals(s: dict[str, Any]) -> str:
    tiers = ", ".join(f"{role} {sum(v.values()):,}" for role, v in s["tiers"].items())
    return (f"{s['devices']:,} devices ({tiers}); {s['files_changed']:,} files, +{s['lines_added']:,} "
            f"-{s['lines_removed']:,} lines; BGP sessions +{s['bgp_sessions_added']:,} "
            f"-{s['bgp_sessions_removed']:,}; addresses {s['addresses_changed']:,} changed, "
            f"{s['addresses_added']:,} added, {s['addresses_removed']:,} removed; "
            f"{s['hosts_changed']:,} hosts with changed variables")


def _headline(d: DeviceChange, k: DeviceClass) -> str:
    added = sum(f.added for f in d.files)
    removed = sum(f.removed for f in d.files)
    a, r = d.sessions()
    parts = [d.status if k.kind == d.status else f"{d.status} ({k.kind})", f"+{added:,} -{removed:,}"]
    if a or r:
        parts.append(f"sessions +{len(a)} -{len(r)}")
    fields = [f for f in d.changed_fields() if f not in ("interfaces",)]
    if fields and d.status == "changed":
        parts.append("changed: " + ", ".join(fields))
    return " · ".join(parts)


def _zone_text(zone: int | None) -> str:
    return f"zone {zone}" if zone is not None else "no zone"


def as_text(c: Comparison, level: str, reasons: list[Reason]) -> str:
    out = [f"teton diff {c.old.label} -> {c.new.label}", f"verdict: {level.upper()}"]
    out += [f"  {r.level:<6} {r.message} [{r.rule}]" for r in reasons]
    if not c.devices and not c.files:
        out.append("no device and no file changes")
        return "\n".join(out) + "\n"
    out.append("summary: " + _totals(summary(c)))
    found = classify(c)
    out += ["classes: " + line for line in _class_lines(found)]
    for role, zone, items in groups(c):
        out.append("")
        out.append(f"=== {role} · {_zone_text(zone)} · {len(items):,} device(s)")
        for d in items:
            out.append(f"# {d.name} ({d.info.rack}): {_headline(d, found.of[d.name])}")
            if d.is_host:
                out += ["  " + v for v in d.variables()]
            for f in d.files:
                out += f.lines
    if c.files:
        out.append("")
        out.append("=== fabric-wide files")
        for f in c.files:
            out += f.lines
    return "\n".join(out) + "\n"


def as_markdown(c: Comparison, level: str, reasons: list[Reason], limit: int = MARKDOWN_LIMIT,
                file_lines: int = MARKDOWN_FILE_LINES, links: Links | None = None) -> str:
    icon = {"none": "⚪", "low": "🟢", "medium": "🟡", "high": "🔴"}[level]
    head = [f"### teton diff: `{c.old.label}` → `{c.new.label}`", "",
            f"**Verdict: {icon} {level.upper()}**", "", *(links or Links()).lines(c, bool(c.devices)), ""]
    head += [f"- **{r.level}**: {r.message} (`{r.rule}`)" for r in reasons]
    if not c.devices and not c.files:
        return "\n".join(head + ["", "No device and no file changes."]) + "\n"
    s = summary(c)
    found = classify(c)
    head += ["", _totals(s), "", "| tier | zone | changed | added | removed |", "| --- | --- | ---: | ---: | ---: |"]
    for role, zone, items in groups(c):
        n = Counter(d.status for d in items)
        head.append(f"| {role} | {zone if zone is not None else '-'} | {n['changed']:,} | {n['added']:,} | "
                    f"{n['removed']:,} |")
    head += _md_classes(found)
    body: list[str] = []
    used = sum(len(x) + 1 for x in head) + 400
    shown = hidden = 0
    for role, zone, items in groups(c):
        section = ["", f"#### {role} · {_zone_text(zone)} ({len(items):,})", ""]
        for d in items:
            block = _md_device(d, found.of[d.name], file_lines)
            if used + len(block) + sum(len(x) + 1 for x in section) > limit:
                hidden += 1
                continue
            section.append(block)
            shown += 1
        if len(section) > 3:
            body += section
            used += sum(len(x) + 1 for x in section)
    files_md = [_md_file(f.path, f, file_lines) for f in c.files]
    if files_md:
        body += ["", "#### fabric-wide files", ""]
        for block in files_md:
            if used + len(block) > limit:
                hidden += 1
                continue
            body.append(block)
            used += len(block) + 1
    if hidden:
        body += ["", f"_{hidden:,} more not shown here (a comment has a size limit): run `teton diff` with "
                 "`--format text` for every line._"]
    return "\n".join(head + body) + "\n"


def _fence(lines: list[str], file_lines: int) -> list[str]:
    shown = lines[:file_lines]
    more = len(lines) - len(shown)
    return ["```diff", *(x.replace("```", "`` `") for x in shown),
            *([f"... {more:,} more lines"] if more > 0 else []), "```"]


def _md_classes(found: Classification) -> list[str]:
    """The classification in markdown: its first line, a table per role, then the examples as a list."""
    first, *rest = _class_lines(found, "`")
    out = ["", f"**Classes: {first}**", "", "| role | " + " | ".join(CLASSES) + " |",
           "| --- | " + " | ".join("---:" for _ in CLASSES) + " |"]
    for role, n in sorted(found.by_role().items(), key=lambda kv: report_rank(kv[0])):
        out.append(f"| {role} | " + " | ".join(f"{n[k]:,}" for k in CLASSES) + " |")
    return [*out, "", *(f"- {line}" for line in rest)] if rest else out


def _md_device(d: DeviceChange, k: DeviceClass, file_lines: int) -> str:
    lines = ["<details>", f"<summary><code>{d.name}</code> ({d.info.rack}) · {_headline(d, k)}</summary>", ""]
    if d.is_host and d.variables():
        lines += _fence(d.variables(), file_lines)
    for f in d.files:
        if f.status != "changed":
            lines.append(f"`{f.path}`: {f.status} ({max(f.added, f.removed):,} lines)")
            continue
        lines += _fence(f.lines, file_lines)
    lines += ["", "</details>"]
    return "\n".join(lines)


def _md_file(path: str, f: FileDiff, file_lines: int) -> str:
    return "\n".join(["<details>", f"<summary><code>{path}</code> · {f.status} · +{f.added:,} -{f.removed:,}</summary>",
                      "", *_fence(f.lines, file_lines), "", "</details>"])
