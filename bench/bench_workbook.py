"""Benchmark: the 24k references' cable run-list workbook (`teton.targets.cabling.runlist`), written and read back.

The workbook is made from a build (`teton cabling --xlsx`), not inside it; its writer is the same for 40 rows and
40,000, and tests/targets/test_runlist.py writes the labs' twice (deterministic) and reads them back.  The 24k's is
about a minute of openpyxl: timed here, with the same read-back check (every sheet's rows as written).

    .venv/bin/python bench/bench_workbook.py [--spec inventory/reference-roce-24k.yaml ...]
"""

from __future__ import annotations

import argparse
import resource
import time

from teton.fabric.cables import cables
from teton.pipeline import load_and_design
from teton.targets.cabling.runlist import COLUMNS, read_workbook, sheets, workbook_bytes

SPECS = ("inventory/reference-roce-24k.yaml", "inventory/reference-ib-24k.yaml")


def one(spec: str) -> None:
    found = cables(load_and_design(spec).fabric)
    by_sheet = sheets(found)
    t0 = time.perf_counter()
    data = workbook_bytes({name: (COLUMNS, r) for name, r in by_sheet.items()})
    written = time.perf_counter() - t0
    t0 = time.perf_counter()
    back = read_workbook(data)
    read = time.perf_counter() - t0
    same = list(back) == list(by_sheet) and all(
        back[name][0] == list(COLUMNS) and back[name][1:] == [list(r) for r in rows] for name, rows in by_sheet.items())
    rows = sum(len(r) for r in by_sheet.values())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{spec}: {rows:,} cables in {len(by_sheet)} sheets, {len(data) / 1e6:.1f} MB; written {written:.1f} s, "
          f"read back {read:.1f} s ({'the same rows' if same else 'ROWS DIFFER'}); peak {peak:,.0f} MiB")
    if not same:
        raise SystemExit(1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spec", action="append", help="a spec (repeatable); default: both 24k references")
    for spec in ap.parse_args().spec or SPECS:
        one(spec)


if __name__ == "__main__":
    main()
