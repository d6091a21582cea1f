"""The commands that show a change or a build to people: `diff` (what changes from one spec to another, and its
blast radius), `docs` (a build's HTML report) and `drift` (what a twin runs that differs from its build)."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from teton.cli.common import (
    NO_CACHE,
    SPEC_TIMEOUT,
    YANG_DIR,
    bad_input,
    cache_line,
    echo_json,
    err,
    out,
    progress,
    render_cache,
    report,
    twin_call,
)
from teton.findings import TetonError


@click.command("diff")
@click.argument("old", metavar="OLD")
@click.argument("new", metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True)
@click.option("--allow-high", is_flag=True, help="exit 1, not 2, when the verdict is HIGH")
@click.option("-U", "--context", type=click.IntRange(min=0, max=1000), default=3, show_default=True,
              help="lines of context around each change")
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="write the report to this file")
@click.option("--report-url", metavar="URL", help="markdown: link NEW's report (`teton docs`) published at URL")
@click.option("--diagram", type=click.Path(dir_okay=False), metavar="PATH",
              help="write the SVG of what changes to PATH (markdown: shown from URL/<its name>)")
@YANG_DIR
@SPEC_TIMEOUT
@NO_CACHE
def diff(old: str, new: str, fmt: str, allow_high: bool, context: int, output: str | None, report_url: str | None,
         diagram: str | None, yang_dir: str | None, spec_timeout: float | None, no_cache: bool) -> None:
    """What changes from spec OLD to spec NEW (each a file or GIT_REF:path, read with git show): per-device diffs of
    every rendered file by tier and zone, a summary, and the blast radius (none, low, medium, high) with its reasons.

    Exit 0 when nothing changes, 1 when something does, 2 on bad input, or when the verdict is HIGH (unless
    --allow-high)."""
    from teton.diff import Links, diff_specs
    from teton.site.load import is_site_spec

    if is_site_spec(old) or is_site_spec(new):
        if not (is_site_spec(old) and is_site_spec(new)):
            raise click.UsageError("OLD and NEW: two site specs, or two cluster specs")
        if report_url or diagram or allow_high:
            raise click.UsageError("--report-url, --diagram, --allow-high: a cluster spec's diff only")
        from teton.cli.site import diff_site_command

        diff_site_command(old, new, fmt, context, output, yang_dir, no_cache)
        return
    cache = render_cache(no_cache)
    with bad_input(fmt == "json"), progress("comparing"):
        links = Links(report_url, diagram)
        result = diff_specs(old, new, cache=cache, yang_dir=Path(yang_dir) if yang_dir else None,
                            timeout=spec_timeout, context=context, diagram=bool(diagram))
        text = result.render(fmt, links=links)
        for path, content in ((output, text), (diagram, result.diagram)):
            if path and content is not None:
                try:
                    Path(path).write_text(content, encoding="utf-8", newline="\n")
                except OSError as exc:
                    raise TetonError(f"{path}: cannot be written: {exc.strerror or exc}") from None
    report(result.warnings, False)
    if not output:
        click.echo(text, nl=False)
    err.print(f"verdict {result.level.upper()}: {len(result.devices_changed):,} device(s) change")
    if cache is not None:
        err.print(cache_line(cache))
    code = result.exit_code(allow_high)
    if code == 2:
        err.print("[red]refused[/red]: the verdict is HIGH (give --allow-high to accept it)", markup=True)
    sys.exit(code)


@click.command("drift")
@click.argument("build", type=click.Path(exists=True, file_okay=False))
@click.option("--twin", "twin_name", default=None, help="the twin's name (default: the build's cluster)")
@click.option("--json", "as_json", is_flag=True)
def drift(build: str, twin_name: str | None, as_json: bool) -> None:
    """What each switch of the twin runs that differs from BUILD, device by device (FRR's own frr-reload --test);
    secrets from TETON_SECRET_<name> variables, never printed.  Exit 1 when a device drifted."""
    from teton.deploy.drift import twin_drift

    r = twin_call(twin_drift, as_json, Path(build), twin_name)
    if as_json:
        echo_json(r)
    else:
        for device, lines in r["devices"].items():
            out.print(f"[bold]{escape(device)}[/bold]", markup=True)
            for line in lines:
                colour = "green" if line.startswith("+") else "red"
                out.print(f"  [{colour}]{escape(line)}[/{colour}]", markup=True)
        note = "" if r["passwords_compared"] else " (BGP passwords not compared: give TETON_SECRET_<name>)"
        err.print(f"{len(r['drifted'])} of {r['switches']} switches of twin {escape(str(r['twin']))} drifted{note}")
    if r["drifted"]:
        sys.exit(1)


@click.command("docs")
@click.argument("source", metavar="SPEC|BUILD", type=click.Path(exists=True))
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="the report's folder (index.html; from a SPEC, the build too, in DIR/build/)")
@SPEC_TIMEOUT
@NO_CACHE
@click.option("--what-if", "what_if", multiple=True, metavar="ROLE", help="sweep every single failure of ROLE's "
              "devices (teton verify --fail-each) for the what-if table (repeatable)")
@click.option("--no-verify", is_flag=True, help="leave out teton verify's results")
def docs(source: str, output: str, spec_timeout: float | None, no_cache: bool, what_if: tuple[str, ...],
         no_verify: bool) -> None:
    """A self-contained HTML report of SPEC (rendered first, into DIR/build/) or of a BUILD folder: the cluster and
    each zone drawn, the plan's figures, the bill of materials and verification where given, every device's files."""
    from teton.buildfolder import FABRIC_JSON, BuildFolder
    from teton.fabric.serialize import FabricFormatError
    from teton.report import write_report
    from teton.verify.sections import report_providers

    out_dir = Path(output)
    with bad_input(), progress("writing the report"):
        if Path(source).is_dir():
            folder = BuildFolder.open(source)
        else:
            from teton.pipeline import build

            folder = BuildFolder.open(build(source, out_dir / "build", timeout=spec_timeout,
                                            cache=render_cache(no_cache)).path)
        providers = report_providers(Path(folder.root or source), what_if, not no_verify)
        try:
            fabric = folder.fabric()
        except FabricFormatError as exc:
            raise TetonError(f"{Path(folder.root or source) / FABRIC_JSON}: {exc}") from None
        index = write_report(fabric, out_dir, folder, providers)
    err.print(f"wrote {escape(str(index))} ({index.stat().st_size:,} bytes)")
