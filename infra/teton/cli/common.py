"""What every command of teton's command line shares: the consoles, printing findings and JSON, turning bad input
into exit code 2, the spinner, the options several commands take, the render cache, and running a twin's call as
root.  The command modules import these public names and nothing private of each other."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import click
from rich.console import Console
from rich.markup import escape
from rich.text import Text

from teton.findings import Finding, SpecError, TetonError

if TYPE_CHECKING:
    from teton.pipeline.cache import RenderCache

EXIT_BAD_INPUT = 2
_R = TypeVar("_R")

# characters that move the cursor, erase, retitle the terminal or reorder what it shows (C0 but newline and tab, DEL,
# C1, bidirectional overrides): text from data (an LLDP port id, a config's line) could hide a line with them
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def visible(text: str) -> str:
    """`text` with every control character written out ("\\x1b"), so that the terminal shows it, not obeys it."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


def plain(text: object) -> Text:
    """Text from data, as it is: no Rich markup read in it ("[/bold]" is text), its control characters visible."""
    return Text(visible(str(text)))


class _Console(Console):
    """A Console that shows control characters in what it prints (as `visible` writes them), never sends them."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(visible(text), **kwargs)


err = _Console(stderr=True, highlight=False, soft_wrap=True)
out = _Console(highlight=False, soft_wrap=True)


class JsonResult(Protocol):
    """A twin command's result (`teton.twin.reports`): what it prints is its `to_json()`."""

    def to_json(self) -> dict[str, Any]: ...


SPEC_TIMEOUT = click.option("--spec-timeout", type=click.FloatRange(min=0, min_open=True), default=None,
                            metavar="SECONDS", help="how long a Python spec may run (default 60, or "
                            "$TETON_SPEC_TIMEOUT)")
NO_CACHE = click.option("--no-cache", is_flag=True, help="render every device, ignoring the render cache "
                        "($TETON_CACHE_DIR, default ~/.cache/teton/render; TETON_CACHE=off turns it off too)")
YANG_DIR = click.option("--yang-dir", type=click.Path(), envvar="TETON_SONIC_YANG_DIR",
                        help="SONiC YANG models (default: shared/sonic-yang-models/yang in the folder holding the "
                        "repo, then the copy scripts/setup fetched; see docs/checks.md)")


def echo_json(data: Any) -> None:
    """`data` on stdout as indented JSON with sorted keys (what every `--json` prints)."""
    click.echo(json.dumps(data, indent=1, sort_keys=True))


def report(findings: list[Finding], as_json: bool) -> None:
    """Findings: as JSON on stdout (with `ok`), or one coloured line each on stderr."""
    if as_json:
        echo_json({"ok": not any(f.severity == "error" for f in findings), "findings": [f.as_dict() for f in findings]})
        return
    for f in findings:
        colour = "red" if f.severity == "error" else "yellow"
        err.print(f"[{colour}]{f.severity}[/{colour}]: {escape(str(f))}", markup=True)


@contextmanager
def bad_input(as_json: bool = False) -> Iterator[None]:
    """A SpecError or TetonError raised inside: reported, and exit 2."""
    try:
        yield
    except SpecError as exc:
        report(exc.findings, as_json)
        n = sum(1 for f in exc.findings if f.severity == "error")
        err.print(f"{n} error{'s' if n != 1 else ''}.")
        sys.exit(EXIT_BAD_INPUT)
    except TetonError as exc:
        err.print(f"[red]error[/red]: {escape(str(exc))}", markup=True)
        sys.exit(EXIT_BAD_INPUT)


@contextmanager
def progress(label: str, enabled: bool = True) -> Iterator[Any]:
    """A spinner on stderr while a long step runs (only on a terminal)."""
    if enabled and err.is_terminal:
        with err.status(label) as status:
            yield status
    else:
        yield None


@contextmanager
def progress_bar(label: str, enabled: bool = True) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on stderr while many devices are asked (only on a terminal): what it yields takes (what is
    being done, steps done, steps in all), from any thread; None when nothing is shown."""
    if not (enabled and err.is_terminal):
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as bar:
        task = bar.add_task(label, total=None)

        def step(what: str, done: int, total: int) -> None:
            bar.update(task, description=f"{label}: {what}", completed=done, total=total)

        yield step


def render_cache(no_cache: bool) -> RenderCache | None:
    """The render cache the environment names, or None with --no-cache."""
    from teton.pipeline.cache import RenderCache

    return None if no_cache else RenderCache.from_env()


def cache_line(cache: RenderCache, replayed: bool = False) -> str:
    """What the render cache did, for stderr."""
    s = cache.stats()
    how = "; the spec's render was replayed without designing" if replayed else ""
    if s.get("untrusted"):
        how += (f"; {s['untrusted']:,} cache entries failed their MAC (damaged, or not written with this user's cache "
                "key) and were rendered again, not replayed")
    if s.get("problem"):
        how += f"; the cache is not used: {escape(s['problem'])}"
    return (f"render cache {escape(s['dir'])}: {s['hits']:,} device entries (a switch's files, an EOS switch's ANTA "
            f"catalog) from the cache, {s['misses']:,} rendered{how}")


def twin_call(fn: Callable[..., _R], as_json: bool, *args: Any) -> _R:
    """`fn(*args)` on a twin: refused (exit 2) unless root; bad input exits 2, the twin's own failure 1."""
    from teton.twin.runtime import TwinError

    if os.geteuid() != 0:
        err.print("teton twin needs root (network namespaces, FRR daemons)")
        sys.exit(EXIT_BAD_INPUT)
    with bad_input(as_json):
        try:
            return fn(*args)
        except TwinError as exc:   # the twin itself failed (a daemon, the kernel): not bad input
            err.print(f"[red]error[/red]: {escape(str(exc))}", markup=True)
            sys.exit(1)


def twin_out(result: JsonResult, as_json: bool, ok: bool = True) -> None:
    """A twin command's result as JSON (plain, or coloured on a terminal); exit 1 when not `ok`."""
    if as_json:
        echo_json(result.to_json())
    else:
        out.print_json(json.dumps(result.to_json(), sort_keys=True))
    if not ok:
        sys.exit(1)
