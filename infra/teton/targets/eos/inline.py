"""The pyavd templates' hot calls written inline (`teton.targets.eos.avd`'s templar loads the modules of `INLINED`
through `_inlining_loader`): each ``environment.getattr(x, "name")`` as the dict lookup `avd._dict_first_getattr`
makes of it, each plain ``arista.avd.defined`` test as `avd._plain_defined`'s answer, so a field read is no Python
call.  `_Inliner` is the reference rewrite (an AST transform); `_inlined_source` makes the same tree from the source
text, ~3x cheaper with the compile, and is what the loader uses (tests/targets/test_eos_avd.py holds them equal on
every pyavd template, and the renders equal to pyavd's own).  pyavd 6.4.0's compiled templates' spellings are relied
on (``environment.getattr(x, "name")``, ``t_N = environment.tests['arista.avd.defined']``); a rewrite that does not
compile leaves the module as pyavd compiled it (`_NOT_INLINED`).
"""

from __future__ import annotations

import ast
import re
import types
from collections import Counter
from typing import Any

import jinja2


def _inline_ok(undefined: Any) -> bool:
    return isinstance(undefined, type) and _returns_itself(undefined)


class _Inliner(ast.NodeTransformer):
    """Rewrites a compiled template's calls of `_dict_first_getattr` and `_plain_defined` inline, in one pass:

    - each ``environment.getattr(x, "name")``, `name` a constant that is not an attribute of dict, into what
      `_dict_first_getattr` does with it (no call where `x` is a dict):

          o.get("name", U_name) if type(o := x) is dict
          else (o if type(o) is UNDEFINED else environment.getattr(o, "name"))   (the first where "name" is none of
                                                                                  UNDEFINED's attributes)

    - with `defined`, each ``t_N(x)`` or ``t_N(x, C)`` (C a constant) whose ``t_N`` is bound only to
      ``environment.tests['arista.avd.defined']`` (the fallback definition where the test is missing aside) into what
      `_plain_defined` answers: ``(d := x) is not None and not isinstance(d, jinja2.Undefined) [and not d != C]``.

    `x` is evaluated once, as before; `o` and `d` are locals of the template's function (a nested one's is complete
    before the outer one assigns it).  U_name is one UNDEFINED(obj={}, name="name") per name and module, where Jinja
    makes UNDEFINED(obj=x, name="name") per call: an Undefined's `obj` is read only to say what it is in an error's
    message ("'dict object' has no attribute 'name'", the same for every dict) and in pyavd's Undefined's repr, which
    no template calls (no repr, pprint, tojson, '%r' in them: tests/targets/test_eos_avd.py checks), so a render
    gives the same text and a failed one the same error.  The render of every lab switch and of a sample of the 24k's
    is pyavd's own (tests/targets/test_eos_avd.py)."""

    def __init__(self, tree: ast.AST, undefined_attributes: frozenset[str], defined: bool) -> None:
        self.dict_attributes = frozenset(dir(dict))
        self.undefined_attributes = undefined_attributes
        self.names: dict[str, str] = {}   # a field's name: the module global holding its U_name
        self.getattrs = self.defined = 0   # calls rewritten
        self.tests = _defined_tests(tree) if defined else set()

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        f, args = node.func, node.args
        if node.keywords or not args or isinstance(args[0], ast.Starred):
            return node
        if (isinstance(f, ast.Attribute) and f.attr == "getattr" and isinstance(f.value, ast.Name)
                and f.value.id == "environment" and len(args) == 2 and isinstance(args[1], ast.Constant)
                and type(args[1].value) is str and args[1].value not in self.dict_attributes):
            return self._getattr(node, args[0], args[1].value)
        if (isinstance(f, ast.Name) and f.id in self.tests and len(args) <= 2
                and (len(args) == 1 or isinstance(args[1], ast.Constant))):
            return self._defined(node, args[0], args[1].value if len(args) == 2 else None)  # type: ignore[attr-defined]
        return node

    def _getattr(self, node: ast.Call, x: ast.expr, name: str) -> ast.AST:
        missing = self.names.setdefault(name, f"_teton_u{len(self.names)}")
        new: list[ast.AST] = []

        def n(tree: ast.AST) -> Any:
            new.append(tree)
            return tree

        def load(id_: str) -> ast.Name:
            return n(ast.Name(id_, ast.Load()))   # type: ignore[no-any-return]

        other: ast.expr = n(ast.Call(n(ast.Attribute(load("environment"), "getattr", ast.Load())),
                                     [load(_O), n(ast.Constant(name))], []))
        if name not in self.undefined_attributes:
            other = n(ast.IfExp(n(ast.Compare(n(ast.Call(load(_TYPE), [load(_O)], [])), [ast.Is()],
                                              [load(_UNDEFINED)])), load(_O), other))
        expr = n(ast.IfExp(
            n(ast.Compare(n(ast.Call(load(_TYPE), [n(ast.NamedExpr(n(ast.Name(_O, ast.Store())), x))], [])),
                          [ast.Is()], [load(_DICT)])),
            n(ast.Call(n(ast.Attribute(load(_O), "get", ast.Load())), [n(ast.Constant(name)), load(missing)], [])),
            other))
        self.getattrs += 1
        return _located(new, node, expr)

    def _defined(self, node: ast.Call, x: ast.expr, test_value: Any) -> ast.AST:
        new: list[ast.AST] = []

        def n(tree: ast.AST) -> Any:
            new.append(tree)
            return tree

        values: list[ast.expr] = [
            n(ast.Compare(n(ast.NamedExpr(n(ast.Name(_D, ast.Store())), x)), [ast.IsNot()], [n(ast.Constant(None))])),
            n(ast.UnaryOp(ast.Not(), n(ast.Call(n(ast.Name(_ISINSTANCE, ast.Load())),
                                                [n(ast.Name(_D, ast.Load())), n(ast.Name(_JUNDEFINED, ast.Load()))],
                                                []))))]
        if test_value is not None:
            values.append(n(ast.UnaryOp(ast.Not(), n(ast.Compare(n(ast.Name(_D, ast.Load())), [ast.NotEq()],
                                                                 [n(ast.Constant(test_value))])))))
        self.defined += 1
        return _located(new, node, n(ast.BoolOp(ast.And(), values)))


def _located(new: list[ast.AST], node: ast.AST, root: ast.AST) -> ast.AST:
    """`root`, every node of `new` (those made to replace `node`) at `node`'s place in the source."""
    for tree in new:
        ast.copy_location(tree, node)
    return root


def _defined_tests(tree: ast.AST) -> set[str]:
    """The names bound only to ``environment.tests['arista.avd.defined']`` in `tree` (a definition of the name in an
    except clause, the compiled templates' fallback where the test is missing, aside)."""
    bound: dict[str, int] = {}   # bindings of a name: assignments, definitions, arguments
    lookups: dict[str, int] = {}  # of them, `name = environment.tests['arista.avd.defined']`
    in_handlers: set[int] = set()
    for node in ast.walk(tree):   # breadth first: an except clause before what it holds
        if isinstance(node, ast.ExceptHandler):
            in_handlers.update(id(b) for b in node.body)
        elif isinstance(node, ast.Name):
            if not isinstance(node.ctx, ast.Load):
                bound[node.id] = bound.get(node.id, 0) + 1
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            if id(node) not in in_handlers:
                bound[node.name] = bound.get(node.name, 0) + 1
        elif isinstance(node, ast.arg):
            bound[node.arg] = bound.get(node.arg, 0) + 1
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and isinstance(node.value, ast.Subscript) and ast.dump(node.value) == _DEFINED_LOOKUP):
            lookups[node.targets[0].id] = lookups.get(node.targets[0].id, 0) + 1
    return {t for t, k in lookups.items() if bound[t] == k}


_O, _D, _UNDEFINED, _TYPE, _DICT, _ISINSTANCE, _JUNDEFINED = (
    "_teton_o", "_teton_d", "_teton_undefined", "_teton_type", "_teton_dict", "_teton_isinstance",
    "_teton_jinja_undefined")
_DEFINED_LOOKUP = ast.dump(ast.parse("environment.tests['arista.avd.defined']", mode="eval").body)
# the templates rewritten, once per process (`warm_templar`: in the parent before the render's workers fork): those
# a 24k reference switch's render spends its time in (ethernet-interfaces 56%, router-bgp 26%, route-maps 7%, the
# prefix lists 3%; router-bgp's rewrite, 7,600 lines, 0.55 s of CPU as text, 1.5 s by `_Inliner`, saves ~10 ms per
# switch); the others load as pyavd compiled them
INLINED = frozenset({"eos__ethernet_interfaces", "eos__route_maps", "eos__prefix_lists", "eos__ipv6_prefix_lists",
                     "eos__router_bgp"})


def _inlining_loader(loader: Any, undefined: type, defined: bool) -> Any:
    """pyavd's module loader of precompiled templates (`loader`, its state copied), loading each module of `INLINED`
    through `_inlined_module` (kept where pyavd's loader keeps what it loads, `loader.module`; the Template made by
    pyavd's `load` from it), the others as pyavd does."""

    class Loader(type(loader)):  # type: ignore[misc]
        def load(self, environment: jinja2.Environment, name: str,
                 globals: Any = None) -> jinja2.Template:  # noqa: A002 - Jinja's name
            module_name = self._template_name_to_module_name(name)
            if module_name in INLINED and getattr(self.module, module_name, None) is None:
                path = self.path / f"{module_name}.py"
                if path.exists():
                    setattr(self.module, module_name, _inlined_module(module_name, path, undefined, defined, text=True))
            template: jinja2.Template = super().load(environment, name, globals)
            return template

    new = Loader.__new__(Loader)
    new.__dict__.update(loader.__dict__)
    return new


_NOT_INLINED: set[str] = set()   # the modules whose rewritten source did not compile (the tests hold it empty)


def _inlined_module(module_name: str, path: Any, undefined: type, defined: bool = True,
                    text: bool = False) -> types.ModuleType:
    """The module of the compiled template `path` rewritten by `_Inliner` (its calls of the defined test too if
    `defined`), run as pyavd's loader runs the file; as it is if the rewrite does not compile.  With `text`, rewritten
    by `_inlined_source` instead (the same code, ~10x cheaper: the loader's way)."""
    source = path.read_text(encoding="utf-8")
    names: dict[str, str] = {}
    try:
        if text:
            rewritten, names = _inlined_source(source, frozenset(dir(undefined)), defined)
            code = compile(rewritten, str(path), "exec")
        else:
            tree = ast.parse(source, str(path))
            inliner = _Inliner(tree, frozenset(dir(undefined)), defined)
            code = compile(inliner.visit(tree), str(path), "exec")
            names = inliner.names
    except (SyntaxError, ValueError, TypeError):
        _NOT_INLINED.add(module_name)
        names = {}
        code = compile(source, str(path), "exec")
    mod = types.ModuleType(module_name)
    mod.__file__ = str(path)
    mod.__dict__.update({_UNDEFINED: undefined, _TYPE: type, _DICT: dict, _ISINSTANCE: isinstance,
                         _JUNDEFINED: jinja2.Undefined})
    mod.__dict__.update({var: undefined(obj={}, name=name) for name, var in names.items()})
    exec(code, mod.__dict__)  # noqa: S102 - pyavd's own precompiled template, as its loader runs it
    return mod


_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
# an operand as Jinja's compiler writes it: a name (or a placeholder of a call already rewritten), or a template
# variable read as `(undefined(name='v') if l_0_v is missing else l_0_v)`
_OPERAND = rf"(?:{_IDENT}|\(undefined\(name='{_IDENT}'\) if {_IDENT} is missing else {_IDENT}\))"
_GETATTR_CALL = re.compile(rf"(?<![\w.])environment\.getattr\(({_OPERAND}), '({_IDENT})'\)")
_GETITEM_CALL = re.compile(rf"(?<![\w.])environment\.getitem\(({_OPERAND}), ({_OPERAND})\)")
_DEFINED_CALL = re.compile(rf"(?<![\w.])(t_[0-9]+)\(({_OPERAND})(?:, (True|False|None|[0-9]+|'[^'\\\n]*'))?\)")
# the defined test's binding as Jinja's compiler writes it: looked up, else a function raising (in the except clause)
_DEFINED_BINDING = re.compile(r"^([ ]*)try:\n\1    (t_[0-9]+) = environment\.tests\['arista\.avd\.defined'\]\n"
                              r"\1except KeyError:\n\1    @internalcode\n\1    def \2\(\*unused\):\n", re.M)
_PLACEHOLDER = re.compile(r"_teton_p([0-9]+)_")


def _inlined_source(source: str, undefined_attributes: frozenset[str], defined: bool) -> tuple[str, dict[str, str]]:
    """(the source `_Inliner` makes of the compiled template `source`, its `names`), written by text substitution
    instead of an AST walk (router-bgp: 0.55 s with the compile instead of 1.5 s): the calls `_Inliner` rewrites are
    written by Jinja's compiler on one line, their operand a name or a template variable's read (`_OPERAND`), their
    field a quoted identifier; each is replaced, innermost first, by a placeholder name (an operand of the call around
    it; an ``environment.getitem`` of operands too), then the placeholders by the expressions `_Inliner` builds.  The
    defined test's names are those Jinja binds to `environment.tests['arista.avd.defined']` once and that are bound
    nowhere else.  A call written otherwise is left as it is (its function answers as the inlined code does).
    tests/targets/test_eos_avd.py holds the AST so made of every template of `INLINED` (and nearly all others) equal
    to `_Inliner`'s, on the same lines."""
    dict_attributes = frozenset(dir(dict))
    names: dict[str, str] = {}
    parts: list[str] = []
    tests: set[str] = set()
    if defined:
        assigned = Counter(t for _, t in _DEFINED_BINDING.findall(source))
        tests = {t for t, k in assigned.items()   # no other binding: the name read only as called, one definition
                 if k == 1 and len(re.findall(rf"(?<![\w.]){t}\b(?!\()", source)) == 1
                 and len(re.findall(rf"\bdef {t}\(", source)) == 1}

    def getattr_(m: re.Match[str]) -> str:
        x, name = m.group(1), m.group(2)
        if name in dict_attributes:
            return m.group(0)
        missing = names.setdefault(name, f"_teton_u{len(names)}")
        other = f"environment.getattr({_O}, '{name}')"
        if name not in undefined_attributes:
            other = f"({_O} if {_TYPE}({_O}) is {_UNDEFINED} else {other})"
        parts.append(f"({_O}.get('{name}', {missing}) if {_TYPE}({_O} := {x}) is {_DICT} else {other})")
        return f"_teton_p{len(parts) - 1}_"

    def defined_(m: re.Match[str]) -> str:
        if m.group(1) not in tests:
            return m.group(0)
        test_value = m.group(3)
        parts.append(f"(({_D} := {m.group(2)}) is not None and not {_ISINSTANCE}({_D}, {_JUNDEFINED})"
                     + (f" and not {_D} != {test_value})" if test_value is not None else ")"))
        return f"_teton_p{len(parts) - 1}_"

    def item(m: re.Match[str]) -> str:   # an operand too, as it is
        parts.append(m.group(0))
        return f"_teton_p{len(parts) - 1}_"

    text = source
    while True:
        before = len(parts)
        text = _GETATTR_CALL.sub(getattr_, text)
        text = _GETITEM_CALL.sub(item, text)
        if tests:
            text = _DEFINED_CALL.sub(defined_, text)
        if len(parts) == before:
            break

    def expand(m: re.Match[str]) -> str:
        return _PLACEHOLDER.sub(expand, parts[int(m.group(1))])

    return _PLACEHOLDER.sub(expand, text), names


def _returns_itself(cls: type) -> bool:
    """`cls` (an Undefined class) answers an attribute it does not have with the instance itself, as pyavd's does."""
    try:
        probe = cls(name="probe")
        return bool(probe.teton_no_such_attribute is probe)
    except Exception:  # noqa: BLE001 - any other Undefined: Jinja's getattr as is
        return False
