"""Ansible data is data: how the rendered variables files mark their values unsafe for templating, and how teton's own
readers take the mark off again.

Ansible trusts the strings of an inventory's vars files as Jinja2 templates: `{{ lookup('pipe', ...) }}` in a host's
variables runs on the controller the first time a play reads it.  Every value teton writes is data, so every one is
marked untrusted, in the spelling ansible-core (2.19) reads for each format:

- JSON (`host_vars/<host>.json`): every string becomes `{"__ansible_unsafe": "<string>"}`, read by the legacy JSON
  profile that Ansible's vars loader decodes JSON files with;
- YAML (`group_vars/<group>.yml`): every variable's value is tagged `!unsafe` (Ansible marks all the strings below a
  tagged node, mappings and lists included).

`MEANT_AS_TEMPLATES` are the exceptions: variables whose value teton writes as a template (and only with that value).
`unwrap` gives the plain data back (what the schema, the roles' argument specs and the twin read); `validate
--rendered` still refuses a template mark in any variable, so a file whose marks were taken off is refused too.
"""

from __future__ import annotations

from typing import Any

import yaml

UNSAFE_KEY = "__ansible_unsafe"
UNSAFE_TAG = "!unsafe"


class _Unsafe:
    """A variable's value to be written under the YAML tag `!unsafe`."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value


def wrap_json(value: Any) -> Any:
    """`value` with every string (not the keys: JSON keys are strings and Ansible never templates them) spelled as
    `{"__ansible_unsafe": string}`."""
    if isinstance(value, str):
        return {UNSAFE_KEY: value}
    if isinstance(value, dict):
        return {k: wrap_json(x) for k, x in value.items()}
    if isinstance(value, list | tuple):
        return [wrap_json(x) for x in value]
    return value


_INT64 = 2 ** 63


def wrap_json_plain(value: Any) -> tuple[Any, bool]:
    """(`wrap_json(value)`, whether what it gives is plain for `teton.targets.jsontext.pretty_json`: only dicts
    with str keys, lists, str, bool, None and 64-bit ints, of their exact types), in the one walk.  A value of any
    other type is wrapped by `wrap_json` itself, and marks the whole as not plain."""
    odd: list[Any] = []

    def walk(x: Any) -> Any:
        t = type(x)
        if t is str:
            return {UNSAFE_KEY: x}
        if t is dict:
            out = {}
            for k, v in x.items():
                if type(k) is not str:
                    odd.append(k)
                out[k] = walk(v)
            return out
        if t is list or t is tuple:
            return [walk(v) for v in x]
        if x is None or t is bool or (t is int and -_INT64 <= x < _INT64):
            return x
        odd.append(x)
        return wrap_json(x)

    out = walk(value)
    return out, not odd


_STR = "tag:yaml.org,2002:str"


def _plain_is_str(text: str) -> bool:
    """True when `text` written plain reads back as a string.  Ansible reads a tagged scalar as if it were plain
    (`!unsafe 'true'` is the bool), so a string that reads as another type is not tagged: it holds no template mark."""
    resolver: Any = yaml.resolver.Resolver()
    return bool(resolver.resolve(yaml.ScalarNode, text, (True, False)) == _STR)


def mark_yaml(variables: dict[str, Any], meant_as_templates: dict[str, str]) -> dict[str, Any]:
    """The variables of a YAML vars file with each value tagged `!unsafe`, but those in `meant_as_templates` that hold
    exactly the template teton writes, and values with no string to mark (numbers, booleans)."""
    return {k: x if (meant_as_templates.get(k) == x or not isinstance(x, dict | list | tuple | str)
                     or (isinstance(x, str) and not _plain_is_str(x))) else _Unsafe(x)
            for k, x in variables.items()}


def unwrap(value: Any) -> Any:
    """The plain data of a variables file as `json.loads` or `yaml_loader` read it: `{"__ansible_unsafe": s}` is `s`."""
    if isinstance(value, dict):
        if len(value) == 1 and UNSAFE_KEY in value and isinstance(value[UNSAFE_KEY], str):
            return value[UNSAFE_KEY]
        return {k: unwrap(x) for k, x in value.items()}
    if isinstance(value, list):
        return [unwrap(x) for x in value]
    return value


_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_BaseLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class Dumper(_BaseDumper):  # type: ignore[misc]
    """The safe dumper, which also writes `_Unsafe` values under `!unsafe`."""


class Loader(_BaseLoader):  # type: ignore[misc]
    """The safe loader, which also reads `!unsafe` (as the plain value under it)."""


def _represent_unsafe(dumper: Any, data: _Unsafe) -> Any:
    node = dumper.represent_data(data.value)
    node.tag = UNSAFE_TAG
    return node


def _construct_unsafe(loader: Any, node: Any) -> Any:
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    # a scalar: resolved as if it were plain, as Ansible does (`mark_yaml` tags only those that read as strings)
    plain = yaml.ScalarNode(loader.resolve(yaml.ScalarNode, node.value, (True, False)), node.value,
                            node.start_mark, node.end_mark, node.style)
    return loader.construct_object(plain, deep=True)


Dumper.add_representer(_Unsafe, _represent_unsafe)
Loader.add_constructor(UNSAFE_TAG, _construct_unsafe)
