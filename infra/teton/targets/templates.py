"""The Jinja2 environment for text targets: templates/<target>/, strict about undefined names, loaded once."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).resolve().parents[3] / "templates"


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)), undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, autoescape=False)


def render_template(name: str, **context: object) -> str:
    return environment().get_template(name).render(**context)
