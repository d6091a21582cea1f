"""The commands that check, figure and render a spec: `validate`, `plan`, `render` (and `render --check`),
`targets`, `schema`."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape
from rich.table import Table

from teton import targets
from teton.cli.common import (
    NO_CACHE,
    SPEC_TIMEOUT,
    YANG_DIR,
    bad_input,
    cache_line,
    echo_json,
    err,
    out,
    plain,
    progress,
    render_cache,
    report,
)
from teton.cli.site import render_site_command, site_options
from teton.findings import Finding, SpecError

if TYPE_CHECKING:
    from teton.pipeline.cache import RenderCache


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


@click.command()
@click.argument("spec", type=click.Path(dir_okay=False), required=False)
@click.option("--rendered", type=click.Path(file_okay=False), help="also check a rendered build folder: vendor "
              "schemas (SONiC YANG, pyavd) and cross-device rules (BGP both ends, MTU, QoS, router-ids)")
@YANG_DIR
@SPEC_TIMEOUT
@click.option("--json", "as_json", is_flag=True, help="findings as JSON")
def validate(spec: str | None, rendered: str | None, yang_dir: str | None, spec_timeout: float | None,
             as_json: bool) -> None:
    """Check SPEC (schema, then every rule over the spec and its fabric) and/or a rendered build folder."""
    from teton.pipeline import load_and_design

    if spec is None and rendered is None:
        raise click.UsageError("give a SPEC, --rendered DIR, or both")
    findings: list[Finding] = []
    summary = []
    if spec is not None:
        with bad_input(as_json), progress("validating"):
            designed = load_and_design(spec, timeout=spec_timeout)
        findings += designed.warnings
        summary.append(f"{spec}: valid ({len(designed.fabric.devices)} devices, {len(designed.fabric.links)} links)")
    if rendered is not None:
        from teton.fabric.externals import site_sessions_line
        from teton.validate.rendered import check_rendered

        with bad_input(as_json), progress(f"checking {rendered}"):
            checked = check_rendered(Path(rendered), Path(yang_dir) if yang_dir else None)
        found = checked.findings
        if any(f.severity == "error" for f in found):
            with bad_input(as_json):
                raise SpecError(findings + found)
        findings += found
        site = f"; {site_sessions_line(checked.site_sessions)}" if checked.site_sessions is not None else ""
        summary.append(f"{rendered}: vendor schemas and cross-device checks clean{site}")
    report(findings, as_json)
    if not as_json:
        for line in summary:
            err.print(escape(line))


@click.command()
@click.argument("spec", type=click.Path(dir_okay=False))
@SPEC_TIMEOUT
@click.option("--json", "as_json", is_flag=True, help="figures as JSON, for scripts")
def plan(spec: str, spec_timeout: float | None, as_json: bool) -> None:
    """Figures of SPEC's cluster, computed from its fabric, and its room to grow: each dimension's room and every
    address pool's blocks (held, taken at the room, taken now).  A SITE spec: each cluster's figures, the tier's and
    the site's totals."""
    from teton.pipeline import load_and_design
    from teton.pipeline.figures import plan_figures
    from teton.site.load import is_site_spec

    if is_site_spec(spec):
        from teton.cli.site import plan_site_command

        plan_site_command(spec, as_json)
        return
    with bad_input(as_json), progress("designing"):
        designed = load_and_design(spec, timeout=spec_timeout)
    p = plan_figures(designed)
    if as_json:
        echo_json(p)
        return
    report(designed.warnings, False)
    _print_plan(p)


def _row(t: Table, key: str, value: str) -> None:
    """A row of the plan's table: its value is data (names, sites, mounts), shown as it is (no markup)."""
    t.add_row(key, plain(value))


def _print_plan(p: dict[str, Any]) -> None:
    from teton.design.room import NO_ROOM

    t = Table(title=plain(f"{p['cluster']} ({p['site']}), {p['backend']} backend"), show_header=False)
    t.add_column(style="bold")
    t.add_column()
    _row(t, "GPUs / hosts / racks / zones", f"{p['gpus']:,} / {p['hosts']:,} / {p['racks']:,} / {p['zones']}")
    _row(t, "backend switches", ", ".join(f"{k} {v:,}" for k, v in p["switches"].items()))
    _row(t, "front-end switches", ", ".join(f"{k} {v:,}" for k, v in p["frontend_switches"].items()))
    _row(t, "models", "; ".join(f"{r}: " + ", ".join(f"{m} x{n:,}" for m, n in ms.items())
                                 for r, ms in p["switch_models"].items()))
    _row(t, "links", ", ".join(f"{k} {v:,}" for k, v in p["links"].items()))
    _row(t, "DAC cables / optics", f"{p['dac_cables']:,} / {p['optics']:,}")
    _row(t, "media (by link kind)", "\n".join(f"{k}: " + ", ".join(f"{m} {n:,}" for m, n in ms.items())
                                               for k, ms in p["media"].items()))
    _row(t, "injection / bisection", f"{p['injection_tbps']:,} Tb/s / {p['bisection_tbps']:,} Tb/s")
    _row(t, "oversubscription", ", ".join(f"{k} {v:g}:1" for k, v in p["oversubscription"].items()))
    s = p["storage"]
    _row(t, "storage", f"{s['servers']:,} servers in {s['racks']} racks, {s['drives']:,} drives, "
                         f"{s['raw_pb']} PB raw")
    if p.get("nfs"):
        _row(t, "NFS clients (mount: server hosts)", "\n".join(
            f"{mount}: " + "; ".join(f"{server} {len(hosts)} ({', '.join(hosts)})" for server, hosts in by.items())
            for mount, by in p["nfs"].items()))
    _row(t, "power", f"{p['power_kw']:,} kW")
    dims = p["room"]["dimensions"]
    _row(t, "room to grow", NO_ROOM if all(v["why"] == NO_ROOM for v in dims.values()) else "; ".join(
        f"{k.replace('_', ' ')} {v['now']:,} of {v['room']:,}" + (f" ({v['why']})" if v["why"] != "declared" else "")
        for k, v in dims.items() if v["room"]))
    _row(t, "pools (blocks now / at the room / held)",
              "\n".join(f"{u['pool']} {u['network']}: {u['now']:,} / {u['room']:,} / {u['blocks']:,}"
                        for u in p["room"]["pools"]))
    out.print(t)


@click.command()
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
@site_options
def render(spec: str, output: str | None, only: tuple[str, ...], force: bool, yang_dir: str | None,
           spec_timeout: float | None, as_json: bool, check_dir: str | None, no_cache: bool, live: bool,
           dask_address: str | None, workers: int | None, dask_tls_ca: str | None, dask_tls_cert: str | None,
           dask_tls_key: str | None, merged: str | None) -> None:
    """Render every artifact of SPEC into a build folder, atomically, with manifest.json.  A SITE spec: a build per
    cluster at OUT/<cluster>/ and the tier's at OUT/<site>/ (OUT default build/<site>/), then OUT/site.json; on
    Dask with --dask."""
    from teton.pipeline import build
    from teton.site.load import is_site_spec

    site_given = [o for o, v in (("--dask", dask_address), ("--workers", workers), ("--dask-tls-ca", dask_tls_ca),
                                 ("--dask-tls-cert", dask_tls_cert), ("--dask-tls-key", dask_tls_key),
                                 ("--merged", merged)) if v is not None]
    if is_site_spec(spec):
        refused = [o for o, v in (("--only", only), ("--check", check_dir), ("--live", live)) if v]
        if refused:
            raise click.UsageError(f"{', '.join(refused)}: not for a site spec (render the site whole)")
        render_site_command(spec, output, force, yang_dir, as_json, no_cache, dask_address, workers, dask_tls_ca,
                            dask_tls_cert, dask_tls_key, merged)
        return
    if site_given:
        raise click.UsageError(f"{', '.join(site_given)}: a site spec's (SPEC has no clusters and bag)")
    cache = render_cache(no_cache)
    if check_dir is not None:
        if output or only or force:
            raise click.UsageError("--check compares a whole build: it takes no --output, --only or --force")
        _render_check(spec, Path(check_dir), yang_dir, spec_timeout, as_json, cache)
        return
    with bad_input(as_json), progress("designing") as status:
        def step(name: str) -> None:
            if status is not None:
                status.update(f"{'writing the build' if name == 'writing' else f'rendering {name}'}")

        result = build(spec, Path(output) if output else None, only=only or None,
                       yang_dir=Path(yang_dir) if yang_dir else None, force=force, progress=step,
                       timeout=spec_timeout, cache=cache, live=live)
    report(result.warnings, False)
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
            err.print(cache_line(cache, result.replayed))


def _render_check(spec: str, folder: Path, yang_dir: str | None, spec_timeout: float | None, as_json: bool,
                  cache: RenderCache | None) -> None:
    from teton.pipeline.check import check_folder

    with bad_input(as_json), progress("rendering"):
        total, stale = check_folder(spec, folder, yang_dir=Path(yang_dir) if yang_dir else None,
                                    timeout=spec_timeout, cache=cache)
    if as_json:
        echo_json({"folder": str(folder), "files": total, "ok": not stale, "stale": [s._asdict() for s in stale]})
    else:
        for s in stale:
            out.print(f"{s.why:<8} {escape(s.path)}")
        state = "up to date" if not stale else f"{len(stale):,} stale file(s): render {spec} -o {folder} to update"
        err.print(f"{folder}: {total:,} files compared; {state}")
    if stale:
        sys.exit(1)


@click.command("rules")
@click.option("--json", "as_json", is_flag=True, help="every rule as JSON: id, meaning, severity, where, anchor, docs")
def list_rules(as_json: bool) -> None:
    """Every rule id a finding can carry: what it checks, its severity, where it runs (docs/rules.md)."""
    from teton.rules import RULES
    from teton.rules import as_json as rules_json

    if as_json:
        echo_json(rules_json())
        return
    t = Table(show_header=True)
    for col in ("rule", "severity", "runs in", "what it checks"):
        t.add_column(col)
    for rule in RULES:
        t.add_row(rule.id, rule.severity, ", ".join(rule.where), escape(rule.meaning))
    out.print(t)


@click.command("targets")
@click.option("--json", "as_json", is_flag=True)
def list_targets(as_json: bool) -> None:
    """The registered targets: what `render --only` takes and which NOS each configures."""
    rows = [{"name": t.name, "nos": t.nos, "version": t.version, "summary": t.summary} for t in targets.targets()]
    if as_json:
        echo_json(rows)
        return
    t = Table(show_header=True)
    for col in ("target", "NOS", "what it writes"):
        t.add_column(col)
    for r in rows:
        t.add_row(r["name"], r["nos"] or "", r["summary"])
    out.print(t)


@click.command()
def schema() -> None:
    """Print the spec's JSON Schema (2020-12)."""
    from teton.spec.schema import spec_schema

    echo_json(spec_schema())
