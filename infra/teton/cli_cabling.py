"""teton's cabling commands: `teton verify cabling BUILD --lldp DIR`, `teton sheets BUILD -o DIR`, and the twin's
`teton twin lldp TWIN -o DIR` and `teton twin swap TWIN A B`.

`verify` is a group whose subcommands check a build against what runs (`cabling`: the wiring, from LLDP).  A plain
`teton verify BUILD ...` (no subcommand name first) runs the group's default subcommand when one is registered
(`verify.add_command(cmd, "routing"); verify.default = "routing"`), so a routing check can be `teton verify BUILD`
beside `teton verify cabling BUILD`.  Registered into `teton.cli` by `register`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click


class DefaultGroup(click.Group):
    """A group that runs `default` when its first argument is no subcommand's name."""

    default: str | None = None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if self.default and args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup)
def verify() -> None:
    """Check a build against what the fabric shows: `verify cabling BUILD --lldp DIR` (the wiring, from LLDP)."""


def _cli() -> Any:
    from teton import cli

    return cli


@verify.command("cabling")
@click.argument("build", type=click.Path(file_okay=False))
@click.option("--lldp", "lldp_dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="collected LLDP, one file per device named after it: `lldpctl -f json`, SONiC's `show lldp "
              "table` as JSON or APPL_DB LLDP_ENTRY_TABLE, EOS `show lldp neighbors | json`")
@click.option("--json", "as_json", is_flag=True, help="the report as JSON")
def verify_cabling(build: str, lldp_dir: str, as_json: bool) -> None:
    """Compare what every device's LLDP saw with BUILD's expected neighbours (cabling/neighbours.json): swapped,
    miswired, missing and extra cables by device, port and cable id (exit 1 when any, 2 on bad input)."""
    from rich.markup import escape

    from teton.buildfolder import BuildFolder
    from teton.fabric.neighbours import NEIGHBOURS_FILE, load_neighbours
    from teton.findings import TetonError
    from teton.targets.cabling.lldp import LldpError, read_dir
    from teton.targets.cabling.verify import compare

    cli = _cli()
    with cli._bad_input(as_json):
        try:
            text = BuildFolder(Path(build)).text(NEIGHBOURS_FILE)
            try:
                expected = load_neighbours(text)
            except (ValueError, KeyError, TypeError, AttributeError) as exc:
                raise TetonError(f"{Path(build) / NEIGHBOURS_FILE}: not what teton writes ({exc}); render the spec "
                                 "again") from None
            collected = read_dir(Path(lldp_dir))
        except LldpError as exc:
            raise TetonError(str(exc)) from None
        if not collected:
            raise TetonError(f"{lldp_dir}: no LLDP file (one per device, named after it)")
        unknown = sorted(d for d in collected if d not in expected)
        if unknown:
            raise TetonError(f"{collected[unknown[0]][0]}: {unknown[0]!r} is no device of the build with an LLDP "
                             f"port ({len(unknown)} such file(s)); name each file after its device")
        report = compare(expected, {d: seen for d, (_, seen) in collected.items()})
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=1, sort_keys=True))
    else:
        out = cli.out
        for s in report.swapped:
            out.print(f"swapped   cables {escape(' and '.join(s['cables']))}: {escape('; '.join(s['ends']))}")
        for m in report.miswired:
            far = f" (the far end of cable {m['found_cable']})" if m["found_cable"] else ""
            out.print(f"miswired  {escape(m['device'])} {escape(m['port'])} (cable {escape(m['cable'])}) sees "
                      f"{escape(m['found'])}{escape(far)}, expected {escape(m['expected'])}")
        for m in report.missing:
            out.print(f"missing   cable {escape(m['cable'])}: {escape(m['a'])} <-> {escape(m['b'])}")
        for e in report.extra:
            beside = f" beside its designed neighbour {e['beside']}" if e.get("beside") else ""
            out.print(f"extra     {escape(e['device'])} {escape(e['port'])} sees {escape(e['found'])}{escape(beside)}")
        for w in report.one_way:
            out.print(f"one-way   cable {escape(w['cable'])}: seen by {escape(w['seen_by'])}, not by "
                      f"{escape(w['not_seen_by'])}")
        state = "as designed" if report.ok else (
            f"{len(report.swapped)} swapped, {len(report.miswired)} miswired, {len(report.missing)} missing, "
            f"{len(report.extra)} extra")
        gaps = f"; {len(report.not_collected):,} devices not collected" if report.not_collected else ""
        cli.err.print(f"{lldp_dir}: {report.as_designed:,} of {report.ports:,} ports of {report.devices:,} devices "
                      f"see their designed neighbour; {state}{gaps}")
    if not report.ok:
        sys.exit(1)


@click.command("sheets")
@click.argument("build", type=click.Path(file_okay=False))
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="folder to write run-list.xlsx and bom.xlsx into (made if missing)")
def sheets(build: str, output: str) -> None:
    """The run list and the bill of materials of BUILD as XLSX workbooks: run-list.xlsx (a sheet per zone and one
    for the spines; frozen header, filters, fitting widths) and bom.xlsx (the BOM and every rack's power)."""
    from teton.buildfolder import BuildFolder
    from teton.fabric.bom import BOM_COLUMNS, RACK_COLUMNS, bom, bom_rows, rack_loads, rack_rows
    from teton.fabric.cables import cables
    from teton.findings import TetonError
    from teton.targets.cabling.runlist import COLUMNS, workbook_bytes
    from teton.targets.cabling.runlist import sheets as by_sheet

    cli = _cli()
    with cli._bad_input():
        fabric = BuildFolder(Path(build)).fabric()
        found = cables(fabric)
        run_list = workbook_bytes({name: (COLUMNS, rows) for name, rows in by_sheet(found).items()})
        materials = workbook_bytes({"bom": (BOM_COLUMNS, bom_rows(bom(fabric, found))),
                                    "rack power": (RACK_COLUMNS, rack_rows(rack_loads(fabric)))})
        folder = Path(output)
        try:
            folder.mkdir(parents=True, exist_ok=True)
            for name, data in (("run-list.xlsx", run_list), ("bom.xlsx", materials)):
                tmp = folder / f".{name}.tmp"        # a workbook is whole or the previous one: written, then renamed
                tmp.write_bytes(data)
                tmp.replace(folder / name)
        except OSError as exc:
            raise TetonError(f"{folder}: cannot be written: {exc.strerror or exc}") from None
    cli.err.print(f"wrote {folder / 'run-list.xlsx'} ({len(found):,} cables) and {folder / 'bom.xlsx'}")


@click.command("lldp")
@click.argument("which", metavar="TWIN")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="folder for one `lldpctl -f json` file per device (what `teton verify cabling` reads)")
@click.option("--json", "as_json", is_flag=True, help="the report as JSON only")
def twin_lldp(which: str, output: str, as_json: bool) -> None:
    """Run lldpd in every namespace of the twin (each announcing what its device's files configure: SONiC's PORT
    aliases, EOS's and FBOSS's port names, the lldpd role's variables on a server) and write what every device
    sees into DIR; `teton verify cabling BUILD --lldp DIR` compares it with the design.  Exit 1 when what lldpd
    saw did not settle to what the twin's cables show."""
    from teton.twin import service

    cli = _cli()
    r = cli._twin_call(service.lldp, as_json, which, Path(output))
    cli._twin_out(r, as_json, r.settled)


@click.command("swap")
@click.argument("which", metavar="TWIN")
@click.argument("a", metavar="DEVICE:PORT")
@click.argument("b", metavar="DEVICE:PORT")
@click.option("--json", "as_json", is_flag=True, help="the report as JSON only")
def twin_swap(which: str, a: str, b: str, as_json: bool) -> None:
    """Cross two cables on purpose: the ports A and B trade their far ends and keep their addresses (the same two
    again, or `teton twin restore`, put them back)."""
    from teton.twin import service

    cli = _cli()
    cli._twin_out(cli._twin_call(service.swap, as_json, which, a, b), as_json)


def register(main: click.Group) -> None:
    """Add the cabling commands to teton's command line (and `twin lldp`, `twin swap` to its twin group)."""
    main.add_command(verify)
    main.add_command(sheets)
    twin = main.commands.get("twin")
    if isinstance(twin, click.Group):
        twin.add_command(twin_lldp)
        twin.add_command(twin_swap)
