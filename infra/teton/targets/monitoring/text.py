"""Values from the design on their way into Prometheus's formats: a label value quoted and escaped for the text
exposition format and for PromQL's series notation (the same rules: backslash, double quote and newline escaped), a
series written `name{label="value",...}` with its labels sorted, and YAML with multi-line strings (PromQL) as literal
blocks, every other string quoted where YAML would read it as something else."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import yaml

Labels = tuple[tuple[str, str], ...]
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def quote(value: str) -> str:
    """`value` as a quoted label value of the exposition format and of PromQL."""
    if "\\" not in value and '"' not in value and "\n" not in value:
        return '"' + value + '"'
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


_NAMES: set[str] = set()      # label names already checked
_STR = frozenset({str})


def labels_of(pairs: Mapping[str, str | int | None] | Iterable[tuple[str, str | int | None]]) -> Labels:
    """Sorted (name, value) pairs, empty and None values left out (Prometheus has no empty label)."""
    items = pairs.items() if isinstance(pairs, Mapping) else pairs
    out = tuple(sorted((k, v if isinstance(v, str) else str(v)) for k, v in items if v is not None and v != ""))
    for name, _ in out:
        if name not in _NAMES:
            if not LABEL_NAME.fullmatch(name) or name.startswith("__"):
                raise ValueError(f"not a label name: {name!r}")
            _NAMES.add(name)
    return out


def fixed_labels(*names: str) -> Callable[..., Labels]:
    """`labels_of` for one set of names, given sorted: `make(*values)` (in the names' order) is
    `labels_of(zip(names, values))`, the names checked once here instead of sorted and checked every call (the 24k's
    designed series: 0.2 s of monitoring's 1.6 s)."""
    labels_of((n, "x") for n in names)
    if list(names) != sorted(set(names)):
        raise ValueError(f"label names not sorted or repeated: {names}")

    n = len(names)

    def make(*values: str | int | None) -> Labels:
        if len(values) == n and set(map(type, values)) <= _STR and "" not in values:     # nothing to convert or drop
            return tuple(zip(names, values, strict=True))     # type: ignore[arg-type]
        return tuple((k, v if isinstance(v, str) else str(v))
                     for k, v in zip(names, values, strict=True) if v is not None and v != "")
    return make


def series(name: str, labels: Labels) -> str:
    """`name{a="x",b="y"}`: one series of the exposition format, or a selector of PromQL's series notation.  Every
    pair joined unquoted first: with no backslash, no newline and two double quotes a pair in the text, no label had
    any and `quote` would have changed none (the 24k's 155k series: 2x faster); else each quoted."""
    if not labels:
        return name
    body = '",'.join([k + '="' + v for k, v in labels]) + '"'      # no f-string: a str subclass's str data
    if "\\" in body or "\n" in body or body.count('"') != 2 * len(labels):
        body = ",".join(f"{k}={quote(v)}" for k, v in labels)
    return name + "{" + body + "}"


def number(value: float) -> str:
    """A sample value as both formats write it: integers without a point, others in their shortest form (an int that
    a float holds exactly, |value| <= 2**53, without the float)."""
    if type(value) is int and -_EXACT <= value <= _EXACT:
        return str(value)
    if float(value).is_integer():
        return str(int(value))
    return repr(float(value))


_EXACT = 2 ** 53


# libyaml's emitter where PyYAML was built with it: the same bytes, several times faster
_Base: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_Base):      # type: ignore[valid-type,misc]
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


_Dumper.add_representer(str, _str)


def dump_yaml(data: Any, head: str = "") -> str:
    """`data` as YAML in the order given (deterministic: the callers sort), `head` as comment lines first."""
    comment = "".join(f"# {line}".rstrip() + "\n" for line in head.splitlines())
    return comment + yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=4096,
                               allow_unicode=False)
