"""teton: GPU training clusters as code (spec -> fabric -> configs -> deploy).

The library's verbs (`teton.api`, docs/api.md) are attributes of this package, loaded on first use, so `import teton`
imports nothing heavy (no pydantic models, targets, pyavd, libyang)::

    import teton
    spec = teton.load("inventory/lab.yaml")
    fabric = teton.design(spec)

Five verbs share their name with a subpackage (`teton.design`, `teton.validate`, `teton.verify`, `teton.diff`,
`teton.report`).  The verb wins: importing the subpackage does not rebind the name (this module's class refuses it),
and the verb forwards attribute access to its subpackage, so `teton.design(spec)`, `teton.design.design(cluster)` and
`from teton.design import design` all keep working whatever was imported first.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from teton.api import Error as Error
    from teton.api import Finding as Finding
    from teton.api import SpecError as SpecError
    from teton.api import design as design
    from teton.api import diff as diff
    from teton.api import load as load
    from teton.api import plan as plan
    from teton.api import render as render
    from teton.api import report as report
    from teton.api import validate as validate
    from teton.api import validate_build as validate_build
    from teton.api import verify as verify

VERBS = ("Error", "Finding", "SpecError", "design", "diff", "load", "plan", "render", "report", "validate",
         "validate_build", "verify")
SHADOWED = frozenset({"design", "diff", "report", "validate", "verify"})   # verbs named like a subpackage

__all__ = list(VERBS)


class _Verb:
    """A verb named like a subpackage: calling it calls `teton.api.<name>`; its attributes are the subpackage's."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module("teton.api"), self._name)(*args, **kwargs)

    def _module(self) -> types.ModuleType:
        return importlib.import_module(f"{__name__}.{self._name}")

    def __getattr__(self, attr: str) -> Any:
        if attr == "__wrapped__":   # inspect.signature(teton.design) and help() show the verb's
            return getattr(importlib.import_module("teton.api"), self._name)
        return getattr(self._module(), attr)

    def __setattr__(self, attr: str, value: Any) -> None:
        setattr(self._module(), attr, value)

    def __delattr__(self, attr: str) -> None:
        delattr(self._module(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._module())

    def __repr__(self) -> str:
        return f"<teton verb {self._name} (subpackage teton.{self._name})>"


class _Package(types.ModuleType):
    """This package: a subpackage import leaves a verb of the same name in place (see the docstring)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in SHADOWED and isinstance(value, types.ModuleType):
            value = _Verb(name)
        super().__setattr__(name, value)


def __getattr__(name: str) -> Any:
    if name in SHADOWED:
        verb: Any = _Verb(name)
    elif name in VERBS:
        verb = getattr(importlib.import_module("teton.api"), name)
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    setattr(sys.modules[__name__], name, verb)
    return verb


sys.modules[__name__].__class__ = _Package
