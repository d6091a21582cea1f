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
  calls them (`teton.targets.eos.inline`: no Python call per field read, one Undefined per missing field's name).
  Measured CPU time per device (bench/eos_avd_render.py): a 220-link spine (3,250 lines) about 120 ms instead of
  200 ms with the reused templar alone; a 24k reference switch 60 ms with the shortcuts (111 ms without),
  25-28 ms with the inlined templates, 15-16 ms with router-bgp's too (tests/targets/test_eos_avd.py renders the lab
  and a 24k sample both ways, and each rewrite beside the call it replaces).

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

import functools
from collections.abc import Callable
from typing import Any

import jinja2
import pyavd

from teton.targets.eos.checks import PLAIN, plain_json, teton_checks
from teton.targets.eos.inline import INLINED, _inline_ok, _inlining_loader, _returns_itself
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


def warm_templar() -> None:
    """The reused templar made and the templates of `INLINED` loaded (rewritten) now, for forked workers to inherit."""
    render = _reused_templar()
    if render is None:
        return
    env = getattr(render, "environment", None)
    if env is not None:
        for module_name in sorted(INLINED):
            env.get_template(module_name.replace("__", "/", 1).replace("_", "-") + ".j2")


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
