"""Every `TETON_*` environment variable teton reads, with its meaning and default, and the only module that reads them.

Other modules ask here (`get`, `secrets`, `export`) instead of reading `os.environ` for a `TETON_*` name; what a
value means (a number, a folder, "off") stays with the module that uses it.  Variables that are not teton's (HOME,
PATH, XDG_*, the environment handed to a subprocess) are read where they are used.  docs/commands.md lists these
variables as `table()` writes them (tests/test_environment.py checks both, and that no other module reads a `TETON_*`
variable).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

SECRET_PREFIX = "TETON_SECRET_"          # teton.secrets.PREFIX: a secret's value, pushed in place of its reference


@dataclass(frozen=True)
class Variable:
    name: str                 # for a family (`prefix`), what every member's name starts with
    meaning: str
    default: str              # what teton does when it is unset
    prefix: bool = False      # a family of variables: TETON_SECRET_<name>


VARIABLES: tuple[Variable, ...] = (
    Variable("TETON_SPEC_TIMEOUT", "seconds a Python spec may run (`--spec-timeout` wins)",
             "60 (limits.PYTHON_SPEC_TIMEOUT_S)"),
    Variable("TETON_WORKERS", "worker processes that render, read back and diff (a positive whole number)",
             "one per core this process may use"),
    Variable("TETON_CACHE", "`off` (or 0, no, false) turns the render cache off", "on"),
    Variable("TETON_CACHE_DIR", "the render cache's folder", "`$XDG_CACHE_HOME/teton/render` (~/.cache/teton/render)"),
    Variable("TETON_CACHE_KEY", "the render cache's MAC key (at least 32 characters)",
             "the key file `$XDG_CONFIG_HOME/teton/cache.key`, created on first use"),
    Variable("TETON_SONIC_YANG_DIR", "SONiC's YANG models (as `--yang-dir`)",
             "shared/sonic-yang-models/yang beside the repository, then the copy scripts/setup fetched"),
    Variable("TETON_FBOSS_DIR", "FBOSS's reference files: IDL, platform mappings, base configs (as `--fboss-dir`)",
             "shared/fboss beside the repository, then the copy scripts/fetch-fboss-data fetched"),
    Variable("TETON_KUEUE_DIR", "Kueue's CRD files (the folder holding `crd/`, or `crd/` itself)",
             "shared/kueue beside the repository; none: Kueue manifests are not schema-checked (a warning)"),
    Variable(SECRET_PREFIX, "the value of secret `<name>`, put in place of its reference "
             "only when a config is pushed (twin up, drift) or fetched (ztp serve)",
             "unset: the push refuses a referenced secret", True),
    Variable("TETON_ZTP_ROOT", "read by the provisioning scripts `teton ztp` writes, not by teton: a folder standing "
             "for the switch's root file system, which they write under (the day-0 test runs them so)",
             "the switch's own root"),
    Variable("TETON_PULUMI", "the Pulumi engine binary", "the one scripts/setup built, then `pulumi` on PATH"),
    Variable("TETON_PULUMI_CACHE", "where scripts/build-pulumi-engine builds the Pulumi engine",
             "~/.cache/teton/pulumi"),
    Variable("TETON_PROVIDER_THREADS", "threads of teton's Pulumi provider plugin", "16"),
    Variable("TETON_PROJECT_DIR", "the Pulumi project's folder; set by teton's language host for the program", "-"),
    Variable("TETON_PROGRAM_PROFILE", "a file: the language host profiles the Pulumi program into it (bench/)",
             "no profile"),
    Variable("TETON_VERIFY_NUMPY", "any value: `teton verify` runs its NumPy code, not the compiled kernel",
             "the compiled kernel where numba is installed"),
)
_DECLARED = {v.name: v for v in VARIABLES if not v.prefix}


def declared(name: str) -> bool:
    """Whether `name` is one of teton's variables (or a member of a declared family)."""
    return name in _DECLARED or any(v.prefix and name.startswith(v.name) and len(name) > len(v.name)
                                    for v in VARIABLES)


def _check(name: str) -> None:
    if name not in _DECLARED:
        raise KeyError(f"{name} is not a declared teton environment variable (teton.environment.VARIABLES)")


def get(name: str) -> str | None:
    """The value of teton's variable `name`, as the environment holds it (None: unset)."""
    _check(name)
    return os.environ.get(name)


def export(name: str, value: str) -> None:
    """Set teton's variable `name` for this process and every process it starts (`--fboss-dir`, the language host)."""
    _check(name)
    os.environ[name] = value


def secrets(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """{name: value} of every `TETON_SECRET_<name>` variable (of `environ`, default this process's environment)."""
    env = os.environ if environ is None else environ
    n = len(SECRET_PREFIX)
    return {k[n:]: v for k, v in env.items() if k.startswith(SECRET_PREFIX) and len(k) > n}


# what a process teton starts to run code it was handed (a Python spec, also one read from a git ref) does not inherit:
# the secrets' values and the render cache's key
WITHHELD_PREFIXES = (SECRET_PREFIX, "TETON_CACHE_KEY")


def for_untrusted_child(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment (of `environ`, default this process's) without the secrets (`TETON_SECRET_*`) and
    the render cache's key (`TETON_CACHE_KEY`): the environment of a process that runs a spec's code."""
    env = os.environ if environ is None else environ
    return {k: v for k, v in env.items() if not k.startswith(WITHHELD_PREFIXES)}


def table() -> str:
    """The variables as a markdown table (docs/commands.md holds it)."""
    rows = ["| variable | what it sets | unset |", "| --- | --- | --- |"]
    rows += [f"| `{v.name}{'<name>' if v.prefix else ''}` | {v.meaning} | {v.default} |" for v in VARIABLES]
    return "\n".join(rows) + "\n"
