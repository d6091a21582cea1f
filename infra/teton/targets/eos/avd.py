"""Validate and render Arista EOS structured configs with pyavd (AVD ``eos_cli_config_gen``).

A *structured config* is a plain dict in the ``eos_cli_config_gen`` schema (one per CTSW/ATSW).  This module

* validates it with pyavd's schema validator and turns every violation (and deprecation) into an `AvdIssue`
  with a readable path such as ``ethernet_interfaces[3].mtu``;
* adds the checks pyavd does not make (`teton.targets.eos.checks`);
* renders the validated data to EOS CLI text, byte-identical to ``pyavd.get_device_config``, but with one reused
  templar (``get_device_config`` builds a new ``Templar`` per call, whose module loader re-imports the ~200
  precompiled template modules every time) whose Jinja environment looks up dict fields directly
  (`_dict_first_getattr`; same results: a missing field without a KeyError raised and caught, a field of pyavd's
  Undefined without Jinja's two lookups) and whose ``arista.avd.defined`` test answers its plain calls directly
  (`_plain_defined`); and whose loader compiles each precompiled template with those two inlined where the template
  calls them (`_InlineGetattr`, `_InlineDefined`: no Python call per field read, one Undefined per missing field's
  name).  Measured CPU time per device (bench/eos_avd_render.py): a 220-link spine (3,250 lines) about 120 ms
  instead of 200 ms with the reused templar alone; a 24k reference switch 60 ms with the shortcuts (111 ms without),
  25-28 ms with the inlined templates, 15-16 ms with router-bgp's too (tests/targets/test_eos_avd.py renders the lab
  and a 24k sample both ways, and each rewrite beside the call it replaces).  The loader rewrites the source text
  (`_inlined_source`, the same AST as `_Inliner`'s, ~3x cheaper with the compile).

Reusing the text of a section template across switches (the config is ~200 includes) was measured and not done:
ethernet-interfaces (55-65%) and router-bgp (25%) differ per switch (a cache of their text never hits), the other
~200 sections together were ~10 ms before the inlining, which makes all of them cheaper instead.

pyavd 6.4.0 internals used here (checked against its source): ``pyavd.templater.Templar``,
``pyavd.constants.EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE`` / ``..._PRECOMPILED_TEMPLATE_PATH`` (exactly what
``get_device_config`` uses) and ``pyavd._schema.constants.EOS_CLI_CONFIG_GEN_PICKLED_SCHEMA_PATH`` (the schema, for
the list of top-level keys), ``pyavd.templater.CustomModuleLoader`` (its ``module``, ``path`` and
``_template_name_to_module_name``, which the inlining loader reuses) and the compiled templates' spelling of a field
read, ``environment.getattr(x, "name")``, and of the test, ``t_N = environment.tests['arista.avd.defined']``.
The reused templar is only used for pyavd versions listed in `_TEMPLAR_REUSE_VERIFIED`; any other version, or a
failed import, falls back to ``pyavd.get_device_config``.
"""

from __future__ import annotations

import ast
import functools
import re
import types
from collections import Counter
from collections.abc import Callable
from typing import Any

import jinja2
import pyavd

from teton.targets.eos.checks import PLAIN, plain_json, teton_checks
from teton.targets.eos.issues import ROOT, AvdIssue, AvdValidationError

__all__ = ["AvdIssue", "AvdValidationError", "render_eos_config", "render_validated", "validate_and_render",
           "validate_structured_config", "validated_structured_config"]

try:
    import orjson
except ImportError:  # pragma: no cover - pinned in pyproject.toml; pyavd's own serialisation is used without it
    orjson = None  # type: ignore[assignment]

# pyavd versions whose get_device_config was read and found to be "Templar(precompiled path).render(template, cfg)".
_TEMPLAR_REUSE_VERIFIED = frozenset({"6.4.0"})
# pyavd versions whose validate_structured_config was read and found to be "init_store(); json.dumps(cfg, skipkeys=True,
# default=...) -> pyavd_utils' get_validated_data(text, "eos_config") -> ValidatedDataResult._from_pyavd_utils_...".
_VALIDATE_TEXT_VERIFIED = frozenset({"6.4.0"})
# the public function as imported, so that a replacement (a wrapper, a test's counter) is called instead of bypassed
_PYAVD_VALIDATE = pyavd.validate_structured_config

# --------------------------------------------------------------------------------------------------------------
# validation


def validate_structured_config(device: str, cfg: dict[str, Any]) -> list[AvdIssue]:
    """Every issue in `cfg` (pyavd schema violations and deprecations, plus teton's own checks); [] means valid.

    Never raises on bad data: anything pyavd cannot digest becomes an issue at the root.
    """
    return _validate(device, cfg)[0]


def validated_structured_config(device: str, cfg: Any,
                                shape: int | None = None) -> tuple[list[AvdIssue], dict[str, Any] | None]:
    """(every issue, pyavd's validated and type-coerced data): what pyavd's other functions take (its
    `get_device_test_catalog` wants the structured config "converted and validated" first).  `shape` is
    `plain_json(cfg)` where the caller has it."""
    return _validate(device, cfg, shape)


def _validate(device: str, cfg: Any, shape: int | None = None) -> tuple[list[AvdIssue], dict[str, Any] | None]:
    """(issues, pyavd's validated and type-coerced data or None)."""
    if not isinstance(cfg, dict):
        return [AvdIssue(device, ROOT, f"a structured config is a dict, not {type(cfg).__name__}")], None
    clean = plain_json(cfg) if shape is None else shape
    issues = list(teton_checks(device, cfg, clean))
    try:
        result = _pyavd_validate(cfg, clean)
    except Exception as exc:  # noqa: BLE001 - e.g. ValueError (not serialisable), RuntimeError (NaN -> bad JSON)
        return [*issues, AvdIssue(device, ROOT, f"pyavd cannot validate the structured config: {exc}")], None
    vr = result.validation_result
    for v in vr.violations:
        issues.append(AvdIssue(device, _format_path(v.path, cfg), v.message))
    for d in vr.deprecations:
        issues.append(AvdIssue(device, _format_path(d.path, cfg), f"deprecated: {d.message}"))
    if result.validated_data is None and not vr.violations:
        issues.append(AvdIssue(device, ROOT, "pyavd rejected the structured config without naming a violation"))
    return issues, result.validated_data


def _pyavd_validate(cfg: dict[str, Any], clean: int) -> Any:
    """``pyavd.validate_structured_config(cfg)``, the same result, with the config's JSON text written by orjson (about
    0.3 ms instead of json.dumps' 2 for a 24k switch) where that text denotes the same JSON value.

    pyavd serialises the config with ``json.dumps`` and hands the text to pyavd_utils' parser, so any text of the same
    JSON value gives the same validation.  orjson's compact text (insertion order kept, as json.dumps without
    sort_keys) is that where `cfg` is plain JSON data without a float (`clean` is `plain_json(cfg)`, exactly
    `PLAIN`: exact dicts with str keys, lists, str, int, bool, None; where json.dumps would stringify another type or
    key, orjson would not; the two spell some floats differently, ``1e16`` and ``1e+16``, and the parser's float
    reading is not known to be exact) and orjson serialises it (it refuses ints beyond 64 bits, lone surrogates,
    nesting past 255).  Differences in spelling
    (separators' spaces, UTF-8 instead of ``\\u`` escapes) parse to the same value.  Anything the parser raises
    sends the config to pyavd's function (an error message may name a text position).
    """
    validate = _text_validator() if clean == PLAIN else None
    if validate is not None and pyavd.validate_structured_config is _PYAVD_VALIDATE:
        try:
            text = orjson.dumps(cfg).decode()
        except orjson.JSONEncodeError:
            text = None
        if text is not None:
            try:
                return validate(text)
            except Exception:  # noqa: BLE001, S110 - pyavd's own call below raises or answers as it would
                pass
    return pyavd.validate_structured_config(cfg)


@functools.cache
def _text_validator() -> Callable[[str], Any] | None:
    """pyavd 6.4.0's validate_structured_config from its JSON text on, or None where only the public API is safe."""
    if orjson is None or pyavd.__version__ not in _VALIDATE_TEXT_VERIFIED:
        return None
    try:
        from pyavd._schema.store import init_store
        from pyavd.api.validation import ValidatedDataResult
        from pyavd_utils.validation import get_validated_data
    except Exception:  # noqa: BLE001 - internals moved: use the public API
        return None

    def validate(text: str) -> Any:
        init_store()
        result = get_validated_data(data_as_json=text, schema_name="eos_config")
        return ValidatedDataResult._from_pyavd_utils_validated_data_result(result)

    return validate


def _format_path(parts: list[str], cfg: Any) -> str:
    """pyavd's ["ethernet_interfaces", "3", "mtu"] -> "ethernet_interfaces[3].mtu" (indexes where cfg has lists)."""
    out = ""
    node = cfg
    for part in parts:
        if isinstance(node, list) and part.isdigit():
            out += f"[{part}]"
            node = node[int(part)] if int(part) < len(node) else None
        else:
            out += f".{part}" if out else part
            node = node.get(part) if isinstance(node, dict) else None
    return out or ROOT


# --------------------------------------------------------------------------------------------------------------
# rendering


def render_eos_config(cfg: dict[str, Any]) -> str:
    """EOS CLI text (startup-config) for `cfg`, byte-identical to ``pyavd.get_device_config(validated)``.

    `cfg` is validated first (`validate_structured_config`; this also applies pyavd's type coercion, e.g. an int AS
    number becomes a str), and `AvdValidationError` is raised if any issue is found.  Rendering reuses one templar
    across calls where pyavd allows it (see the module docstring).
    """
    device = str(cfg.get("hostname") or "?") if isinstance(cfg, dict) else "?"
    issues, text = validate_and_render(device, cfg)
    if text is None:
        raise AvdValidationError(issues)
    return text


def validate_and_render(device: str, cfg: Any) -> tuple[list[AvdIssue], str | None]:
    """(every issue, the EOS CLI text or None when there is any issue): one validation, then the render."""
    issues, validated = _validate(device, cfg)
    if issues or validated is None:
        return issues, None
    return [], render_validated(validated)


def render_validated(validated: dict[str, Any]) -> str:
    """EOS CLI text of pyavd's validated data (what `validated_structured_config` gives without an issue)."""
    render = _reused_templar()
    if render is None:
        return str(pyavd.get_device_config(validated))
    return render(validated)


@functools.cache
def _reused_templar() -> Callable[[dict[str, Any]], str] | None:
    """One pyavd Templar for the process, or None where only the public API is safe to use."""
    if pyavd.__version__ not in _TEMPLAR_REUSE_VERIFIED:
        return None
    try:
        from pyavd.constants import (
            EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE,
            EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH,
        )
        from pyavd.j2filters.natural_sort import _alphanum_key as pyavd_alphanum_key
        from pyavd.j2filters.natural_sort import natural_sort as pyavd_natural_sort
        from pyavd.j2tests.defined import defined as pyavd_defined
        from pyavd.templater import CustomModuleLoader, Templar

        templar = Templar(precompiled_templates_path=EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH)
    except Exception:  # noqa: BLE001 - internals moved: use the public API
        return None
    env = templar.environment
    dict_first = type(env).getattr is jinja2.Environment.getattr
    if dict_first:
        env.getattr = _dict_first_getattr(env)  # type: ignore[method-assign,unused-ignore]
    plain_defined = env.tests.get(_DEFINED) is pyavd_defined
    if env.filters.get(_NATURAL_SORT) is pyavd_natural_sort:
        env.filters[_NATURAL_SORT] = _memo_natural_sort(pyavd_natural_sort, pyavd_alphanum_key)
    if plain_defined:
        env.tests[_DEFINED] = functools.partial(_plain_defined, pyavd_defined)
    if dict_first and type(env.loader) is CustomModuleLoader and _inline_ok(env.undefined):
        env.loader = _inlining_loader(env.loader, env.undefined, plain_defined)

    def render(validated: dict[str, Any]) -> str:
        return str(templar.render_template_from_file(
            template_file=EOS_CLI_CONFIG_GEN_JINJA2_CONFIG_TEMPLATE, template_vars=validated
        ))

    render.environment = env  # type: ignore[attr-defined]   # for `warm_templar`
    return render


def _dict_first_getattr(env: jinja2.Environment) -> Callable[[Any, str], Any]:
    """Jinja's ``Environment.getattr`` with a shortcut for plain dicts, giving the same result.

    The compiled AVD templates read every field as ``environment.getattr(obj, "field")`` (~500 per Ethernet
    interface).  Jinja tries ``getattr(obj, "field")`` first, which on a dict raises and catches AttributeError,
    then ``obj["field"]``, else ``undefined(obj=obj, name="field")``.  For an object of exact type dict and a name
    that is not an attribute of dict (``dir(dict)``), the first step always raises, so going straight to the item
    lookup returns the same value; every other case is passed to Jinja unchanged.  This takes about 30% off the
    render time of a 220-link spine (the ethernet_interfaces template dominates it).
    """
    dict_attributes = frozenset(dir(dict))
    jinja_getattr = jinja2.Environment.getattr
    undefined = env.undefined
    absent = object()
    # pyavd's Undefined returns itself for any attribute it does not have (`__getattr__`): a field of a missing
    # field, as in ``ethernet_interface.logging.event``, is that same Undefined
    chains = isinstance(undefined, type) and _returns_itself(undefined)
    undefined_attributes = frozenset(dir(undefined)) if chains else frozenset()

    def getattr_(obj: Any, attribute: str) -> Any:
        t = type(obj)
        if t is dict and attribute not in dict_attributes:
            value = obj.get(attribute, absent)   # most fields a template reads are absent: no KeyError raised
            return undefined(obj=obj, name=attribute) if value is absent else value
        if t is undefined and chains and attribute not in undefined_attributes:
            return obj
        return jinja_getattr(env, obj, attribute)

    return getattr_


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


def warm_templar() -> None:
    """The reused templar made and the templates of `INLINED` loaded (rewritten) now, for forked workers to inherit."""
    render = _reused_templar()
    if render is None:
        return
    env = getattr(render, "environment", None)
    if env is not None:
        for module_name in sorted(INLINED):
            env.get_template(module_name.replace("__", "/", 1).replace("_", "-") + ".j2")


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


_DEFINED = "arista.avd.defined"


def _plain_defined(pyavd_defined: Callable[..., Any], value: Any, test_value: Any = None, var_type: str | None = None,
                   fail_action: str | None = None, var_name: str | None = None, *, run_tests: bool = False) -> Any:
    """pyavd's ``arista.avd.defined`` test (12 M calls in a 24k render), with a shortcut giving the same result for
    the calls the templates make: no `var_type`, `fail_action` or `run_tests`, where pyavd's returns False for an
    undefined or None value, False for a value != `test_value` (if one is given), else True, without any warning or
    error.  Every other call is pyavd's own."""
    if var_type is None and fail_action is None and not run_tests:
        if isinstance(value, jinja2.Undefined) or value is None:
            return False
        return not (test_value is not None and value != test_value)
    return pyavd_defined(value, test_value, var_type, fail_action, var_name, run_tests=run_tests)


_NATURAL_SORT = "arista.avd.natural_sort"
_KEY_MEMO_LIMIT = 1 << 16   # keys kept per `ignore_case`; the memo starts over beyond it


def _memo_natural_sort(pyavd_natural_sort: Callable[..., Any],
                       pyavd_alphanum_key: Callable[..., Any]) -> Callable[..., Any]:
    """pyavd's ``arista.avd.natural_sort`` filter (about 4,000 calls and 13% of a 24k switch's CPU, nearly all in
    its sort key: an ``re.split`` and a conversion per piece for every item) with the key of the common items
    remembered, giving the same list, or the same error, for every input.

    pyavd 6.4.0's filter is ``[] if iterable is Undefined or None else sorted(iterable, key=K)``, where K(item) for
    a Mapping is the key of ``str(item.get(sort_key))`` (the missing and None cases aside), for a Namespace that of
    an attribute, and else that of ``str(item)``; the key of a string `s` depends on `s` and `ignore_case` only
    (``[int or lower-cased or plain piece for piece in re.split(r"(\\d+)", s)]``).  So for an item of exact type
    str or int, or an exact dict (a Mapping, with a sort_key) whose ``sort_key`` value is of exact type str or int,
    the key is that of a str found without calling anything of the item's, and is remembered by that str (its list
    never changes: `sorted` only compares keys).  Any other item (a None or missing field, a subclass such as bool or
    Markup, a Namespace, a missing sort_key: the errors) gets pyavd's own key, with the same arguments.  The key is
    still made for every item, as `sorted` makes it, a 0- or 1-item list included.  Other arguments than
    pyavd's own are passed to pyavd's filter (a TypeError as before).  Only for pyavd versions whose filter was read
    (`_TEMPLAR_REUSE_VERIFIED`, and the templar's filter must be pyavd's function itself);
    tests/targets/test_eos_avd.py compares it with pyavd's on random data, and the renders of the lab and a 24k
    sample with ``get_device_config``."""
    memos: dict[bool, dict[str, list[Any]]] = {True: {}, False: {}}

    def natural_sort(iterable: Any, sort_key: str | None = None, *, strict: bool = True,
                     ignore_case: bool = True, default_value: Any = None) -> list[Any]:
        if isinstance(iterable, jinja2.Undefined) or iterable is None:
            return []
        memo = memos.get(ignore_case) if type(ignore_case) is bool else None
        if memo is None:
            return pyavd_natural_sort(iterable, sort_key, strict=strict, ignore_case=ignore_case,  # type: ignore[no-any-return]
                                      default_value=default_value)
        if len(memo) > _KEY_MEMO_LIMIT:
            memo.clear()

        def key(item: Any) -> list[Any]:
            t = type(item)
            if t is dict and sort_key is not None:
                item_ = item
                item = item_.get(sort_key)
                t = type(item)
                if t is not str and t is not int:
                    return pyavd_alphanum_key(item_, sort_key, strict=strict,  # type: ignore[no-any-return]
                                              ignore_case=ignore_case, default_value=default_value)
            if t is str:
                text = item
            elif t is int:
                text = int.__repr__(item)
            else:
                return pyavd_alphanum_key(item, sort_key, strict=strict,  # type: ignore[no-any-return]
                                          ignore_case=ignore_case, default_value=default_value)
            k = memo.get(text)
            if k is None:
                k = memo[text] = pyavd_alphanum_key(text, None, strict=strict, ignore_case=ignore_case,
                                                    default_value=default_value)
            return k

        return sorted(iterable, key=key)

    return natural_sort
