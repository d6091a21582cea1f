"""The shape of teton's imports: no import cycle among the modules of infra/teton, and a command line whose modules
share only public names (`teton.cli.common`), never importing the module that assembles `main`."""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from collections.abc import Iterable, Mapping

import grimp
import pytest

from tests.helpers import ROOT

# Cycles known and not yet broken, each as the sorted modules of one strongly connected component; a new cycle (or a
# known one that grows) fails.  None today: spec.load and spec.pyspec imported each other until spec/messages.py.
KNOWN_CYCLES: frozenset[tuple[str, ...]] = frozenset()
ASSEMBLY = {"teton.cli", "teton.cli.app", "teton.cli.__main__"}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("teton", cache_dir=None)


def cycles(modules: Iterable[str], imports: Mapping[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected components of more than one module (and a module importing itself): Tarjan, iterative."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[tuple[str, ...]] = set()
    for root in sorted(modules):
        if root in index:
            continue
        work = [(root, iter(sorted(imports.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(imports.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1 or node in imports.get(node, ()):
                        found.add(tuple(sorted(component)))
    return found


def test_cycles_finds_a_cycle_and_nothing_else():
    imports = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"e"}}
    assert cycles(imports, imports) == {("a", "b", "c"), ("e",)}


def test_no_import_cycle_among_teton_modules(graph):
    imports = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    found = cycles(graph.modules, imports)
    assert not {c for c in found if any(m == "teton.cli" or m.startswith("teton.cli.") for m in c)}, found
    assert found == KNOWN_CYCLES, f"new: {sorted(found - KNOWN_CYCLES)}; gone: {sorted(KNOWN_CYCLES - found)}"


def _cli_modules(graph: grimp.ImportGraph) -> list[str]:
    return sorted(m for m in graph.modules if m == "teton.cli" or m.startswith("teton.cli."))


def _private_names_imported(module: str, cli: set[str]) -> list[str]:
    """`from teton.cli.x import _y`, `teton.cli.x._y` and `x._y` (x a cli module imported as a name) in `module`."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    tree = ast.parse(open(spec.origin, encoding="utf-8").read(), spec.origin)
    bound: dict[str, str] = {}          # local name -> the cli module it names
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0 and node.module in cli:
            for alias in node.names:
                whole = f"{node.module}.{alias.name}"
                if whole in cli:
                    bound[alias.asname or alias.name] = whole
                elif alias.name.startswith("_") and node.module != module:
                    bad.append(f"{module}:{node.lineno} imports {whole}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in cli and alias.asname:
                    bound[alias.asname] = alias.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            target = ast.unparse(node.value)
            owner = bound.get(target, target if target in cli else None)
            if owner is not None and owner != module:
                bad.append(f"{module}:{node.lineno} uses {owner}.{node.attr}")
    return bad


def test_no_cli_module_imports_a_private_name_of_another(graph):
    cli = set(_cli_modules(graph))
    assert {"teton.cli.app", "teton.cli.common"} <= cli
    assert [bad for m in sorted(cli) for bad in _private_names_imported(m, cli)] == []


def test_command_modules_never_import_the_assembly(graph):
    """Only `teton.cli` (which re-exports `main`) and `__main__` import `teton.cli.app`; no command module imports
    the package either, so adding a command never makes a cycle."""
    for module in _cli_modules(graph):
        if module in ASSEMBLY:
            continue
        assert not set(graph.find_modules_directly_imported_by(module)) & ASSEMBLY, module


def test_the_cli_is_the_top_layer_and_exports_main():
    import teton.cli
    from teton.cli.app import main

    assert teton.cli.main is main and teton.cli.__all__ == ["main"]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pyproject["project"]["scripts"]["teton"] == "teton.cli:main"
    layers = next(c for c in pyproject["tool"]["importlinter"]["contracts"] if c["type"] == "layers")["layers"]
    assert layers[0] == "teton.cli"
