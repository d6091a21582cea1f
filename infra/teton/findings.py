"""Findings: errors and warnings as values, with a path into the spec.  Only the CLI prints them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, order=True)
class Finding:
    """One problem: where it is (file, line, path inside the spec) and what it is."""

    file: str
    path: str
    message: str
    rule: str = "schema"
    line: int | None = None
    severity: Literal["error", "warning"] = "error"

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        return f"{where}: {self.path or '<root>'}: {self.message} [{self.rule}]"

    def as_dict(self) -> dict[str, object]:
        return {"file": self.file, "line": self.line, "path": self.path, "message": self.message,
                "rule": self.rule, "severity": self.severity}


class TetonError(Exception):
    """The root of every exception teton raises (`teton.Error`).  Raised itself: a problem the user can act on, said in
    one line (a setting, a folder, a missing tool); the CLI prints the message and exits 2, without a traceback.
    Subclasses keep the builtin base their callers catch (SecretError is a KeyError, FabricFormatError a ValueError
    ...), and SpecError carries findings instead of one line."""


class SpecError(TetonError):
    """Raised by loaders and designers when findings make further work impossible."""

    def __init__(self, findings: list[Finding]):
        super().__init__("\n".join(str(f) for f in findings))
        self.findings = findings


def join_path(parts: tuple[str | int, ...] | list[str | int]) -> str:
    """('storage', 0, 'racks') -> 'storage[0].racks'."""
    out = ""
    for p in parts:
        if isinstance(p, int):
            out += f"[{p}]"
        else:
            out += ("." if out else "") + str(p)
    return out
