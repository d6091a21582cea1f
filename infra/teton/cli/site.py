"""`teton render|plan|diff` of a SITE spec (YAML with `clusters` and `bag`, or Python binding `site`:
`teton.site.load.is_site_spec`): the commands of cli/build.py and cli/review.py hand a site spec to these."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from teton.cli.common import bad_input, echo_json, err, out, plain, progress, report
from teton.findings import TetonError

DASK = click.option("--dask", "dask_address", metavar="tls://HOST:PORT|tcp://HOST:PORT|local|off", default=None,
                    help="a SITE's render on Dask: a scheduler's address, `local` (a LocalCluster on 127.0.0.1 over "
                    "TLS with credentials of its own) or `off` (default: this process).  A scheduler and its "
                    "workers are trusted code (teton unpickles what they send): a plain tcp:// one gets a warning; "
                    "use tls:// with --dask-tls-*")
WORKERS = click.option("--workers", type=int, default=None, help="--dask local: the LocalCluster's worker processes "
                       "(default: one per core)")
TLS_CA = click.option("--dask-tls-ca", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
                      help="the CA of a tls:// scheduler's and its workers' certificates (with --dask-tls-cert/-key)")
TLS_CERT = click.option("--dask-tls-cert", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
                        help="teton's client certificate for a tls:// scheduler")
TLS_KEY = click.option("--dask-tls-key", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
                       help="the private key of --dask-tls-cert")
MERGED = click.option("--merged", type=click.Path(file_okay=False), metavar="DIR",
                      help="a SITE: also write the whole site as one build (every cluster's devices named "
                      "<cluster>--<device>, the tier's switches): what the twin runs")


def site_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for option in (MERGED, TLS_KEY, TLS_CERT, TLS_CA, WORKERS, DASK):
        fn = option(fn)
    return fn


@contextmanager
def _bars(enabled: bool) -> Iterator[Any]:
    """Clusters done and switches rendered, on stderr (only on a terminal)."""
    if not (enabled and err.is_terminal):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from teton.site.render import Event

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        builds = bar.add_task("builds done", total=None)
        devices = bar.add_task("switches rendered", total=None)
        totals: dict[str, int] = {}
        done = [0]

        def step(e: Event) -> None:
            totals[e.cluster] = e.total
            done[0] += e.devices
            bar.update(builds, completed=e.clusters_done, total=e.clusters,
                       description=f"builds done (last: {e.cluster})")
            bar.update(devices, completed=done[0], total=sum(totals.values()))

        yield step


def _tls(ca: str | None, cert: str | None, key: str | None) -> Any:
    from teton.verify.distributed import DaskTls

    given = [p for p in (ca, cert, key) if p is not None]
    if given and len(given) != 3:
        raise TetonError("--dask-tls-ca, --dask-tls-cert and --dask-tls-key go together")
    return DaskTls(Path(given[0]), Path(given[1]), Path(given[2])) if given else None


def render_site_command(spec: str, output: str | None, force: bool, yang_dir: str | None, as_json: bool,
                        no_cache: bool, dask_address: str | None, workers: int | None, tls_ca: str | None,
                        tls_cert: str | None, tls_key: str | None, merged_dir: str | None) -> None:
    """`teton render SITE`."""
    from teton.pipeline.cache import RenderCache
    from teton.site.distributed import engine_for
    from teton.site.load import load_site
    from teton.site.render import render_site
    from teton.verify.distributed import insecure

    with bad_input(as_json):
        loaded = load_site(spec)
        tls = _tls(tls_ca, tls_cert, tls_key)
        if (warning := insecure(dask_address, tls)) is not None:
            err.print(f"[yellow]warning[/yellow]: {escape(warning.replace('teton verify', 'teton render'))}",
                      markup=True)
        dest = Path(output) if output else Path("build") / loaded.site.site
        cache = not no_cache and RenderCache.from_env() is not None
        with engine_for(dask_address, tls, workers) as engine, _bars(not as_json) as step:
            chunks = max(1, -(-engine.workers // len(loaded.clusters)))
            result = render_site(spec, dest, runner=engine.runner, chunks=chunks, force=force, cache=cache,
                                 yang_dir=Path(yang_dir) if yang_dir else None, progress=step, loaded=loaded)
        merged_build = None
        if merged_dir is not None:
            with progress("rendering the merged site"):
                merged_build = _merged(result.out, loaded.site.site, list(loaded.clusters), Path(merged_dir), force)
    report(result.warnings, False)
    summary: dict[str, Any] = {"output": str(result.out), "site": result.site, "files": result.files,
                               "builds": {k: str(v) for k, v in result.builds.items()}, "engine": engine.where}
    if merged_build is not None:
        summary["merged"] = {"output": str(merged_build.path), "files": merged_build.files}
    if as_json:
        click.echo(json.dumps(summary, sort_keys=True))
        return
    err.print(f"wrote {result.files:,} files to {escape(str(result.out))}/: {len(result.builds) - 1} cluster "
              f"build(s) and the tier's ({escape(result.site)}/), site.json; rendered in {escape(engine.where)}")
    if merged_build is not None:
        err.print(f"wrote the merged site, {merged_build.files:,} files, to {escape(str(merged_build.path))}/")


def _merged(out_dir: Path, site: str, clusters: list[str], dest: Path, force: bool) -> Any:
    """The whole site as one build, from the builds' fabric.json (what they were rendered from)."""
    from teton.buildfolder import BuildFolder
    from teton.pipeline import build_fabric
    from teton.site.design import merge_site

    members = {c: BuildFolder.open(out_dir / c).fabric() for c in clusters}
    tier = BuildFolder.open(out_dir / site).fabric()
    return build_fabric(merge_site(site, members, tier), dest, force=force)


# ------------------------------------------------------------------------------------------------------------ plan


def plan_site_command(spec: str, as_json: bool) -> None:
    from teton.site.plan import site_plan

    with bad_input(as_json), progress("designing the site"):
        figures, warnings = site_plan(spec)
    if as_json:
        echo_json(figures)
        return
    report(warnings, False)
    _print_site_plan(figures)


def _print_site_plan(p: dict[str, Any]) -> None:
    t = Table(title=plain(f"site {p['site']} ({p['location']}): {len(p['clusters'])} clusters"), show_header=True)
    for col in ("cluster", "GPUs", "hosts", "switches (backend)", "switches (front end)", "oversubscription",
                "optics", "power kW"):
        t.add_column(col)
    for name, c in p["clusters"].items():
        t.add_row(plain(name), f"{c['gpus']:,}", f"{c['hosts']:,}",
                  plain(", ".join(f"{k} {v:,}" for k, v in c["switches"].items())),
                  plain(", ".join(f"{k} {v:,}" for k, v in c["frontend_switches"].items())),
                  plain(", ".join(f"{k} {v:g}:1" for k, v in c["oversubscription"].items())),
                  f"{c['optics']:,}", f"{c['power_kw']:,}")
    tier = p["tier"]
    t.add_row("tier", "", "", plain(f"bag {tier['switches']:,} ({tier['model']})"), "",
              plain(f"atsw-bag {tier['oversubscription']:g}:1 (goal {tier['goal']:g}:1)"), f"{tier['optics']:,}",
              f"{tier['power_kw']:,}")
    s = p["totals"]
    t.add_row("site", f"{s['gpus']:,}", f"{s['hosts']:,}", plain(", ".join(f"{k} {v:,}" for k, v in
                                                                        s["switches"].items())),
              plain(", ".join(f"{k} {v:,}" for k, v in s["frontend_switches"].items())), "",
              f"{s['optics']:,}", f"{s['power_kw']:,}")
    out.print(t)
    ports = tier["ports"]
    out.print(plain(f"tier: {tier['switches']} x {tier['model']} in {tier['planes']} plane(s); per BAG switch "
                    f"{ports['used']:,} ports used, {ports['free_in_room']:,} held for the room "
                    f"({ports['room_clusters']} clusters of up to {ports['room_atsw']} ATSWs), "
                    f"{ports['free']:,} free of {ports['total']:,}; links atsw-bag {tier['links']:,}"))


# ------------------------------------------------------------------------------------------------------------ diff


def diff_site_command(old: str, new: str, fmt: str, context: int, output: str | None, yang_dir: str | None,
                      no_cache: bool) -> None:
    from teton.cli.common import cache_line, render_cache
    from teton.site.diff import diff_sites

    cache = render_cache(no_cache)
    with bad_input(fmt == "json"), progress("comparing the sites"):
        result = diff_sites(old, new, cache=cache, yang_dir=Path(yang_dir) if yang_dir else None, context=context)
        text = result.render(fmt)
        if output:
            try:
                Path(output).write_text(text, encoding="utf-8", newline="\n")
            except OSError as exc:
                raise TetonError(f"{output}: cannot be written: {exc.strerror or exc}") from None
    report(result.warnings, False)
    if not output:
        click.echo(text, nl=False)
    err.print(escape(result.headline()))
    if cache is not None:
        err.print(cache_line(cache))
    sys.exit(1 if result.changed else 0)
