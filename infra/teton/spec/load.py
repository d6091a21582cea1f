"""Load a spec from YAML or Python into `Cluster`, reporting every problem at once with file, line and path."""

from __future__ import annotations

import runpy
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from teton.findings import Finding, SpecError, join_path
from teton.spec.model import Cluster

Lines = dict[tuple[str | int, ...], int]


def load_spec(path: str | Path) -> Cluster:
    """The spec at `path` (`.yaml`/`.yml` or `.py`); raises SpecError with all findings."""
    path = Path(path)
    if not path.is_file():
        raise SpecError([Finding(str(path), "", "no such file", rule="io")])
    if path.suffix == ".py":
        return _load_python(path)
    if path.suffix in (".yaml", ".yml", ".json"):
        text = path.read_text(encoding="utf-8")
        return load_yaml_text(text, str(path))
    raise SpecError([Finding(str(path), "", "a spec is a .yaml, .yml, .json or .py file", rule="io")])


def load_yaml_text(text: str, filename: str = "<spec>") -> Cluster:
    data, lines = parse_yaml(text, filename)
    return validate_data(data, filename, lines)


def parse_yaml(text: str, filename: str) -> tuple[Any, Lines]:
    """YAML text -> (plain data, {path: line}).  Duplicate keys and syntax errors are findings."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark is not None else None
        raise SpecError([Finding(filename, "", f"YAML does not parse: {problem}", rule="yaml", line=line)]) from None
    if node is None:
        raise SpecError([Finding(filename, "", "the spec is empty", rule="yaml")])
    lines: Lines = {}
    dups: list[Finding] = []
    constructor = yaml.SafeLoader("")

    def walk(n: yaml.Node, path: tuple[str | int, ...]) -> Any:
        lines[path] = n.start_mark.line + 1
        if isinstance(n, yaml.MappingNode):
            out: dict[Any, Any] = {}
            for k, v in n.value:
                key = constructor.construct_object(k, deep=True)
                if key in out:
                    dups.append(Finding(filename, join_path(path + (key,)), "key given twice", rule="yaml",
                                        line=k.start_mark.line + 1))
                out[key] = walk(v, path + (key,))
            return out
        if isinstance(n, yaml.SequenceNode):
            return [walk(v, path + (i,)) for i, v in enumerate(n.value)]
        return constructor.construct_object(n, deep=True)

    try:
        data = walk(node, ())
    except yaml.YAMLError as exc:
        raise SpecError([Finding(filename, "", f"YAML does not parse: {exc}", rule="yaml")]) from None
    if dups:
        raise SpecError(dups)
    return data, lines


def spec_lines(path: str | Path) -> dict[str, int]:
    """{'backend.asn.rtsw': line} for a YAML spec (empty for Python specs or unreadable files)."""
    path = Path(path)
    if path.suffix not in (".yaml", ".yml", ".json"):
        return {}
    try:
        _, lines = parse_yaml(path.read_text(encoding="utf-8"), str(path))
    except (SpecError, OSError):
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
    lines = lines or {}
    if not isinstance(data, dict):
        raise SpecError([Finding(filename, "", "the spec must be a mapping of keys to values", line=lines.get(()))])
    try:
        return Cluster.model_validate(data)
    except ValidationError as exc:
        raise SpecError(_findings(exc, data, filename, lines)) from None


def _findings(exc: ValidationError, data: Any, filename: str, lines: Lines) -> list[Finding]:
    out: dict[tuple[str, str], Finding] = {}
    for err in exc.errors(include_url=False):
        path = _data_path(err["loc"], data)
        line = None
        for cut in range(len(path), -1, -1):
            if path[:cut] in lines:
                line = lines[path[:cut]]
                break
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key (misspelled?)"
        elif err["type"] == "missing":
            msg = "required key is missing"
        elif "input" in err and not isinstance(err["input"], (dict, list)):
            msg = f"{msg} (got {err['input']!r})"
        f = Finding(filename, join_path(path), msg, line=line)
        out.setdefault((f.path, f.message), f)
    return sorted(out.values(), key=lambda f: (f.line or 0, f.path))


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


def _load_python(path: Path) -> Cluster:
    """Run a Python spec; it must bind `cluster` to a `teton.spec.Cluster`."""
    try:
        namespace = runpy.run_path(str(path))
    except ValidationError as exc:
        raise SpecError([Finding(str(path), join_path(tuple(e["loc"])), e["msg"]) for e in exc.errors()]) from None
    except Exception as exc:  # a user's Python spec may raise anything: report it, no traceback
        raise SpecError([Finding(str(path), "", f"the Python spec failed: {type(exc).__name__}: {exc}",
                                 rule="python")]) from None
    cluster = namespace.get("cluster")
    if not isinstance(cluster, Cluster):
        raise SpecError([Finding(str(path), "cluster", "a Python spec must bind `cluster` to a teton.spec.Cluster",
                                 rule="python")])
    return cluster
