"""`teton ztp`: day 0.  `teton ztp BUILD --inventory FILE -o DIR` (the same as `teton ztp write ...`) writes what DHCP
and the switches' zero-touch provisioning need; `teton ztp serve DIR` serves it and shows the bring-up."""

from __future__ import annotations

from pathlib import Path

import click

from teton.cli.common import bad_input, echo_json, err, progress


class _ZtpGroup(click.Group):
    """A group whose first argument is a build folder unless it names a command: `teton ztp BUILD ...` runs
    `write`."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["write", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_ZtpGroup)
def ztp() -> None:
    """Day 0: DHCP (Kea) and zero-touch provisioning files for a build's switches, and the server that hands them out.

    `teton ztp BUILD --inventory FILE -o DIR` writes them; `teton ztp serve DIR --bind ADDR:PORT` serves them."""


@ztp.command("write")
@click.argument("build", metavar="BUILD", type=click.Path(exists=True, file_okay=False))
@click.option("--inventory", "inventory", required=True, type=click.Path(exists=True, dir_okay=False),
              metavar="FILE", help="CSV `device,mac[,serial]`: the switches whose MAC addresses are known (the "
              "vendor's shipping manifest, a scan at the dock)")
@click.option("-o", "--output", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="folder to write (replaced atomically; an existing folder must be one `teton ztp` wrote)")
@click.option("--json", "as_json", is_flag=True, help="the summary as JSON")
def ztp_write(build: str, inventory: str, output: str, as_json: bool) -> None:
    """Kea's configuration (a reservation per switch: its designed management address and its NOS's provisioning
    URL), each switch's provisioning files, the server's index and a manifest, into DIR.  A switch without an
    inventory row is listed as not provisionable yet.  Bad inventory lines: exit 2 naming the line, nothing
    written."""
    from teton.ztp.write import write_ztp

    with bad_input(as_json), progress("writing the provisioning folder"):
        summary = write_ztp(Path(build), Path(inventory), Path(output))
    if as_json:
        echo_json(summary.to_json())
        return
    err.print(summary.text())


@ztp.command("serve")
@click.argument("folder", metavar="DIR", type=click.Path(exists=True, file_okay=False))
@click.option("--bind", required=True, metavar="ADDR:PORT", help="address and port to listen on ([v6]:port for IPv6)")
@click.option("--status", "status_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="keep the bring-up's state as JSON in FILE (rewritten atomically as switches fetch)")
@click.option("--log", "log_file", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="append one JSON line per request to FILE (device, file, client, status)")
@click.option("--any-client", is_flag=True,
              help="hand a device's files to any client, not only to its designed management address (a server "
                   "behind NAT or a proxy)")
def ztp_serve(folder: str, bind: str, status_file: str | None, log_file: str | None, any_client: bool) -> None:
    """Serve exactly DIR's provisioning files over HTTP: nothing outside, no listing, bounded requests; secret
    references resolved from TETON_SECRET_<name> at each fetch (never written to disk); a live view of which
    switches have fetched their files, by zone and tier.  Runs until interrupted."""
    from teton.ztp.serve import serve

    with bad_input():
        serve(Path(folder), bind, status_file=None if status_file is None else Path(status_file),
              log_file=None if log_file is None else Path(log_file), any_client=any_client)
