"""Jinja2 templates of the text targets, each package's in a `templates/` folder beside its code.

`Templates(folder)` renders the templates of one folder (strict about undefined names; one environment per folder,
built once per process): a target package holds `TEMPLATES = Templates.beside(__file__)`, a target defined elsewhere (a
plugin, a test) points at its own folder.  `render_template` renders the templates of teton.targets' own modules
(`targets/templates/<module>/...`: the FRR spelling that SONiC and any FRR-based NOS share).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2


class Templates:
    """The Jinja2 templates in one folder."""

    def __init__(self, folder: Path):
        self.folder = Path(folder).resolve()

    @classmethod
    def beside(cls, module_file: str) -> Templates:
        """The `templates/` folder beside a module (a package's `__init__.py`, or any of its modules)."""
        return cls(Path(module_file).resolve().parent / "templates")

    def render(self, name: str, **context: object) -> str:
        return _environment(self.folder).get_template(name).render(**context)


@cache
def _environment(folder: Path) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)


SHARED = Templates.beside(__file__)


def render_template(name: str, **context: object) -> str:
    """A template of teton.targets' own modules, by `<module>/<file>` (e.g. `frr/frr.conf.j2`)."""
    return SHARED.render(name, **context)
