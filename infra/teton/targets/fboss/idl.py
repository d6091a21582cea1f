"""FBOSS's pinned thrift IDL, loaded with thriftpy2 into a plain schema the strict check walks (`fboss.walk`).

FBOSS writes its IDL for fbthrift, whose grammar is newer than the one thriftpy2 (a pure-Python Apache Thrift parser)
reads.  `preprocess` rewrites a file so thriftpy2 loads it, keeping every line where it was (an error's line number is
the pinned file's), and counts each kind of change so a test notices when the IDL drifts:

- `include "thrift/annotation/..."`: blanked (fbthrift's annotation files; nothing of the config refers to them);
- `package ...;`: blanked (fbthrift's package statement);
- structured annotations (`@hack.NamePrefix{...}`, `@thrift.Deprecated`, possibly over several lines): blanked;
- a bare enum value as a field default (`PortSpeed speed = DEFAULT`): qualified (`PortSpeed.DEFAULT`);
- `float`: read as `double` (both are a JSON number);
- a field named `end` (a reserved word of thriftpy2): renamed `end_` in the parser's copy, and the schema maps it back.

None of these changes a JSON name, a type's range or a field's requiredness.  The loaded schema keeps, per struct, its
fields by JSON name with their thrift types, `required` as the IDL says (fbthrift reads an unqualified field that is
absent as its default, so only `required` fields must be present), and whether it is a union; per enum its values.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from teton.findings import TetonError
from teton.targets.fboss.bounded import MAX_IDL_FILE, MAX_IDL_FILES, read_text

AGENT_ROOT = "fboss/agent/agent_config.thrift"
BGP_ROOT = "configerator/structs/neteng/fboss/bgp/bgp_config.thrift"
RENAMED = {"end_": "end"}   # parser's name -> JSON name (fields whose JSON name thriftpy2 reserves)

_ANNOTATION = re.compile(r"@[A-Za-z_][\w.]*")
_PACKAGE = re.compile(r"^\s*package\b\s*(\"[^\"]*\")?\s*;?\s*$")
_ANNOTATION_INCLUDE = re.compile(r'^\s*include\s+"thrift/annotation/[^"]*"')
_CONST = re.compile(r"^\s*const\s+\S+\s+(\w+)\s*=")
_DEFAULT = re.compile(r"^(\s*-?\d+\s*:\s*(?:optional\s+|required\s+)?)([\w.]+|(?:list|set)<\s*[\w.]+\s*>)"
                      r"(\s+\w+\s*=\s*)(\[[^\]]*\]|[A-Za-z_]\w*)(\s*[;,]?\s*(?://.*)?)$")
_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?![\w.])")
_FLOAT = re.compile(r"\bfloat\b")
_END_FIELD = re.compile(r"^(\s*-?\d+\s*:\s*(?:optional\s+|required\s+)?[\w.<>, ]+\s)end(\s*[;,=]|\s*$)")


@dataclass
class Changes:
    """What `preprocess` changed, by kind, over every file it read."""

    counts: Counter[str] = field(default_factory=Counter)

    def add(self, kind: str, n: int = 1) -> None:
        self.counts[kind] += n


def _blank_annotation(lines: list[str], i: int, start: int) -> int:
    """Blank the annotation that starts at lines[i][start:] (with its `{...}` body, which may span lines), keeping the
    rest of each line and the line count; returns the line after it ends."""
    line = lines[i]
    m = _ANNOTATION.match(line, start)
    assert m is not None
    end = m.end()
    rest = line[end:]
    if not rest.lstrip().startswith("{"):
        lines[i] = line[:start] + " " * (end - start) + line[end:]
        return i
    depth, j, col = 0, i, end + (len(rest) - len(rest.lstrip()))
    in_string = False
    while j < len(lines):
        text = lines[j]
        k = col
        while k < len(text):
            ch = text[k]
            if in_string:
                in_string = ch != '"'
            elif ch == '"':
                in_string = True
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    if j == i:
                        lines[i] = text[:start] + " " * (k + 1 - start) + text[k + 1:]
                    else:
                        lines[i] = lines[i][:start]
                        for b in range(i + 1, j):
                            lines[b] = ""
                        lines[j] = " " * (k + 1) + text[k + 1:]
                    return j
            k += 1
        j += 1
        col = 0
    raise TetonError(f"FBOSS IDL: an annotation at line {i + 1} never closes its '{{'")


def _qualify_default(line: str, consts: set[str], changes: Changes) -> str:
    """A field default that names enum values bare (`PortSpeed speed = DEFAULT`, `list<CounterType> t = [PACKETS]`)
    with each value qualified by the field's (element) type."""
    m = _DEFAULT.match(line)
    if m is None:
        return line
    enum = m.group(2)
    if "<" in enum:
        enum = enum[enum.index("<") + 1:-1].strip()
    bare = [w for w in _IDENT.findall(m.group(4)) if w not in consts and w not in ("true", "false")]
    if not bare:
        return line
    value = _IDENT.sub(lambda w: f"{enum}.{w.group(1)}" if w.group(1) in bare else w.group(1), m.group(4))
    changes.add("bare enum default")
    return m.group(1) + m.group(2) + m.group(3) + value + m.group(5)


def preprocess(text: str, consts: set[str], changes: Changes) -> str:
    """The thriftpy2-readable text of one IDL file, line for line (see the module docstring)."""
    lines = text.split("\n")
    i = 0
    in_comment = False
    while i < len(lines):
        line = lines[i]
        if in_comment:
            if "*/" in line:
                in_comment = False
            i += 1
            continue
        stripped = line.lstrip()
        if stripped.startswith("/*") and "*/" not in stripped:
            in_comment = True
            i += 1
            continue
        if stripped.startswith(("//", "#", "*")):
            i += 1
            continue
        if _ANNOTATION_INCLUDE.match(line):
            lines[i] = ""
            changes.add("annotation include")
        elif _PACKAGE.match(line):
            lines[i] = ""
            changes.add("package")
        elif stripped.startswith("@"):
            i = _blank_annotation(lines, i, len(line) - len(stripped))
            changes.add("annotation")
            continue   # the same line again: another annotation may follow on it
        else:
            if _FLOAT.search(line.split("//")[0]):
                lines[i] = _FLOAT.sub("double", line)
                changes.add("float")
            lines[i] = _qualify_default(lines[i], consts, changes)
            m = _END_FIELD.match(lines[i])
            if m:
                lines[i] = lines[i][:m.end(1)] + "end_" + lines[i][m.end(1) + 3:]
                changes.add("field named end")
        i += 1
    return "\n".join(lines)


_STRUCT = re.compile(r"^\s*(?:struct|union|exception)\s+(\w+)")
_FIELD_NAME = re.compile(r"^\s*-?\d+\s*:\s*(?:optional\s+|required\s+)?.*?(\w+)\s*(?:=.*)?[;,]?\s*(?://.*)?$")
_DEPRECATED = re.compile(r'@thrift\.Deprecated\b(?!\w)|"deprecated"\s*:\s*"1"')


def deprecated_fields(text: str, module: str) -> set[str]:
    """`module.Struct.field` of every field the IDL marks deprecated (`@thrift.Deprecated`, or the unvalidated
    `{"deprecated": "1"}` annotation); fields named `*_DEPRECATED` are deprecated by their name."""
    out: set[str] = set()
    struct, pending = "", False
    for line in text.splitlines():
        if m := _STRUCT.match(line):
            struct, pending = m.group(1), False
        elif _DEPRECATED.search(line):
            pending = True
        elif pending and re.match(r"^\s*-?\d+\s*:", line):
            if m := _FIELD_NAME.match(line):     # a field over several lines is deprecated by its name
                out.add(f"{module}.{struct}.{RENAMED.get(m.group(1), m.group(1))}")
            pending = False
    return out


def _thrift_files(idl: Path) -> list[Path]:
    return sorted(p for p in idl.rglob("*.thrift") if "thrift/annotation" not in p.relative_to(idl).as_posix())


def preprocessed_tree(idl: Path, out: Path) -> tuple[Changes, set[str]]:
    """Every IDL file under `idl` (fbthrift's annotation files aside) preprocessed into the same place under `out`;
    and the fields the IDL marks deprecated."""
    files = _thrift_files(idl)
    if len(files) > MAX_IDL_FILES:
        raise TetonError(f"FBOSS IDL {idl}: {len(files):,} .thrift files, more than {MAX_IDL_FILES:,}")
    texts = {p: read_text(p, MAX_IDL_FILE) for p in files}
    consts = {m.group(1) for t in texts.values() for line in t.splitlines() if (m := _CONST.match(line))}
    changes = Changes()
    deprecated: set[str] = set()
    for p, text in texts.items():
        target = out / p.relative_to(idl)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(preprocess(text, consts, changes), encoding="utf-8")
        deprecated |= deprecated_fields(text, p.stem)
    return changes, deprecated


# ---------------------------------------------------------------------------------------------------------- schema


@dataclass(frozen=True)
class Type:
    """A thrift type: kind is bool, byte, i16, i32, i64, double, string, binary, list, set, map, struct or enum."""

    kind: str
    name: str = ""                  # struct or enum: its qualified name (module.Name)
    elem: Type | None = None        # list/set element; map value
    key: Type | None = None         # map key

    def __str__(self) -> str:
        if self.kind in ("list", "set"):
            return f"{self.kind}<{self.elem}>"
        if self.kind == "map":
            return f"map<{self.key}, {self.elem}>"
        return self.name or self.kind


@dataclass(frozen=True)
class Field:
    id: int
    name: str                       # its JSON name
    type: Type
    required: bool                  # `required` in the IDL: must be present
    deprecated: bool = False        # the IDL marks it deprecated (or its name ends in _DEPRECATED)


@dataclass(frozen=True)
class Struct:
    name: str                       # qualified: module.Name
    fields: dict[str, Field]        # by JSON name
    union: bool


@dataclass(frozen=True)
class Schema:
    structs: dict[str, Struct]
    enums: dict[str, dict[int, str]]   # values -> names
    changes: Counter[str]              # what the preprocessing changed (`preprocess`)
    deprecated: frozenset[str] = frozenset()   # module.Struct.field the IDL marks deprecated

    def struct(self, name: str) -> Struct:
        return self.structs[name]


_BASE = {2: "bool", 3: "byte", 4: "double", 6: "i16", 8: "i32", 10: "i64", 11: "string", 18: "binary"}


class _Builder:
    def __init__(self, deprecated: set[str]) -> None:
        self.deprecated = deprecated
        self.structs: dict[str, Struct] = {}
        self.enums: dict[str, dict[int, str]] = {}
        self.pending: list[Any] = []

    @staticmethod
    def qualname(cls: Any) -> str:
        module = str(getattr(cls, "__module__", "")).rsplit(".", 1)[-1].removesuffix("_thrift")
        return f"{module}.{cls.__name__}"

    def type_of(self, ttype: int, info: Any) -> Type:
        from thriftpy2.thrift import TType

        if ttype in (TType.STRUCT,):
            self.pending.append(info)
            return Type("struct", self.qualname(info))
        if ttype == TType.I32 and info is not None and hasattr(info, "_VALUES_TO_NAMES"):
            name = self.qualname(info)
            self.enums.setdefault(name, {int(k): str(v) for k, v in info._VALUES_TO_NAMES.items()})
            return Type("enum", name)
        if ttype in (TType.LIST, TType.SET):
            return Type("list" if ttype == TType.LIST else "set", elem=self.spec_type(info))
        if ttype == TType.MAP:
            k, v = info
            return Type("map", key=self.spec_type(k), elem=self.spec_type(v))
        return Type(_BASE[ttype])

    def spec_type(self, spec: Any) -> Type:
        """A container's element spec: a bare TType, or (TType, info)."""
        if isinstance(spec, int):
            return self.type_of(spec, None)
        return self.type_of(spec[0], spec[1])

    def add_struct(self, cls: Any, unions: set[Any]) -> None:
        name = self.qualname(cls)
        if name in self.structs:
            return
        fields: dict[str, Field] = {}
        self.structs[name] = Struct(name, fields, cls in unions)
        for fid, spec in sorted(cls.thrift_spec.items()):
            if len(spec) == 3:
                ttype, fname, required = spec
                t = self.type_of(ttype, None)
            else:
                ttype, fname, info, required = spec
                t = self.type_of(ttype, info)
            json_name = RENAMED.get(fname, fname)
            fields[json_name] = Field(int(fid), json_name, t, bool(required), json_name.endswith("_DEPRECATED")
                                      or f"{name}.{json_name}" in self.deprecated)


def _modules(root: Any) -> list[Any]:
    seen: list[Any] = []
    stack = [root]
    while stack:
        m = stack.pop()
        if any(m is s for s in seen):
            continue
        seen.append(m)
        stack += list(getattr(m, "__thrift_meta__", {}).get("includes", []))
    return seen


def load_schema(idl: Path) -> Schema:
    """The agent config's and BGP++'s schema from the IDL folder `idl` (`teton.targets.fboss.data`); TetonError naming
    the file and line thriftpy2 rejects."""
    try:
        from thriftpy2.parser.exc import ThriftGrammarError, ThriftLexerError, ThriftParserError
        from thriftpy2.parser.parser import parse
    except ImportError as exc:   # pragma: no cover - the venv pins it
        raise TetonError("FBOSS's strict check needs thriftpy2 (pinned in pyproject.toml; scripts/setup installs it)"
                         ) from exc
    with tempfile.TemporaryDirectory(prefix="teton-fboss-idl-") as tmp:
        out = Path(tmp)
        changes, deprecated = preprocessed_tree(idl, out)
        b = _Builder(deprecated)
        for root in (AGENT_ROOT, BGP_ROOT):
            try:
                module = parse(str(out / root), include_dirs=[str(out)], enable_cache=False)  # type: ignore[no-untyped-call]
            except (ThriftGrammarError, ThriftLexerError, ThriftParserError) as exc:
                raise TetonError(f"FBOSS IDL {idl}: thriftpy2 cannot load {root}: "
                                 f"{str(exc).replace(tmp, str(idl))}") from None
            modules = _modules(module)
            unions = {u for m in modules for u in getattr(m, "__thrift_meta__", {}).get("unions", [])}
            for m in modules:
                for cls in getattr(m, "__thrift_meta__", {}).get("structs", []) + list(
                        getattr(m, "__thrift_meta__", {}).get("unions", [])):
                    b.add_struct(cls, unions)
            while b.pending:
                b.add_struct(b.pending.pop(), unions)
    return Schema(b.structs, b.enums, changes.counts, frozenset(deprecated))


@cache
def cached_schema(idl: str) -> Schema:
    return load_schema(Path(idl))
