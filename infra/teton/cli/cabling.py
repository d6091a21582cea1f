"""`teton sheets BUILD -o DIR`: the run list and the bill of materials as XLSX workbooks."""

from __future__ import annotations

from pathlib import Path

import click

from teton.cli.common import bad_input, err


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

    with bad_input():
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
    err.print(f"wrote {folder / 'run-list.xlsx'} ({len(found):,} cables) and {folder / 'bom.xlsx'}")
