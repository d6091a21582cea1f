"""teton's command line: validate, plan, render, verify, diff, drift, twin, ib, targets, schema.  The only place that
prints and exits."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from teton import targets
from teton.findings import Finding, SpecError, TetonError

if TYPE_CHECKING:
    from teton.twin.reports import TwinResult

EXIT_BAD_INPUT = 2
_R = TypeVar("_R")
err = Console(stderr=True, highlight=False, soft_wrap=True)
out = Console(highlight=False, soft_wrap=True)


class _RegisteredTarget(click.Choice[str]):
    """A target's name, from the registry when the command runs (a target registered after import is offered)."""

    def __init__(self) -> None:
        super().__init__([])

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(targets.names())

    @choices.setter
    def choices(self, _: object) -> None:
        pass


def _report(findings: list[Finding], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps({"ok": not any(f.severity == "error" for f in findings),
                               "findings": [f.as_dict() for f in findings]}, indent=1, sort_keys=True))
        return
    for f in findings:
        colour = "red" if f.severity == "error" else "yellow"
        err.print(f"[{colour}]{f.severity}[/{colour}]: {escape(str(f))}", markup=True)


@contextmanager
def _bad_input(as_json: bool = False) -> Iterator[None]:
    try:
        yield
    except SpecError as exc:
        _report(exc.findings, as_json)
        n = sum(1 for f in exc.findings if f.severity == "error")
        err.print(f"{n} error{'s' if n != 1 else ''}.")
        sys.exit(EXIT_BAD_INPUT)
    except TetonError as exc:
        err.print(f"[red]error[/red]: {escape(str(exc))}", markup=True)
        sys.exit(EXIT_BAD_INPUT)


@contextmanager
def _progress(label: str, enabled: bool = True) -> Iterator[Any]:
    """A spinner on stderr while a long step runs (only on a terminal)."""
    if enabled and err.is_terminal:
        with err.status(label) as status:
            yield status
    else:
        yield None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="teton")
@click.option("--fboss-dir", type=click.Path(file_okay=False), envvar="TETON_FBOSS_DIR", default=None,
              help="FBOSS's reference files: IDL, platform mappings, base configs (default: shared/fboss in the "
              "folder holding the repo, then the copy scripts/fetch-fboss-data fetched; see docs/checks.md)")
def main(fboss_dir: str | None) -> None:
    """teton: GPU training clusters as code (spec -> fabric -> configs -> deploy)."""
    if fboss_dir:
        os.environ["TETON_FBOSS_DIR"] = fboss_dir   # every command, and the workers it forks, finds them there


SPEC_TIMEOUT = click.option("--spec-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
                            metavar="SECONDS", help="how long a Python spec may run (default 60, or "
                            "$TETON_SPEC_TIMEOUT)")
NO_CACHE = click.option("--no-cache", is_flag=True, help="render every device, ignoring the render cache "
                        "($TETON_CACHE_DIR, default ~/.cache/teton/render; TETON_CACHE=off turns it off too)")
YANG_DIR = click.option("--yang-dir", type=click.Path(), envvar="TETON_SONIC_YANG_DIR",
                        help="SONiC YANG models (default: shared/sonic-yang-models/yang in the folder holding the "
                        "repo, then the copy scripts/setup fetched; see docs/checks.md)")


@main.command()
@click.argument("spec", type=click.Path(dir_okay=False), required=False)
@click.option("--rendered", type=click.Path(file_okay=False), help="also check a rendered build folder: vendor "
              "schemas (SONiC YANG, pyavd) and cross-device rules (BGP both ends, MTU, QoS, router-ids)")
@YANG_DIR
@SPEC_TIMEOUT
@click.option("--json", "as_json", is_flag=True, help="findings as JSON")
def validate(spec: str | None, rendered: str | None, yang_dir: str | None, spec_timeout: float | None,
             as_json: bool) -> None:
    """Check SPEC (schema, then every rule over the spec and its fabric) and/or a rendered build folder."""
    from teton.build import load_and_design

    if spec is None and rendered is None:
        raise click.UsageError("give a SPEC, --rendered DIR, or both")
    findings: list[Finding] = []
    summary = []
    if spec is not None:
        with _bad_input(as_json), _progress("validating"):
            designed = load_and_design(spec, timeout=spec_timeout)
        findings += designed.warnings
        summary.append(f"{spec}: valid ({len(designed.fabric.devices)} devices, {len(designed.fabric.links)} links)")
    if rendered is not None:
        from teton.validate.rendered import validate_rendered

        with _bad_input(as_json), _progress(f"checking {rendered}"):
            found = validate_rendered(Path(rendered), Path(yang_dir) if yang_dir else None)
        if any(f.severity == "error" for f in found):
            with _bad_input(as_json):
                raise SpecError(findings + found)
        findings += found
        summary.append(f"{rendered}: vendor schemas and cross-device checks clean")
    _report(findings, as_json)
    if not as_json:
        for line in summary:
            err.print(line)


@main.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@SPEC_TIMEOUT
@click.option("--json", "as_json", is_flag=True, help="figures as JSON, for scripts")
def plan(spec: str, spec_timeout: float | None, as_json: bool) -> None:
    """Figures of SPEC's cluster, computed from its fabric, and its room to grow: each dimension's room and every
    address pool's blocks (held, taken at the room, taken now)."""
    from teton.build import load_and_design
    from teton.catalogue import catalogue_for
    from teton.design.capacity import room_report
    from teton.design.room import room_of
    from teton.fabric.plan import plan as figures

    with _bad_input(as_json), _progress("designing"):
        designed = load_and_design(spec, timeout=spec_timeout)
    p = figures(designed.fabric)
    p["room"] = room_report(designed.cluster, room_of(designed.cluster, catalogue_for(designed.cluster)),
                            designed.fabric)
    from teton.fabric.bom import bom

    p["bom"] = bom(designed.fabric)
    if as_json:
        click.echo(json.dumps(p, indent=1, sort_keys=True))
        return
    _report(designed.warnings, False)
    _print_plan(p)


def _print_plan(p: dict[str, Any]) -> None:
    t = Table(title=f"{p['cluster']} ({p['site']}), {p['backend']} backend", show_header=False)
    t.add_column(style="bold")
    t.add_column()
    t.add_row("GPUs / hosts / racks / zones", f"{p['gpus']:,} / {p['hosts']:,} / {p['racks']:,} / {p['zones']}")
    t.add_row("backend switches", ", ".join(f"{k} {v:,}" for k, v in p["switches"].items()))
    t.add_row("front-end switches", ", ".join(f"{k} {v:,}" for k, v in p["frontend_switches"].items()))
    t.add_row("models", "; ".join(f"{r}: " + ", ".join(f"{m} x{n:,}" for m, n in ms.items())
                                 for r, ms in p["switch_models"].items()))
    t.add_row("links", ", ".join(f"{k} {v:,}" for k, v in p["links"].items()))
    t.add_row("DAC cables / optics", f"{p['dac_cables']:,} / {p['optics']:,}")
    t.add_row("media (by link kind)", "\n".join(f"{k}: " + ", ".join(f"{m} {n:,}" for m, n in ms.items())
                                               for k, ms in p["media"].items()))
    t.add_row("injection / bisection", f"{p['injection_tbps']:,} Tb/s / {p['bisection_tbps']:,} Tb/s")
    t.add_row("oversubscription", ", ".join(f"{k} {v:g}:1" for k, v in p["oversubscription"].items()))
    s = p["storage"]
    t.add_row("storage", f"{s['servers']:,} servers in {s['racks']} racks, {s['drives']:,} drives, "
                         f"{s['raw_pb']} PB raw")
    t.add_row("power", f"{p['power_kw']:,} kW")
    from teton.design.room import NO_ROOM

    dims = p["room"]["dimensions"]
    t.add_row("room to grow", NO_ROOM if all(v["why"] == NO_ROOM for v in dims.values()) else "; ".join(
        f"{k.replace('_', ' ')} {v['now']:,} of {v['room']:,}" + (f" ({v['why']})" if v["why"] != "declared" else "")
        for k, v in dims.items() if v["room"]))
    t.add_row("pools (blocks now / at the room / held)",
              "\n".join(f"{u['pool']} {u['network']}: {u['now']:,} / {u['room']:,} / {u['blocks']:,}"
                        for u in p["room"]["pools"]))
    out.print(t)


@main.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(), help="build folder (default build/<cluster>/)")
@click.option("--only", multiple=True, type=_RegisteredTarget(),
              help="render only these targets (repeatable) and keep the other targets' files of the existing build")
@click.option("--force", is_flag=True, help="replace an output folder that is not a teton build")
@YANG_DIR
@SPEC_TIMEOUT
@click.option("--json", "as_json", is_flag=True, help="summary as JSON")
@click.option("--check", "check_dir", type=click.Path(file_okay=False), metavar="DIR",
              help="write nothing: compare DIR (intended configs committed to a repository) with what SPEC renders, "
              "list the stale files and exit 1 if there are any")
@NO_CACHE
@click.option("--live", is_flag=True, help="a build for the real fabric: refuse what only a simulation runs (an "
              "InfiniBand spec without backend.guid_map: synthetic GUIDs)")
def render(spec: str, output: str | None, only: tuple[str, ...], force: bool, yang_dir: str | None,
           spec_timeout: float | None, as_json: bool, check_dir: str | None, no_cache: bool, live: bool) -> None:
    """Render every artifact of SPEC into a build folder, atomically, with manifest.json."""
    from teton.build import build

    cache = _cache(no_cache)
    if check_dir is not None:
        if output or only or force:
            raise click.UsageError("--check compares a whole build: it takes no --output, --only or --force")
        _render_check(spec, Path(check_dir), yang_dir, spec_timeout, as_json, cache)
        return
    with _bad_input(as_json), _progress("designing") as status:
        def step(name: str) -> None:
            if status is not None:
                status.update(f"{'writing the build' if name == 'writing' else f'rendering {name}'}")

        result = build(spec, Path(output) if output else None, only=only or None,
                       yang_dir=Path(yang_dir) if yang_dir else None, force=force, progress=step,
                       timeout=spec_timeout, cache=cache, live=live)
    _report(result.warnings, False)
    summary: dict[str, Any] = {"output": str(result.path), "files": result.files, "rendered": list(result.rendered),
                               "kept": list(result.kept)}
    if cache is not None:
        summary["cache"] = {**cache.stats(), "replayed": result.replayed}
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True))
    else:
        kept = f" (kept {', '.join(result.kept)} from the previous build)" if result.kept else ""
        err.print(f"wrote {result.files} files to {result.path}/{kept}")
        if cache is not None:
            err.print(_cache_line(cache, result.replayed))


def _cache(no_cache: bool) -> Any:
    from teton.build.cache import RenderCache

    return None if no_cache else RenderCache.from_env()


def _cache_line(cache: Any, replayed: bool = False) -> str:
    s = cache.stats()
    how = "; the spec's render was replayed without designing" if replayed else ""
    if s.get("untrusted"):
        how += (f"; {s['untrusted']:,} cache entries failed their MAC (damaged, or not written with this user's cache "
                "key) and were rendered again, not replayed")
    if s.get("problem"):
        how += f"; the cache is not used: {escape(s['problem'])}"
    return (f"render cache {escape(s['dir'])}: {s['hits']:,} device configs from the cache, {s['misses']:,} rendered"
            f"{how}")


def _render_check(spec: str, folder: Path, yang_dir: str | None, spec_timeout: float | None, as_json: bool,
                  cache: Any) -> None:
    from teton.build.check import check_folder

    with _bad_input(as_json), _progress("rendering"):
        total, stale = check_folder(spec, folder, yang_dir=Path(yang_dir) if yang_dir else None,
                                    timeout=spec_timeout, cache=cache)
    if as_json:
        click.echo(json.dumps({"folder": str(folder), "files": total, "ok": not stale,
                               "stale": [s._asdict() for s in stale]}, indent=1, sort_keys=True))
    else:
        for s in stale:
            out.print(f"{s.why:<8} {escape(s.path)}")
        state = "up to date" if not stale else f"{len(stale):,} stale file(s): render {spec} -o {folder} to update"
        err.print(f"{folder}: {total:,} files compared; {state}")
    if stale:
        sys.exit(1)


@main.command("targets")
@click.option("--json", "as_json", is_flag=True)
def list_targets(as_json: bool) -> None:
    """The registered targets: what `render --only` takes and which NOS each configures."""
    rows = [{"name": t.name, "nos": t.nos, "version": t.version, "summary": t.summary} for t in targets.targets()]
    if as_json:
        click.echo(json.dumps(rows, indent=1, sort_keys=True))
        return
    t = Table(show_header=True)
    for col in ("target", "NOS", "what it writes"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["name"], r["nos"] or "", r["summary"])
    out.print(t)


@main.group()
def twin() -> None:
    """Digital twin of a build's backend and front end: network namespaces, real FRR, every server (needs root).

    `up` takes a spec (rendered first) or a build folder; the other commands take the twin: its name, or the spec or
    build folder it came from (only the cluster's name is read from it: the twin runs and checks the build it was
    started with)."""


def _twin_call(fn: Callable[..., _R], as_json: bool, *args: Any) -> _R:
    import os

    from teton.twin.runtime import TwinError

    if os.geteuid() != 0:
        err.print("teton twin needs root (network namespaces, FRR daemons)")
        sys.exit(EXIT_BAD_INPUT)
    with _bad_input(as_json):
        try:
            return fn(*args)
        except TwinError as exc:   # the twin itself failed (a daemon, the kernel): not bad input
            err.print(f"[red]error[/red]: {escape(str(exc))}", markup=True)
            sys.exit(1)


def _twin_out(result: TwinResult, as_json: bool, ok: bool = True) -> None:
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1, sort_keys=True))
    else:
        out.print_json(json.dumps(result.to_json(), sort_keys=True))
    if not ok:
        sys.exit(1)


@twin.command("up")
@click.argument("spec", metavar="SPEC|BUILD", type=click.Path(exists=True))
@click.option("--json", "as_json", is_flag=True)
def twin_up(spec: str, as_json: bool) -> None:
    """Start the backend fabric of SPEC (rendered first) or of a BUILD folder: one namespace per switch and host,
    zebra+bgpd per switch."""
    from teton.deploy.drift import secrets_from_env
    from teton.twin import service

    with _progress("starting the twin"):   # TETON_SECRET_<name> variables: run the site's secrets, as a deploy pushes
        r = _twin_call(service.up, as_json, spec, secrets_from_env() or None)
    _twin_out(r, as_json, not r.ecmp_mismatches)


@twin.command("verify")
@click.argument("spec", metavar="TWIN")
@click.option("--ping-sample", type=click.IntRange(min=1), default=None,
              help="same-rail pings at most (default 1024; all on small twins)")
@click.option("--json", "as_json", is_flag=True)
def twin_verify(spec: str, ping_sample: int | None, as_json: bool) -> None:
    """BGP sessions as designed, same-rail host NICs reach each other, ECMP as wide as the design (exit 1 if not)."""
    from teton.twin import service

    kwargs = {} if ping_sample is None else {"ping_sample": ping_sample}
    with _progress("verifying"):
        r = _twin_call(lambda s: service.verify(s, **kwargs), as_json, spec)
    _twin_out(r, as_json, r.ok)


@twin.command("fail")
@click.argument("spec", metavar="TWIN")
@click.argument("what", metavar="DEVICE[:PORT]")
@click.option("--how", type=click.Choice(["kill", "freeze", "links"]), default="kill", show_default=True,
              help="for a switch: kill its daemons, freeze them (peers notice at the hold timer), or cut its links")
@click.option("--json", "as_json", is_flag=True)
def twin_fail(spec: str, what: str, how: str, as_json: bool) -> None:
    """Fail a switch (DEVICE) or a link (DEVICE:PORT): how long the fabric takes to reconverge, which racks lost
    paths, and whether every host still reaches its rails' peers and, over the front end, storage and the
    scheduler (exit 1 if not)."""
    from teton.twin import service

    with _progress(f"failing {what}"):
        r = _twin_call(service.fail, as_json, spec, what, how)
    _twin_out(r, as_json, r.survived)


@twin.command("restore")
@click.argument("spec", metavar="TWIN")
@click.option("--json", "as_json", is_flag=True)
def twin_restore(spec: str, as_json: bool) -> None:
    """Bring every failed switch and link back (and any daemon that died), and measure reconvergence."""
    from teton.twin import service

    with _progress("restoring"):
        r = _twin_call(service.restore, as_json, spec)
    _twin_out(r, as_json, not r.reconvergence.ecmp_mismatched)


@twin.command("down")
@click.argument("spec", metavar="TWIN")
@click.option("--json", "as_json", is_flag=True)
def twin_down(spec: str, as_json: bool) -> None:
    """Stop the twin and remove everything it made, also leftovers of a crashed run (found by name)."""
    from teton.twin import service

    _twin_out(_twin_call(service.down, as_json, spec), as_json)


@main.command()
def schema() -> None:
    """Print the spec's JSON Schema (2020-12)."""
    from teton.spec.schema import spec_schema

    click.echo(json.dumps(spec_schema(), indent=1, sort_keys=True))


@main.group()
def ib() -> None:
    """InfiniBand: check a fabric's cabling against its design."""


@ib.command("verify")
@click.argument("spec", type=click.Path(dir_okay=False))
@click.option("--discovered", required=True, type=click.Path(dir_okay=False), metavar="FILE",
              help="an ibnetdiscover dump (`ibnetdiscover > FILE` on any host of the fabric)")
@SPEC_TIMEOUT
@click.option("--json", "as_json", is_flag=True, help="the report as JSON")
def ib_verify(spec: str, discovered: str, spec_timeout: float | None, as_json: bool) -> None:
    """Compare an ibnetdiscover dump with SPEC's expected topology: missing, extra and miswired links by device and
    port name (exit 1 when they differ, 2 on bad input)."""
    from teton.build import load_and_design
    from teton.targets.opensm.verify import verify_dump

    with _bad_input(as_json), _progress("comparing"):
        designed = load_and_design(spec, timeout=spec_timeout)
        if designed.fabric.subnet_manager is None:
            from teton.spec.load import spec_lines, with_lines

            raise SpecError(with_lines([Finding(spec, "backend.kind", f"{designed.fabric.name} has a "
                                                f"{designed.fabric.backend} backend: there is no InfiniBand topology "
                                                "to verify", rule="ib")], spec_lines(spec)))
        report = verify_dump(designed.fabric, Path(discovered))
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=1, sort_keys=True))
    else:
        for a, b in report.missing:
            out.print(f"missing   {escape(a)} <-> {escape(b)}")
        for m in report.miswired:
            out.print(f"miswired  expected {escape(m['expected'])}; found {escape(m['found'])}")
        for a, b in report.extra:
            out.print(f"extra     {escape(a)} <-> {escape(b)}")
        state = "as designed" if report.ok else (f"{len(report.missing)} missing, {len(report.miswired)} miswired, "
                                                 f"{len(report.extra)} extra")
        err.print(f"{discovered}: {report.found:,} of {report.links:,} links of the design found; {state}")
    if not report.ok:
        sys.exit(1)


@main.command("diff")
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

    cache = _cache(no_cache)
    with _bad_input(fmt == "json"), _progress("comparing"):
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
    _report(result.warnings, False)
    if not output:
        click.echo(text, nl=False)
    err.print(f"verdict {result.level.upper()}: {len(result.devices_changed):,} device(s) change")
    if cache is not None:
        err.print(_cache_line(cache))
    code = result.exit_code(allow_high)
    if code == 2:
        err.print("[red]refused[/red]: the verdict is HIGH (give --allow-high to accept it)", markup=True)
    sys.exit(code)


@click.command("routing")
@click.argument("build", type=click.Path(file_okay=False))
@click.option("--fail", "fail", multiple=True, metavar="DEVICE|LINK",
              help="what if this fails (repeatable): a device, or a link DEV:PORT--DEV:PORT (or DEV:PORT)")
@click.option("--fail-each", metavar="ROLE", help="every single failure of the devices of ROLE (ctsw, atsw, fsw ...), "
              "and the worst")
@click.option("--dask", "dask_address", metavar="tcp://HOST:PORT|local|off", default=None,
              help="solve on a Dask cluster: a scheduler's address, `local` (a LocalCluster on this machine) or `off`; "
              "default: a LocalCluster when the build is large, else in this process")
@click.option("--json", "as_json", is_flag=True, help="the report as JSON")
def verify_cmd(build: str, fail: tuple[str, ...], fail_each: str | None, dask_address: str | None,
               as_json: bool) -> None:
    """Prove the cluster's routing from BUILD's rendered switch configs: the BGP sessions both ends agree on, every
    switch's best routes to every prefix (RFC 7938 eBGP, ECMP within maximum-paths), then the design's promises
    (rack prefixes everywhere with its ECMP widths, loopbacks, the front end's reach, no link subnet leaked, no
    valley, nothing it does not originate).  Exit 1 when an assertion fails, 2 on bad input."""
    from teton.verify.distributed import mapper_for
    from teton.verify.report import summary, sweep_lines, whatif_lines
    from teton.verify.run import verify

    with _bad_input(as_json), _progress("verifying"):
        with mapper_for(dask_address, Path(build)) as mapper:
            result = verify(Path(build), fail, fail_each, mapper)
    if as_json:
        click.echo(json.dumps(result.to_json(), indent=1, sort_keys=True))
    else:
        for f in result.findings:
            colour = "red" if f.severity == "error" else "yellow"
            out.print(f"[{colour}]{f.severity}[/{colour}]: {escape(str(f))}", markup=True)
        for w in result.whatif:
            for line in whatif_lines(w):
                out.print(escape(line))
        if result.sweep is not None:
            for line in sweep_lines(result.sweep):
                out.print(escape(line))
        errors = sum(1 for f in result.findings if f.severity == "error")
        err.print(summary(result) + (f"; {errors} assertion(s) failed" if errors else "; every assertion holds"))
    if not result.ok:
        sys.exit(1)


@main.command("drift")
@click.argument("build", type=click.Path(exists=True, file_okay=False))
@click.option("--twin", "twin_name", default=None, help="the twin's name (default: the build's cluster)")
@click.option("--json", "as_json", is_flag=True)
def drift(build: str, twin_name: str | None, as_json: bool) -> None:
    """What each switch of the twin runs that differs from BUILD, device by device (FRR's own frr-reload --test);
    secrets from TETON_SECRET_<name> variables, never printed.  Exit 1 when a device drifted."""
    from teton.deploy.drift import twin_drift

    r = _twin_call(twin_drift, as_json, Path(build), twin_name)
    if as_json:
        click.echo(json.dumps(r, indent=1, sort_keys=True))
    else:
        for device, lines in r["devices"].items():
            out.print(f"[bold]{escape(device)}[/bold]", markup=True)
            for line in lines:
                colour = "green" if line.startswith("+") else "red"
                out.print(f"  [{colour}]{escape(line)}[/{colour}]", markup=True)
        note = "" if r["passwords_compared"] else " (BGP passwords not compared: give TETON_SECRET_<name>)"
        err.print(f"{len(r['drifted'])} of {r['switches']} switches of twin {r['twin']} drifted{note}")
    if r["drifted"]:
        sys.exit(1)


@main.command("docs")
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
    from teton.buildfolder import BuildFolder
    from teton.report import write_report

    out_dir = Path(output)
    with _bad_input(), _progress("writing the report"):
        if Path(source).is_dir():
            folder = BuildFolder.open(source)
        else:
            from teton.build import build

            folder = BuildFolder.open(build(source, out_dir / "build", timeout=spec_timeout,
                                            cache=_cache(no_cache)).path)
        from teton.cli_report import providers

        index = write_report(folder.fabric(), out_dir, folder, providers(Path(folder.root or source), what_if,
                                                                      not no_verify))
    err.print(f"wrote {index} ({index.stat().st_size:,} bytes)")


from teton.cli_cabling import register as _register_cabling  # noqa: E402  (its commands use the helpers above)
from teton.cli_cabling import verify as _verify_group  # noqa: E402

_register_cabling(main)
_verify_group.add_command(verify_cmd, "routing")   # `teton verify BUILD` is `teton verify routing BUILD`
_verify_group.default = "routing"

if __name__ == "__main__":
    main()
