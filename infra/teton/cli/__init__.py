"""teton's command line: validate, plan, render, verify, diff, drift, docs, twin, ib, sheets, targets, schema.  The
only place that prints and exits.

`app` assembles the `teton` group; one module per group of commands (`build`, `review`, `verify`, `twin`,
`cabling`) holds their commands, with what they share in `common`."""

from teton.cli.app import main

__all__ = ["main"]
