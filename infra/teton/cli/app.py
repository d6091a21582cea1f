"""teton's command line, assembled: the `teton` group, its global options, and every command module's commands.
The command line is the only place that prints and exits; the command modules never import this one."""

from __future__ import annotations

import click

from teton import environment
from teton.cli.build import list_rules, list_targets, plan, render, schema, validate
from teton.cli.cabling import sheets
from teton.cli.review import diff, docs, drift
from teton.cli.twin import twin
from teton.cli.verify import ib, verify
from teton.cli.ztp import ztp


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="teton")
@click.option("--fboss-dir", type=click.Path(file_okay=False), envvar="TETON_FBOSS_DIR", default=None,
              help="FBOSS's reference files: IDL, platform mappings, base configs (default: shared/fboss in the "
              "folder holding the repo, then the copy scripts/fetch-fboss-data fetched; see docs/checks.md)")
def main(fboss_dir: str | None) -> None:
    """teton: GPU training clusters as code (spec -> fabric -> configs -> deploy)."""
    if fboss_dir:
        environment.export("TETON_FBOSS_DIR", fboss_dir)   # every command, and the workers it forks, finds them there


for command in (validate, plan, render, list_targets, list_rules, schema,   # spec -> build
                diff, docs, drift,                              # a change, a build's report, a twin's drift
                verify, ib,                                     # a build against the running fabric
                twin,                                           # the digital twin
                ztp,                                            # day 0: DHCP and zero-touch provisioning
                sheets):                                        # the cabling's workbooks
    main.add_command(command)
