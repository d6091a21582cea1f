"""What `teton docs` fills the report's sections with (`teton.report.sections`): the build's bill of materials
(`teton.report.sections.bom_tables`), `teton verify`'s results on the build, and, for the tiers asked for with
`--what-if ROLE`, the worst single failure of each (`teton verify --fail-each ROLE`).  Here, above the report
package, which needs neither the cabling target nor `teton.verify`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from teton.report.sections import Provider, Table, Unavailable, bom_tables


def report_providers(build: Path, what_if: Sequence[str], verify: bool = True) -> dict[str, Provider]:
    """The section providers for the report of the build folder `build`."""
    out: dict[str, Provider] = {"bom": bom_tables}
    if verify:
        out["verify"] = lambda fabric, folder: verify_tables(build)
    out["what_if"] = lambda fabric, folder: what_if_tables(build, what_if)
    return out


def verify_tables(build: Path) -> Sequence[Table]:
    """`teton verify BUILD`'s counts and findings."""
    from teton.verify.run import verify

    result = verify(build).to_json()
    counts = tuple((k, v) for k, v in sorted(result["counts"].items()) if isinstance(v, (int, float, str)))
    findings = tuple((f.get("rule", ""), f.get("device", f.get("file", "")), f.get("message", ""))
                     for f in result["findings"])
    verdict = "every assertion holds" if result["ok"] else f"{len(findings)} findings"
    out = [Table("What was checked", ("count", "value"), counts, note=verdict)]
    if findings:
        out.append(Table("Findings", ("rule", "where", "problem"), findings))
    return out


def what_if_tables(build: Path, roles: Sequence[str]) -> Sequence[Table]:
    """The worst single failure of each tier in `roles` (`teton verify BUILD --fail-each ROLE`)."""
    if not roles:
        raise Unavailable("give `teton docs --what-if ROLE` (ctsw, atsw, fsw ...) for each tier to sweep")
    from teton.verify.run import verify

    rows = []
    for role in roles:
        sweep = verify(build, (), role).to_json()["sweep"]
        worst = sweep["worst"]
        drop = worst.get("drop")
        towards = " (to other clusters)" if drop and drop.get("towards") == "other clusters" else ""
        paths = (f"{drop['role']}{towards} {drop['paths'][0]} -> {drop['paths'][1]}" if drop
                 else "no tier loses a path")
        bandwidth = f"{drop['bandwidth_gbps'][0]:g} -> {drop['bandwidth_gbps'][1]:g}" if drop else ""
        rows.append((role, sweep["failures"], worst["failed"], paths, bandwidth, worst["pairs_lost"],
                     worst["unreached_routes"], sweep["worst_oversubscription"]))
    return [Table("Worst single failure per tier", ("tier", "failures swept", "worst", "paths", "Gb/s",
                                                      "same-rail pairs lost", "routes lost", "worst oversubscription"),
                  tuple(rows))]
