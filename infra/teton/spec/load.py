"""Load a spec from YAML or Python into `Cluster`, reporting every problem at once with file, line and path.

Input may be careless or hostile, so loading is bounded (see `teton.limits`): the file's size (MAX_SPEC_BYTES), its
encoding (UTF-8 only), the nesting (MAX_YAML_DEPTH) and number (MAX_YAML_NODES, aliases expanded) of its YAML nodes,
and a Python spec's time and memory (it runs in a child process, `teton.spec.pyspec`).  Every problem is a Finding;
no other exception leaves `load_spec`.
"""

from __future__ import annotations

import codecs
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from teton import limits
from teton.findings import Finding, SpecError, join_path
from teton.spec.messages import schema_message
from teton.spec.model import Cluster

Lines = dict[tuple[str | int, ...], int]
_M = TypeVar("_M", bound=BaseModel)

YAML_SUFFIXES = (".yaml", ".yml", ".json")
_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: about ten times faster


def load_spec(path: str | Path, timeout: float | None = None) -> Cluster:
    """The spec at `path` (`.yaml`/`.yml`/`.json` or `.py`); raises SpecError with all findings.

    `timeout` bounds a Python spec's run (default: $TETON_SPEC_TIMEOUT, else limits.PYTHON_SPEC_TIMEOUT_S).
    """
    path = Path(path)
    filename = str(path)
    try:
        return _load(path, timeout)
    except SpecError:
        raise
    except RecursionError:
        raise SpecError([Finding(filename, "", "the spec is nested too deeply to load (limit MAX_YAML_DEPTH = "
                                               f"{limits.MAX_YAML_DEPTH})", rule="limit")]) from None
    except MemoryError:
        raise SpecError([Finding(filename, "", "loading the spec ran out of memory", rule="io")]) from None
    except Exception as exc:  # whatever the input, the caller gets findings, never a traceback
        raise SpecError([Finding(filename, "", f"the spec cannot be loaded: {type(exc).__name__}: "
                                               f"{str(exc)[:500]}", rule="io")]) from None


def _load(path: Path, timeout: float | None) -> Cluster:
    data, lines = load_data(path, timeout)
    return validate_data(data, str(path), lines)


def _check_size(path: Path) -> None:
    size = path.stat().st_size
    if size > limits.MAX_SPEC_BYTES:
        raise SpecError([_too_big(str(path), size)])


def _too_big(filename: str, size: int | None) -> Finding:
    what = f"{size:,} bytes" if size is not None else "larger"
    return Finding(filename, "", f"the spec file is {what}, more than MAX_SPEC_BYTES = {limits.MAX_SPEC_BYTES:,}",
                   rule="limit")


def read_spec_text(path: Path) -> str:
    """The text of a YAML/JSON spec: at most MAX_SPEC_BYTES of UTF-8 (a byte-order mark is dropped)."""
    filename = str(path)
    try:
        _check_size(path)
        with path.open("rb") as fh:
            raw = fh.read(limits.MAX_SPEC_BYTES + 1)
    except OSError as exc:
        raise SpecError([Finding(filename, "", f"cannot read the spec: {exc.strerror or exc}", rule="io")]) from None
    if len(raw) > limits.MAX_SPEC_BYTES:  # it grew since stat(), or stat() does not know (a special file)
        raise SpecError([_too_big(filename, None)])
    return decode_spec(raw, filename)


def decode_spec(raw: bytes, filename: str) -> str:
    """UTF-8 bytes -> text; anything else (UTF-16/32, Latin-1, binary) is a finding with its offset and line."""

    def bad(why: str, offset: int | None = None) -> SpecError:
        line = raw.count(b"\n", 0, offset) + 1 if offset is not None else None
        where = f" at byte offset {offset:,} (line {line})" if offset is not None else ""
        return SpecError([Finding(filename, "", f"the spec is not UTF-8 text: {why}{where}; save it as UTF-8",
                                  rule="io", line=line)])

    for bom, name in ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                      (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")):
        if raw.startswith(bom):
            raise bad(f"it starts with a {name} byte-order mark")
    nul = raw.find(b"\0")
    if nul >= 0:
        head = raw[:512]
        even, odd = head[0::2].count(0), head[1::2].count(0)
        if max(even, odd) > len(head) // 4 and min(even, odd) < max(even, odd) // 4:
            raise bad("it looks like UTF-16 without a byte-order mark (a NUL byte between characters)", nul)
        raise bad("it contains a NUL byte (a binary file?)", nul)
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise bad(f"byte 0x{raw[exc.start]:02X} is not valid UTF-8 ({exc.reason}; Latin-1 or another 8-bit "
                  "encoding?)", exc.start) from None


def load_yaml_text(text: str, filename: str = "<spec>") -> Cluster:
    data, lines = parse_yaml(text, filename)
    return validate_data(data, filename, lines)


def _limit(filename: str, message: str, line: int | None = None, path: str = "") -> SpecError:
    return SpecError([Finding(filename, path, message, rule="limit", line=line)])


def _too_deep(filename: str, line: int | None, path: str = "") -> SpecError:
    return _limit(filename, f"the spec nests mappings and sequences more than MAX_YAML_DEPTH = "
                            f"{limits.MAX_YAML_DEPTH} deep", line, path)


def _too_many(filename: str, line: int | None, path: str = "") -> SpecError:
    return _limit(filename, f"the spec has more than MAX_YAML_NODES = {limits.MAX_YAML_NODES:,} YAML nodes "
                            "(aliases expanded)", line, path)


def _event_line(event: yaml.Event) -> int | None:
    """The 1-based line an event starts on (the parser always marks one; the stubs allow none)."""
    return None if event.start_mark is None else event.start_mark.line + 1


def _check_events(text: str, filename: str) -> None:
    """Depth and node count from the event stream, before the (recursive) composer sees the text."""
    loader = _Loader(text)
    try:
        depth = nodes = 0
        while (event := loader.get_event()) is not None:
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > limits.MAX_YAML_DEPTH:
                    raise _too_deep(filename, _event_line(event))
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            if isinstance(event, yaml.NodeEvent):
                nodes += 1
                if nodes > limits.MAX_YAML_NODES:
                    raise _too_many(filename, _event_line(event))
            if isinstance(event, yaml.StreamEndEvent):
                break
    finally:
        loader.dispose()


def _yaml_error(exc: yaml.YAMLError, text: str, filename: str) -> SpecError:
    if isinstance(exc, yaml.reader.ReaderError):
        text_or_bytes: Any = text if _Loader is yaml.SafeLoader else text.encode("utf-8")
        line = text_or_bytes[:exc.position].count("\n" if isinstance(text_or_bytes, str) else b"\n") + 1
        return SpecError([Finding(filename, "", f"the spec holds a character YAML does not allow: "
                                                f"#x{exc.character:04x} ({exc.reason})", rule="yaml", line=line)])
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    line = mark.line + 1 if mark is not None else None
    return SpecError([Finding(filename, "", f"YAML does not parse: {problem}", rule="yaml", line=line)])


def parse_yaml(text: str, filename: str) -> tuple[Any, Lines]:
    """YAML text -> (plain data, {path: line}).  Syntax errors, duplicate and non-string keys are findings; so are
    more than MAX_YAML_DEPTH levels and more than MAX_YAML_NODES nodes (aliases expanded)."""
    try:
        _check_events(text, filename)
        loader = _Loader(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, text, filename) from None
    if node is None:
        raise SpecError([Finding(filename, "", "the spec is empty", rule="yaml")])
    lines: Lines = {}
    bad: list[Finding] = []
    constructor = yaml.SafeLoader("")
    count = 0

    def scalar(n: yaml.Node, path: tuple[str | int, ...]) -> Any:
        try:
            return constructor.construct_object(n, deep=True)
        except (ValueError, OverflowError, TypeError) as exc:  # e.g. a date 2024-13-45, a 5,000-digit integer
            bad.append(Finding(filename, join_path(path), f"the value {n.value[:40]!r} cannot be read: {exc}",
                               rule="yaml", line=n.start_mark.line + 1))
            return None

    def walk(n: yaml.Node, path: tuple[str | int, ...], depth: int) -> Any:
        nonlocal count
        count += 1  # an alias is walked again each time: this counts nodes with aliases expanded
        if count > limits.MAX_YAML_NODES:
            raise _too_many(filename, n.start_mark.line + 1, join_path(path))
        lines[path] = n.start_mark.line + 1
        if isinstance(n, yaml.CollectionNode) and depth >= limits.MAX_YAML_DEPTH:
            raise _too_deep(filename, n.start_mark.line + 1, join_path(path))  # deep through aliases
        if isinstance(n, yaml.MappingNode):
            out: dict[str, Any] = {}
            for k, v in n.value:
                line = k.start_mark.line + 1
                if not isinstance(k, yaml.ScalarNode):
                    kind = "mapping" if isinstance(k, yaml.MappingNode) else "sequence"
                    bad.append(Finding(filename, join_path(path), f"keys must be strings: this key is a {kind}",
                                       rule="yaml", line=line))
                    continue
                key = scalar(k, path)
                if not isinstance(key, str):
                    bad.append(Finding(filename, join_path(path + (k.value,)),
                                       f"keys must be strings: {k.value!r} is read as {type(key).__name__} "
                                       f"{key!r} (quote it)", rule="yaml", line=line))
                    continue
                if key in out:
                    bad.append(Finding(filename, join_path(path + (key,)), "key given twice", rule="yaml",
                                       line=line))
                out[key] = walk(v, path + (key,), depth + 1)
            return out
        if isinstance(n, yaml.SequenceNode):
            return [walk(v, path + (i,), depth + 1) for i, v in enumerate(n.value)]
        return scalar(n, path)

    try:
        data = walk(node, (), 0)
    except yaml.YAMLError as exc:
        raise SpecError([Finding(filename, "", f"YAML does not parse: {exc}", rule="yaml")]) from None
    if bad:
        raise SpecError(bad)
    return data, lines


def check_shape(data: Any, filename: str) -> None:
    """Plain data (a Python spec's cluster) within MAX_YAML_DEPTH and MAX_YAML_NODES, like a YAML spec."""
    stack: list[tuple[Any, int]] = [(data, 1)]
    count = 0
    while stack:
        node, depth = stack.pop()
        count += 1
        if count > limits.MAX_YAML_NODES:
            raise _too_many(filename, None)
        if isinstance(node, dict | list):
            if depth > limits.MAX_YAML_DEPTH:
                raise _too_deep(filename, None)
            stack.extend((v, depth + 1) for v in (node.values() if isinstance(node, dict) else node))


def spec_lines(path: str | Path) -> dict[str, int]:
    """{'backend.asn.rtsw': line} for a YAML spec (empty for Python specs or unreadable files)."""
    path = Path(path)
    if path.suffix not in YAML_SUFFIXES:
        return {}
    try:
        _, lines = parse_yaml(read_spec_text(path), str(path))
    except (SpecError, OSError, RecursionError, MemoryError):
        return {}
    return {join_path(k): v for k, v in lines.items()}


def with_lines(findings: list[Finding], lines: dict[str, int]) -> list[Finding]:
    """Findings of rules (which know a spec path, not a line) with the line of that path, or of its nearest parent."""
    out = []
    for f in findings:
        line = f.line
        path = f.path
        while line is None and path:
            line = lines.get(path)
            path = path.rpartition(".")[0] if "[" not in path.rpartition(".")[2] else path.rpartition("[")[0]
        out.append(f if line is None else replace(f, line=line))
    return out


def validate_data(data: Any, filename: str, lines: Lines | None = None) -> Cluster:
    """Plain data -> Cluster, or SpecError listing every schema violation."""
    return validate_as(Cluster, data, filename, lines)


def validate_as(model: type[_M], data: Any, filename: str, lines: Lines | None = None) -> _M:
    """Plain data -> `model` (a cluster or a site), or SpecError listing every schema violation."""
    lines = lines or {}
    if not isinstance(data, dict):
        raise SpecError([Finding(filename, "", "the spec must be a mapping of keys to values", line=lines.get(()))])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_findings(exc, data, filename, lines)) from None


def load_data(path: Path, timeout: float | None = None, binding: str = "cluster") -> tuple[Any, Lines]:
    """A spec file's plain data and the line of each path (YAML), before its schema is checked: the YAML bounded, a
    Python spec run in its child process (it binds `binding`: `cluster`, or `site` for a site spec); SpecError naming
    the file."""
    filename = str(path)
    if not path.is_file():
        what = "not a regular file" if path.exists() else "no such file"
        raise SpecError([Finding(filename, "", what, rule="io")])
    if path.suffix not in (".py", *YAML_SUFFIXES):
        raise SpecError([Finding(filename, "", "a spec is a .yaml, .yml, .json or .py file", rule="io")])
    if path.suffix == ".py":
        from teton.spec.pyspec import run_python_spec

        _check_size(path)
        data, line = run_python_spec(path, timeout, binding)
        check_shape(data, filename)
        return data, {(): line} if line else {}
    return parse_yaml(read_spec_text(path), filename)


def _findings(exc: ValidationError, data: Any, filename: str, lines: Lines) -> list[Finding]:
    out: dict[tuple[str, str], Finding] = {}
    for err in exc.errors(include_url=False):
        path = _data_path(err["loc"], data)
        line = None
        for cut in range(len(path), -1, -1):
            if path[:cut] in lines:
                line = lines[path[:cut]]
                break
        f = Finding(filename, join_path(path), schema_message(err), line=line)
        out.setdefault((f.path, f.message), f)
    found = sorted(out.values(), key=lambda f: (f.line or 0, f.path))
    if len(found) > limits.MAX_SCHEMA_FINDINGS:
        more = len(found) - limits.MAX_SCHEMA_FINDINGS
        found = found[:limits.MAX_SCHEMA_FINDINGS] + [Finding(
            filename, "", f"and {more:,} more schema errors (only MAX_SCHEMA_FINDINGS = "
                          f"{limits.MAX_SCHEMA_FINDINGS} are listed)", rule="limit")]
    return found


def _data_path(loc: tuple[Any, ...], data: Any) -> tuple[str | int, ...]:
    """Drop pydantic's union/discriminator tags from a loc, keeping only steps that exist in the data."""
    path: list[str | int] = []
    node = data
    for step in loc:
        if isinstance(node, dict) and step in node:
            path.append(step)
            node = node[step]
        elif isinstance(node, list) and isinstance(step, int) and step < len(node):
            path.append(step)
            node = node[step]
        elif isinstance(node, dict) and step in [v for v in node.values() if isinstance(v, str)]:
            continue  # a discriminated union's tag, e.g. backend.kind == 'roce'
        elif isinstance(node, dict) and isinstance(step, str) and _is_field(step):
            path.append(step)  # a missing or extra key: name it
            node = None
        # else: a union tag such as 'roce' or 'function-after[...]': skip it
    return tuple(path)


def _is_field(step: str) -> bool:
    """A spec key (snake_case) rather than a pydantic validator tag such as 'function-after[...]'."""
    return step.isidentifier()
