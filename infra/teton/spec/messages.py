"""The words of a schema error: one pydantic error as a message that names its input and the limit it breaks.  Used
by `teton.spec.load` for a YAML spec and by `teton.spec.pyspec` for a Python one (apart from both, so neither imports
the other back)."""

from __future__ import annotations

import re
from typing import Any, get_args

from pydantic import BaseModel

from teton.spec.grammar import GRAMMARS
from teton.spec.model import Cluster


def schema_message(err: Any, root: type[BaseModel] = Cluster) -> str:
    """The message of one pydantic error (`root` is the model that raised it): its input, and the limit it breaks."""
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        return "unknown key (misspelled?)"
    if err["type"] == "missing":
        return "required key is missing"
    if err["type"] == "string_pattern_mismatch" and (words := GRAMMARS.get(err.get("ctx", {}).get("pattern", ""))):
        msg = f"must be {words}"
    notes = []
    if "input" in err and not isinstance(err["input"], dict | list):
        notes.append(f"got {_short_repr(err['input'])}")
    if err["type"] in ("less_than_equal", "less_than", "too_long"):
        limit = _limit_of(err["loc"], root)
        if limit:
            notes.append(f"limit {limit}")
    return f"{msg} ({'; '.join(notes)})" if notes else msg


_LIMIT = re.compile(r"\b[A-Z][A-Z0-9_]+ = [\d,]+")


def _limit_of(loc: tuple[Any, ...], root: type[BaseModel]) -> str | None:
    """'MAX_X = n' named in the description of the field at `loc` (see `teton.spec.model._limit`), if any."""
    models: list[type[BaseModel]] = [root]
    description = None
    for step in loc:
        fields = [m.model_fields[step] for m in models if isinstance(step, str) and step in m.model_fields]
        if fields:  # else a list index or a union tag such as 'roce': stay on these models
            description = fields[0].description
            models = [m for f in fields for m in _models_in(f.annotation)]
    match = _LIMIT.search(description or "")
    return match.group(0) if match else None


def _models_in(tp: Any) -> list[type[BaseModel]]:
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return [tp]
    return [m for arg in get_args(tp) for m in _models_in(arg)]


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception:  # a Python spec's object may have any __repr__
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."
