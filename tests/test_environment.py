"""teton.environment is the one module that reads teton's `TETON_*` variables, and it declares every one of them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from teton import environment, secrets

PACKAGE = Path(__file__).resolve().parents[1] / "infra" / "teton"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "commands.md"
# TETON_* words in the code that are no environment variable
NOT_VARIABLES = {
    "TETON_FABRIC_TAGS",       # a SONiC Config DB table teton writes
    "TETON_NOT_COMPARED",      # what `teton drift` shows in place of a password
}
_NAME = re.compile(r"\bTETON_[A-Z0-9_]*[A-Z0-9]")
_WHOLE_ENVIRONMENT = {"dict", "copy"}     # dict(os.environ), os.environ.copy(): the environment of a subprocess


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "environment.py" or p.parent != PACKAGE)


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ" and isinstance(node.value, ast.Name) \
        and node.value.id == "os"


def _environment_reads(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, what) of every use of the process environment that is not a literal non-TETON name or the whole
    environment handed to a subprocess."""
    bad: list[tuple[int, str]] = []
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "os" and \
                {a.name for a in node.names} & {"environ", "getenv", "putenv"}:
            bad.append((node.lineno, "from os import environ/getenv"))
        getenv = isinstance(node, ast.Attribute) and node.attr in {"getenv", "putenv"} and \
            isinstance(node.value, ast.Name) and node.value.id == "os"
        if not (_is_environ(node) or getenv):
            continue
        parent = parents.get(node)
        key: ast.AST | None = None
        if isinstance(parent, ast.Subscript) and parent.value is node:
            key = parent.slice
        elif isinstance(parent, ast.Attribute) and parent.attr in {"get", "pop", "setdefault"}:
            call = parents.get(parent)
            key = call.args[0] if isinstance(call, ast.Call) and call.args else None
        elif isinstance(parent, ast.Call) and parent.func is node:          # os.getenv(NAME)
            key = parent.args[0] if parent.args else None
        elif isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in \
                _WHOLE_ENVIRONMENT:
            continue
        elif isinstance(parent, ast.Attribute) and parent.attr in _WHOLE_ENVIRONMENT:
            continue
        if isinstance(key, ast.Constant) and isinstance(key.value, str) and not key.value.startswith("TETON_"):
            continue
        bad.append((node.lineno, ast.unparse(parent if parent is not None else node)))
    return sorted(bad)


def test_no_module_but_teton_environment_reads_a_teton_variable():
    found = [f"{p.relative_to(PACKAGE.parent)}:{line}: {what}" for p in _modules()
             for line, what in _environment_reads(ast.parse(p.read_text(encoding="utf-8")))]
    assert found == [], "read TETON_* variables through teton.environment (get, export, secrets):\n" + "\n".join(found)


def test_the_scan_sees_the_ways_a_variable_is_read():
    code = ('import os\nos.environ.get("TETON_X")\nos.environ["TETON_Y"]\nos.getenv(NAME)\nos.environ.get("HOME")\n'
            'env = dict(os.environ)\nos.environ[NAME] = "1"\n')
    assert [line for line, _ in _environment_reads(ast.parse(code))] == [2, 3, 4, 7]


def test_every_teton_name_in_the_code_is_declared_and_every_declared_one_is_used():
    used = {m for p in _modules() for m in _NAME.findall(p.read_text(encoding="utf-8"))}
    used -= NOT_VARIABLES | {environment.SECRET_PREFIX.rstrip("_")}      # `TETON_SECRET_<name>` in prose
    assert sorted(n for n in used if not environment.declared(n)) == [], "declare them in teton.environment.VARIABLES"
    assert sorted(v.name for v in environment.VARIABLES if not v.prefix and v.name not in used) == []
    assert secrets.PREFIX == environment.SECRET_PREFIX


def test_an_undeclared_name_is_refused():
    import pytest

    with pytest.raises(KeyError, match="TETON_NOPE"):
        environment.get("TETON_NOPE")
    assert environment.secrets({"TETON_SECRET_a": "1", "TETON_SECRET_": "x", "HOME": "/"}) == {"a": "1"}


def test_docs_commands_lists_every_variable():
    assert environment.table() in DOCS.read_text(encoding="utf-8"), \
        "docs/commands.md's table of environment variables differs: paste teton.environment.table()"
