"""A vendor's reference data a target needs (SONiC's YANG models, FBOSS's IDL and platform mappings, Kueue's CRDs): what
it is, where the target looks for it, and the one lookup every target uses.

The data is never copied into the repository.  `ReferenceData.find` looks, in the order docs/checks.md documents:

1. the folder the caller gives (a command-line option, `RenderContext.folders`);
2. the target's environment variable (declared in `teton.environment`);
3. `<subdir>` of the `shared` folder beside the repository (`../shared/<subdir>`);
4. the copy a setup script fetched into the user's cache (`$XDG_CACHE_HOME/teton/<subdir>`), where there is one;

and raises one TetonError naming the ways to provide it when none holds it (a folder given in 1 or 2 that does not is
an error of its own, naming where it came from).  `locate` is the same lookup for data a target can do without: None
instead of the error.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from teton import environment
from teton.findings import TetonError

# infra/teton/targets/reference.py: parents[3] is the repository root; the shared folder is beside it.
SHARED = Path(__file__).resolve().parents[3].parent / "shared"


def user_cache() -> Path:
    """Where setup scripts fetch reference data: `$XDG_CACHE_HOME/teton` (~/.cache/teton)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "teton"


@dataclass(frozen=True)
class ReferenceData:
    """One kind of reference data, as its target declares it (`Target.reference`)."""

    name: str                           # its key in `RenderContext.folders` ("sonic-yang-models")
    label: str                          # what messages call it ("SONiC YANG models")
    env: str                            # its environment variable (teton.environment)
    option: str | None                  # the command-line option that gives it ("--yang-dir"), if one does
    shared_subdir: str                  # where it is in the shared folder beside the repository
    usable: Callable[[Path], bool]      # whether a folder holds it
    lacks: str                          # what a folder that does not hold it is said to lack ("holds no .yang files")
    expect: str = ""                    # what to point a wrong folder at
    fetch_hint: str = ""                # the way to fetch it; `{cached}` is the fetched copy's folder
    cache_subdir: str | None = None     # where the fetch puts it under `user_cache()` (None: nothing fetches it)
    option_exports: bool = False        # the option sets `env` for every command (`teton --fboss-dir`)
    inside: tuple[str, ...] = ("",)     # subfolders of a folder tried in turn ("crd", ""), first usable wins
    place: str = "it"                   # how the not-found message names what to place beside the repository

    @property
    def shared(self) -> Path:
        return SHARED / self.shared_subdir

    @property
    def cached(self) -> Path | None:
        return user_cache() / self.cache_subdir if self.cache_subdir is not None else None

    def given(self, explicit: str | Path | None = None) -> tuple[Path, str] | None:
        """(the folder the caller or the environment gives, where it came from), or None."""
        if explicit is not None:
            return Path(explicit), self.option if self.option and not self.option_exports else "the caller"
        value = environment.get(self.env)
        if value:
            return Path(value), f"{self.option} or {self.env}" if self.option and self.option_exports else self.env
        return None

    def _holds(self, folder: Path) -> Path | None:
        for sub in self.inside:
            candidate = folder / sub if sub else folder
            try:
                if self.usable(candidate):
                    return candidate
            except OSError:
                continue
        return None

    def locate(self, explicit: str | Path | None = None, *, shared: Path | None = None,
               cached: Path | None = None) -> Path | None:
        """The folder holding it, or None (a given folder that does not hold it: None too)."""
        given = self.given(explicit)
        if given is not None:
            return self._holds(given[0])
        places = [shared or self.shared, cached or self.cached]
        return next((found for p in places if p is not None and (found := self._holds(p)) is not None), None)

    def find(self, explicit: str | Path | None = None, *, shared: Path | None = None,
             cached: Path | None = None) -> Path:
        """The folder holding it (`shared`, `cached`: other places than the declared ones); TetonError, one line,
        naming the ways to provide it if none does."""
        given = self.given(explicit)
        if given is not None:
            folder, source = given
            found = self._holds(folder)
            if found is None:
                why = "is not a folder" if not folder.is_dir() else self.lacks
                raise TetonError(f"{self.label}: {folder} {why} (from {source})" +
                                 (f"; {self.expect}" if self.expect else ""))
            return found
        found = self.locate(shared=shared, cached=cached)
        if found is not None:
            return found
        shared = shared or self.shared
        cached = cached or self.cached
        fetch = f", or {self.fetch_hint.format(cached=cached)}" if self.fetch_hint and cached is not None else ""
        give = f"give {self.option} DIR (or {self.env})" if self.option else f"set {self.env}"
        raise TetonError(f"{self.label} not found: {give}, or place {self.place} beside the repository "
                         f"({shared}){fetch}")
