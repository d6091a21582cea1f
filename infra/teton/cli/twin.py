"""`teton twin`: the digital twin's verbs, `up`, `verify`, `fail`, `restore`, `down`, and the cabling ones, `lldp`
and `swap`."""

from __future__ import annotations

from pathlib import Path

import click

from teton.cli.common import progress, twin_call, twin_out


@click.group()
def twin() -> None:
    """Digital twin of a build's backend and front end: network namespaces, real FRR, every server (needs root).

    `up` takes a spec (rendered first) or a build folder; the other commands take the twin: its name, or the spec or
    build folder it came from (only the cluster's name is read from it: the twin runs and checks the build it was
    started with)."""


@twin.command("up")
@click.argument("spec", metavar="SPEC|BUILD", type=click.Path(exists=True))
@click.option("--name", default=None, metavar="NAME",
              help="the twin's name (letters, digits, '_'; 16 at most), which the other verbs take; default: the "
                   "cluster's (a site's merged build: the site's)")
@click.option("--json", "as_json", is_flag=True)
def twin_up(spec: str, name: str | None, as_json: bool) -> None:
    """Start the backend fabric of SPEC (rendered first) or of a BUILD folder: one namespace per switch and host,
    zebra+bgpd per switch.  A site runs as its merged build (`teton render SITE --merged DIR`)."""
    from teton.deploy.drift import secrets_from_env
    from teton.twin import service

    with progress("starting the twin"):   # TETON_SECRET_<name> variables: run the site's secrets, as a deploy pushes
        r = twin_call(service.up, as_json, spec, secrets_from_env() or None, name)
    twin_out(r, as_json, not r.ecmp_mismatches)


@twin.command("verify")
@click.argument("spec", metavar="TWIN")
@click.option("--ping-sample", type=click.IntRange(min=1), default=None,
              help="same-rail pings at most (default 1024; all on small twins)")
@click.option("--json", "as_json", is_flag=True)
def twin_verify(spec: str, ping_sample: int | None, as_json: bool) -> None:
    """BGP sessions as designed, same-rail host NICs reach each other, ECMP as wide as the design (exit 1 if not)."""
    from teton.twin import service

    kwargs = {} if ping_sample is None else {"ping_sample": ping_sample}
    with progress("verifying"):
        r = twin_call(lambda s: service.verify(s, **kwargs), as_json, spec)
    twin_out(r, as_json, r.ok)


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

    with progress(f"failing {what}"):
        r = twin_call(service.fail, as_json, spec, what, how)
    twin_out(r, as_json, r.survived)


@twin.command("restore")
@click.argument("spec", metavar="TWIN")
@click.option("--json", "as_json", is_flag=True)
def twin_restore(spec: str, as_json: bool) -> None:
    """Bring every failed switch and link back (and any daemon that died), and measure reconvergence."""
    from teton.twin import service

    with progress("restoring"):
        r = twin_call(service.restore, as_json, spec)
    twin_out(r, as_json, not r.reconvergence.ecmp_mismatched)


@twin.command("down")
@click.argument("spec", metavar="TWIN")
@click.option("--json", "as_json", is_flag=True)
def twin_down(spec: str, as_json: bool) -> None:
    """Stop the twin and remove everything it made, also leftovers of a crashed run (found by name)."""
    from teton.twin import service

    twin_out(twin_call(service.down, as_json, spec), as_json)


@twin.command("lldp")
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

    r = twin_call(service.lldp, as_json, which, Path(output))
    twin_out(r, as_json, r.settled)


@twin.command("swap")
@click.argument("which", metavar="TWIN")
@click.argument("a", metavar="DEVICE:PORT")
@click.argument("b", metavar="DEVICE:PORT")
@click.option("--json", "as_json", is_flag=True, help="the report as JSON only")
def twin_swap(which: str, a: str, b: str, as_json: bool) -> None:
    """Cross two cables on purpose: the ports A and B trade their far ends and keep their addresses (the same two
    again, or `teton twin restore`, put them back)."""
    from teton.twin import service

    twin_out(twin_call(service.swap, as_json, which, a, b), as_json)
