"""`teton verify` and `teton ib verify`: a build checked against what runs.

`verify` is a group whose subcommands check a build: `routing` (the routing proven from the rendered switch configs),
`cabling` (the wiring, from LLDP) and `live` (every promise of the design asked of the running devices, on the twin
or live).  A plain `teton verify BUILD ...` (no subcommand name first) runs the group's
default subcommand, `routing` (`DefaultGroup.default`), so `teton verify BUILD` is `teton verify routing BUILD`.
`ib verify` compares an ibnetdiscover dump with an InfiniBand spec's topology.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.markup import escape

from teton.cli.common import SPEC_TIMEOUT, bad_input, echo_json, err, out, progress, progress_bar, twin_call
from teton.findings import Finding, SpecError, TetonError

if TYPE_CHECKING:
    from teton.verify.live_report import LiveReport


class DefaultGroup(click.Group):
    """A group that runs `default` when its first argument is no subcommand's name."""

    default: str | None = None

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if self.default and args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default, *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultGroup)
def verify() -> None:
    """Check a build against what the fabric shows: `verify cabling BUILD --lldp DIR` (the wiring, from LLDP),
    `verify live BUILD [--twin NAME]` (every promise asked of the running devices)."""


@verify.command("routing")
@click.argument("build", type=click.Path(file_okay=False))
@click.option("--fail", "fail", multiple=True, metavar="DEVICE|LINK",
              help="what if this fails (repeatable): a device, or a link DEV:PORT--DEV:PORT (or DEV:PORT)")
@click.option("--fail-each", metavar="ROLE", help="every single failure of the devices of ROLE (ctsw, atsw, fsw ...), "
              "and the worst")
@click.option("--dask", "dask_address", metavar="tls://HOST:PORT|tcp://HOST:PORT|local|off", default=None,
              help="solve on a Dask cluster: a scheduler's address, `local` (a LocalCluster on 127.0.0.1 over TLS "
              "with credentials of its own) or `off`; default: a LocalCluster when the build is large, else in this "
              "process.  A scheduler and its workers are trusted code: teton unpickles what they send, so whoever "
              "can join a plain tcp:// scheduler runs code in this process (a warning says so); use tls:// with "
              "--dask-tls-*")
@click.option("--dask-tls-ca", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
              help="the CA of a tls:// scheduler's and its workers' certificates (with --dask-tls-cert/-key)")
@click.option("--dask-tls-cert", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
              help="teton's client certificate for a tls:// scheduler")
@click.option("--dask-tls-key", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
              help="the private key of --dask-tls-cert")
@click.option("--json", "as_json", is_flag=True, help="the report as JSON")
def verify_routing(build: str, fail: tuple[str, ...], fail_each: str | None, dask_address: str | None,
                   dask_tls_ca: str | None, dask_tls_cert: str | None, dask_tls_key: str | None,
                   as_json: bool) -> None:
    """Prove the cluster's routing from BUILD's rendered switch configs: the BGP sessions both ends agree on, every
    switch's best routes to every prefix (RFC 7938 eBGP, ECMP within maximum-paths), then the design's promises
    (rack prefixes everywhere with its ECMP widths, loopbacks, the front end's reach, no link subnet leaked, no
    valley, nothing it does not originate).  BUILD may be a site's build folder (its site.json names every
    cluster's build and the tier's): the whole site is proven at once, every cluster's racks reaching every other
    cluster's (`--fail-each bag`: the loss of each aggregation switch).  Exit 1 when an assertion fails, 2 on bad
    input."""
    from teton.verify.distributed import DaskTls, insecure, mapper_for
    from teton.verify.report import summary, sweep_lines, whatif_lines
    from teton.verify.run import verify as verify_build

    with bad_input(as_json), progress("verifying"):
        given = [p for p in (dask_tls_ca, dask_tls_cert, dask_tls_key) if p is not None]
        if given and len(given) != 3:
            raise TetonError("--dask-tls-ca, --dask-tls-cert and --dask-tls-key go together")
        tls = DaskTls(Path(given[0]), Path(given[1]), Path(given[2])) if given else None
        if (warning := insecure(dask_address, tls)) is not None:
            err.print(f"[yellow]warning[/yellow]: {escape(warning)}", markup=True)
        from teton.site.index import is_site_build

        site = is_site_build(build)       # a site's build folder (site.json): every cluster's and the tier's
        with mapper_for(dask_address, Path(build), tls) as mapper:
            if site:
                from teton.site.verify import verify_site

                result = verify_site(Path(build), fail, fail_each, mapper)
            else:
                result = verify_build(Path(build), fail, fail_each, mapper)
    if as_json:
        echo_json(result.to_json())
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
        if site:
            from teton.site.verify import cluster_lines

            for line in cluster_lines(result):
                err.print(escape(line))
    if not result.ok:
        sys.exit(1)


verify.default = "routing"   # `teton verify BUILD` is `teton verify routing BUILD`


@verify.command("cabling")
@click.argument("build", type=click.Path(file_okay=False))
@click.option("--lldp", "lldp_dir", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="collected LLDP, one file per device named after it: `lldpctl -f json`, SONiC's `show lldp "
              "table` as JSON or APPL_DB LLDP_ENTRY_TABLE, EOS `show lldp neighbors | json`")
@click.option("--json", "as_json", is_flag=True, help="the report as JSON")
def verify_cabling(build: str, lldp_dir: str, as_json: bool) -> None:
    """Compare what every device's LLDP saw with BUILD's expected neighbours (cabling/neighbours.json): swapped,
    miswired, missing and extra cables by device, port and cable id (exit 1 when any, 2 on bad input)."""
    from teton.buildfolder import BuildFolder
    from teton.fabric.neighbours import NEIGHBOURS_FILE, load_neighbours
    from teton.targets.cabling.lldp import LldpError, read_dir
    from teton.targets.cabling.verify import compare

    with bad_input(as_json):
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
        echo_json(report.as_dict())
    else:
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
        err.print(f"{escape(str(lldp_dir))}: {report.as_designed:,} of {report.ports:,} ports of "
                  f"{report.devices:,} devices see their designed neighbour; {state}{gaps}")
    if not report.ok:
        sys.exit(1)


@verify.command("live")
@click.argument("build", type=click.Path(file_okay=False))
@click.option("--twin", "twin_name", metavar="NAME", help="ask the twin NAME running BUILD (`teton twin up`; root), "
              "not the live devices")
@click.option("--only", metavar="ROLE", help="only the switches of ROLE (rtsw, ctsw, atsw, fe-rsw, fsw, ssw): their "
              "sessions, ECMP widths and LLDP; no pings")
@click.option("--set", "settings", multiple=True, metavar="KEY=VALUE", help="a live transport's setting, as a "
              "deploy's stack config gives it (repeatable): eapiPort=443, eapiVerify=CA.pem|false, fbossBgpSummary=...")
@click.option("--json", "as_json", is_flag=True, help="the report as JSON")
def verify_live(build: str, twin_name: str | None, only: str | None, settings: tuple[str, ...],
                as_json: bool) -> None:
    """Ask BUILD's running switches and servers what its design promises: every switch's BGP sessions (each one down
    named by its peer), ECMP widths towards the other racks, LLDP neighbours by cable id, same-rail and front-end
    pings; each through its NOS's transport (eAPI, SSH) or the twin's.  Credentials from TETON_SECRET_eapi_user,
    _eapi_password, _ssh_user.  Exit 1 when a promise is broken or a device does not answer, 2 on bad input."""
    from teton.deploy.live import verify_build_live

    with bad_input(as_json):
        config = {}
        for setting in settings:
            key, eq, value = setting.partition("=")
            if not eq or not key:
                raise TetonError(f"--set {setting!r}: give KEY=VALUE")
            config[key] = value
    with progress_bar("asking the devices") as step:
        def run() -> LiveReport:
            return verify_build_live(Path(build), twin_name, only, config=config, progress=step)

        if twin_name is not None:          # root; the twin's own failure (lldpd, a namespace) exits 1
            report = twin_call(run, as_json)
        else:
            with bad_input(as_json):
                report = run()
    if as_json:
        echo_json(report.to_json())
    else:
        for line in report.lines():
            out.print(escape(line))
        err.print(escape(report.summary()))
    if not report.ok:
        sys.exit(1)


@click.group()
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
    from teton.pipeline import load_and_design
    from teton.targets.opensm.verify import verify_dump

    with bad_input(as_json), progress("comparing"):
        designed = load_and_design(spec, timeout=spec_timeout)
        if designed.fabric.subnet_manager is None:
            from teton.spec.load import spec_lines, with_lines

            raise SpecError(with_lines([Finding(spec, "backend.kind", f"{designed.fabric.name} has a "
                                                f"{designed.fabric.backend} backend: there is no InfiniBand topology "
                                                "to verify", rule="ib")], spec_lines(spec)))
        report = verify_dump(designed.fabric, Path(discovered))
    if as_json:
        echo_json(report.as_dict())
    else:
        for a, b in report.missing:
            out.print(f"missing   {escape(a)} <-> {escape(b)}")
        for m in report.miswired:
            out.print(f"miswired  expected {escape(m['expected'])}; found {escape(m['found'])}")
        for a, b in report.extra:
            out.print(f"extra     {escape(a)} <-> {escape(b)}")
        state = "as designed" if report.ok else (f"{len(report.missing)} missing, {len(report.miswired)} miswired, "
                                                 f"{len(report.extra)} extra")
        err.print(f"{escape(str(discovered))}: {report.found:,} of {report.links:,} links of the design found; {state}")
    if not report.ok:
        sys.exit(1)
