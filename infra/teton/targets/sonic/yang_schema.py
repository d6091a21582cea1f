"""How SONiC's YANG models describe Config DB: for every table, its lists and containers (keyed by the `|`-separated
parts of a Config DB key), and how each field is encoded as RFC 7951 JSON for libyang 2 (Config DB holds strings;
int8..uint32 must be JSON numbers, booleans JSON booleans).  Indexed once per models folder by `index_tables`."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import libyang

# ---------------------------------------------------------------------------------------------------------------------
# Encoding of Config DB values as RFC 7951 JSON text.  An encoder takes a Config DB value and returns JSON text.

_INT_BOUNDS = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "uint8": (0, 2**8 - 1),
    "uint16": (0, 2**16 - 1),
    "uint32": (0, 2**32 - 1),
}
_INT_RE = re.compile(r"[+-]?[0-9]+")
quote: Callable[[str], str] = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined,unused-ignore]

Encoder = Callable[[Any], str]


def _scalar_text(value: Any) -> str | None:
    """Config DB only has strings: take a stray JSON number or boolean as its string; None for anything else."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return None


def _other(value: Any) -> str:
    """A value that is not a string: a number or boolean is sent as its string; a list, object or null is passed on
    as it is, and libyang reports it."""
    text = _scalar_text(value)
    return quote(text) if text is not None else json.dumps(value, default=str)


def enc_string(value: Any) -> str:
    # string, enumeration, identityref, bits, binary, decimal64, int64, uint64, instance-identifier: JSON strings.
    return quote(value) if isinstance(value, str) else _other(value)


def _enc_int(value: Any) -> str:
    # int8..uint32: JSON numbers.  A value that is no integer stays a string, and libyang reports it.
    if isinstance(value, str):
        return str(int(value)) if _INT_RE.fullmatch(value) else quote(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _other(value)


def _enc_bool(value: Any) -> str:
    if isinstance(value, str):
        return value if value in ("true", "false") else quote(value)
    return ("true" if value else "false") if isinstance(value, bool) else _other(value)


def _enc_empty(value: Any) -> str:
    return "[null]" if value in ("", None) else enc_string(value)


def _enc_union(int_bounds: tuple[tuple[int, int], ...], has_bool: bool) -> Encoder:
    """A union value is encoded as the member type that takes it (RFC 7951 section 6.10): a number if an int8..uint32
    member's bounds take it, a boolean if a boolean member does, else a string."""

    def encode(value: Any) -> str:
        text = _scalar_text(value)
        if text is None:
            return _other(value)
        if int_bounds and _INT_RE.fullmatch(text):
            number = int(text)
            if any(lo <= number <= hi for lo, hi in int_bounds):
                return str(number)
        if has_bool and text in ("true", "false"):
            return text
        return quote(text)

    return encode


def _enc_leaf_list(item: Encoder) -> Encoder:
    """A leaf-list: a JSON list in config_db.json, or a comma-separated string (as Redis' ``field@`` holds it)."""

    def encode(value: Any) -> str:
        if isinstance(value, str):
            value = [v for v in value.split(",") if v != ""]
        if isinstance(value, list):
            return "[" + ",".join(item(v) for v in value) + "]"
        return _other(value)

    return encode


def _encoder_for(node: libyang.SLeaf | libyang.SLeafList) -> Encoder:
    ytype = node.type()
    bases = list(ytype.basenames())  # leafrefs resolved to their target's type, unions flattened
    if ytype.base() == libyang.Type.UNION or len(set(bases)) > 1:
        int_bounds = tuple(_INT_BOUNDS[b] for b in dict.fromkeys(bases) if b in _INT_BOUNDS)
        has_bool = "boolean" in bases
        item = _enc_union(int_bounds, has_bool) if (int_bounds or has_bool) else enc_string
    elif bases and bases[0] in _INT_BOUNDS:
        item = _enc_int
    elif bases and bases[0] == "boolean":
        item = _enc_bool
    elif bases and bases[0] == "empty":
        item = _enc_empty
    else:
        item = enc_string
    return _enc_leaf_list(item) if isinstance(node, libyang.SLeafList) else item


# ---------------------------------------------------------------------------------------------------------------------
# Schema index: how each Config DB table is modelled.


@dataclass
class Map:
    """The inner key/value list of a map table (DSCP_TO_TC_MAP, CABLE_LENGTH, ...): Config DB field -> value."""

    name: str
    key_prefix: str  # '{"dscp":'
    key_encode: Encoder
    value_prefix: str  # ',"tc":'
    value_encode: Encoder


@dataclass
class Shape:
    """A list (one Config DB key per entry) or a container (one fixed Config DB key) inside a table container."""

    name: str
    is_list: bool
    key_names: tuple[str, ...] = ()
    key_encoders: tuple[tuple[str, Encoder], ...] = ()  # ('"name":', encoder) per key leaf
    leaves: dict[str, tuple[str, Encoder]] = field(default_factory=dict)  # name -> ('"mtu":', encoder)
    inner: Map | None = None


@dataclass
class Table:
    name: str
    top: str  # "<module>:<top container>", e.g. "sonic-port:sonic-port"
    containers: dict[str, Shape] = field(default_factory=dict)
    lists: dict[int, Shape] = field(default_factory=dict)  # by number of key parts
    shapes: dict[str, Shape] = field(default_factory=dict)  # by schema node name
    references: frozenset[str] = frozenset()  # the tables its leafrefs point to (its own name excluded)


def _leafref_tables(node: Any) -> set[str]:
    """The Config DB tables the leafrefs below `node` point to (a leafref path's second segment, prefix dropped)."""
    found: set[str] = set()

    def of_type(ytype: libyang.Type) -> None:
        path = ytype.leafref_path()
        if path:
            segs = [s.split(":")[-1].split("[")[0] for s in path.split("/") if s and s != ".."]
            if path.startswith("/") and len(segs) > 1:
                found.add(segs[1])
        for member in ytype.union_types():
            of_type(member)

    for child in node.children():
        if isinstance(child, libyang.SLeaf | libyang.SLeafList):
            of_type(child.type())
        elif isinstance(child, libyang.SList | libyang.SContainer):
            found |= _leafref_tables(child)
    return found


def _shape(node: libyang.SList | libyang.SContainer) -> Shape:
    is_list = isinstance(node, libyang.SList)
    shape = Shape(name=node.name(), is_list=is_list)
    if isinstance(node, libyang.SList):
        keys = [k for k in node.keys() if isinstance(k, libyang.SLeaf)]   # list keys are always leaves
        shape.key_names = tuple(k.name() for k in keys)
        shape.key_encoders = tuple((quote(k.name()) + ":", _encoder_for(k)) for k in keys)
    for child in node.children():  # lys_getnext: choice/case are transparent
        if child.config_false():
            continue
        if isinstance(child, libyang.SLeaf) and child.is_key():
            continue
        if isinstance(child, libyang.SLeaf | libyang.SLeafList):
            shape.leaves[child.name()] = (quote(child.name()) + ":", _encoder_for(child))
        elif isinstance(child, libyang.SList) and shape.inner is None:
            keys = [k for k in child.keys() if isinstance(k, libyang.SLeaf)]
            values = [c for c in child.children() if isinstance(c, libyang.SLeaf) and not c.is_key()]
            if len(keys) == 1 and len(values) == 1:
                shape.inner = Map(
                    name=child.name(),
                    key_prefix="{" + quote(keys[0].name()) + ":",
                    key_encode=_encoder_for(keys[0]),
                    value_prefix="," + quote(values[0].name()) + ":",
                    value_encode=_encoder_for(values[0]),
                )
    return shape


def index_tables(ctx: libyang.Context, module_names: list[str]) -> dict[str, Table]:
    tables: dict[str, Table] = {}
    for module_name in module_names:
        module = ctx.get_module(module_name)
        for top in module.children():
            if not isinstance(top, libyang.SContainer) or top.config_false():
                continue
            for tnode in top.children():
                if not isinstance(tnode, libyang.SContainer) or tnode.config_false():
                    continue
                children = [c for c in tnode.children() if not c.config_false()]
                # Config DB tables hold only lists and containers (event modules' containers hold leaves).
                if not children or not all(isinstance(c, libyang.SList | libyang.SContainer) for c in children):
                    continue
                table = Table(name=tnode.name(), top=f"{module.name()}:{top.name()}",
                              references=frozenset(_leafref_tables(tnode) - {tnode.name()}))
                for child in children:
                    assert isinstance(child, libyang.SList | libyang.SContainer)
                    shape = _shape(child)
                    table.shapes[shape.name] = shape
                    if shape.is_list:
                        # The lists of one table differ by their number of keys (INTERFACE: name / name|ip-prefix).
                        table.lists.setdefault(len(shape.key_names), shape)
                    else:
                        table.containers[shape.name] = shape
                tables.setdefault(table.name, table)
    return tables
