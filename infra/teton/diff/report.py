"""The diff as text (every line, for a terminal or an artifact), markdown (a pull-request comment, kept under GitHub's
limit) or JSON (for scripts: `devices_changed`, `verdict`, `reasons`, `summary`, every device's diffs)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from typing import Any

from teton.diff.engine import Comparison, DeviceChange
from teton.diff.textdiff import FileDiff
from teton.diff.verdict import Reason
from teton.fabric.roles import report_rank

MARKDOWN_LIMIT = 60_000          # characters; GitHub refuses a comment over 65,536
MARKDOWN_FILE_LINES = 120        # diff lines shown per file in markdown


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

    data = {
        "old": c.old.label, "new": c.new.label, "verdict": level,
        "reasons": [r._asdict() for r in reasons],
        "devices_changed": [d.name for d in c.devices],
        "summary": summary(c),
        "devices": [{"name": d.name, "role": d.info.role, "zone": d.info.zone, "rack": d.info.rack,
                     "plane": d.info.plane, "status": d.status, "files": [file(f) for f in d.files],
                     "changed_fields": d.changed_fields(),
                     "sessions_added": sorted(" ".join(s) for s in d.sessions()[0]),
                     "sessions_removed": sorted(" ".join(s) for s in d.sessions()[1]),
                     "variables": d.variables() if d.is_host else []} for d in c.devices],
        "files": [file(f) for f in c.files],
    }
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def _totals(s: dict[str, Any]) -> str:
    tiers = ", ".join(f"{role} {sum(v.values()):,}" for role, v in s["tiers"].items())
    return (f"{s['devices']:,} devices ({tiers}); {s['files_changed']:,} files, +{s['lines_added']:,} "
            f"-{s['lines_removed']:,} lines; BGP sessions +{s['bgp_sessions_added']:,} "
            f"-{s['bgp_sessions_removed']:,}; addresses {s['addresses_changed']:,} changed, "
            f"{s['addresses_added']:,} added, {s['addresses_removed']:,} removed; "
            f"{s['hosts_changed']:,} hosts with changed variables")


def _headline(d: DeviceChange) -> str:
    added = sum(f.added for f in d.files)
    removed = sum(f.removed for f in d.files)
    a, r = d.sessions()
    parts = [d.status, f"+{added:,} -{removed:,}"]
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
    for role, zone, items in groups(c):
        out.append("")
        out.append(f"=== {role} · {_zone_text(zone)} · {len(items):,} device(s)")
        for d in items:
            out.append(f"# {d.name} ({d.info.rack}): {_headline(d)}")
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
                file_lines: int = MARKDOWN_FILE_LINES) -> str:
    icon = {"none": "⚪", "low": "🟢", "medium": "🟡", "high": "🔴"}[level]
    head = [f"### teton diff: `{c.old.label}` → `{c.new.label}`", "",
            f"**Verdict: {icon} {level.upper()}**", ""]
    head += [f"- **{r.level}**: {r.message} (`{r.rule}`)" for r in reasons]
    if not c.devices and not c.files:
        return "\n".join(head + ["", "No device and no file changes."]) + "\n"
    s = summary(c)
    head += ["", _totals(s), "", "| tier | zone | changed | added | removed |", "| --- | --- | ---: | ---: | ---: |"]
    for role, zone, items in groups(c):
        n = Counter(d.status for d in items)
        head.append(f"| {role} | {zone if zone is not None else '-'} | {n['changed']:,} | {n['added']:,} | "
                    f"{n['removed']:,} |")
    body: list[str] = []
    used = sum(len(x) + 1 for x in head) + 400
    shown = hidden = 0
    for role, zone, items in groups(c):
        section = ["", f"#### {role} · {_zone_text(zone)} ({len(items):,})", ""]
        for d in items:
            block = _md_device(d, file_lines)
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


def _md_device(d: DeviceChange, file_lines: int) -> str:
    lines = ["<details>", f"<summary><code>{d.name}</code> ({d.info.rack}) · {_headline(d)}</summary>", ""]
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
