"""The rule list (`teton.rules`) is the code's: every rule id the source of infra/teton can put on a finding is listed,
with the severity the code gives it, and nothing else is; docs/rules.md is what `markdown()` renders.

The source is read, not run: every string given as a `rule=` keyword, as the `rule` argument of `Finding` (fourth) or
of a helper with a `rule` parameter, or as the `"rule"` key of a finding written as a dict (a Python spec's child);
module-level string constants are resolved, and a `Finding` without a rule has the dataclass's default."""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from collections import defaultdict
from pathlib import Path

from teton.findings import Finding
from teton.rules import AREAS, BY_ID, RULES, SEVERITIES, as_json, markdown

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "infra" / "teton"
DOC = ROOT / "docs" / "rules.md"
DEFAULT_RULE = next(f.default for f in dataclasses.fields(Finding) if f.name == "rule")
DEFAULT_SEVERITY = next(f.default for f in dataclasses.fields(Finding) if f.name == "severity")

# Rule expressions that pass on an id given elsewhere (file, expression): the scan finds that id where it is given.
PASS_THROUGH = {
    ("findings.py", "self.rule"),                           # Finding.as_dict
    ("pipeline/record.py", "rule"),                         # a warning recorded in a build, read back
    ("spec/pyspec.py", "str(f.get('rule', 'python'))"),     # the Python spec child's findings (dicts, scanned)
}


@dataclasses.dataclass
class Emitted:
    """What the source says: rule id -> {severity}, -> {file}; rule expressions the scan could not resolve."""

    severities: dict[str, set[str]] = dataclasses.field(default_factory=lambda: defaultdict(set))
    files: dict[str, set[str]] = dataclasses.field(default_factory=lambda: defaultdict(set))
    unresolved: set[tuple[str, str]] = dataclasses.field(default_factory=set)


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


class _Scan(ast.NodeVisitor):
    def __init__(self, rel: str, tree: ast.Module, out: Emitted):
        self.rel, self.out = rel, out
        self.consts = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
                       and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
                       for t in n.targets if isinstance(t, ast.Name)}
        # helpers of this module that pass their `rule` parameter on as `rule=rule`: name -> its position
        self.helpers = {}
        for f in ast.walk(tree):
            if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef):
                names = [a.arg for a in f.args.posonlyargs + f.args.args if a.arg not in ("self", "cls")]
                passes = any(isinstance(k, ast.keyword) and k.arg == "rule" and isinstance(k.value, ast.Name)
                             and k.value.id == "rule" for k in ast.walk(f))
                if "rule" in names and passes:
                    self.helpers[f.name] = names.index("rule")
        self.params: list[set[str]] = []

    def _ids(self, e: ast.expr) -> list[str] | None:
        if isinstance(e, ast.Constant) and isinstance(e.value, str):
            return [e.value]
        if isinstance(e, ast.Name) and e.id in self.consts:
            return [self.consts[e.id]]
        if isinstance(e, ast.IfExp):
            a, b = self._ids(e.body), self._ids(e.orelse)
            return None if a is None or b is None else a + b
        return None

    def _emit(self, e: ast.expr, severity: ast.expr | None) -> None:
        ids = self._ids(e)
        if ids is None:
            if not (isinstance(e, ast.Name) and self.params and e.id in self.params[-1]):  # a helper's parameter
                self.out.unresolved.add((self.rel, ast.unparse(e)))
            return
        sev = self._ids(severity) if severity is not None else [DEFAULT_SEVERITY]
        for rule in ids:
            self.out.files[rule].add(self.rel)
            self.out.severities[rule].update(sev or ())

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.params.append({a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs})
        self.generic_visit(node)
        self.params.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        name = _name(node.func)
        kw = {k.arg: k.value for k in node.keywords}
        severity = kw.get("severity")
        if "rule" in kw:
            self._emit(kw["rule"], severity)
        elif name == "Finding" and len(node.args) >= 4:
            self._emit(node.args[3], severity)
        elif name == "Finding" and None not in kw:
            self._emit(ast.Constant(DEFAULT_RULE), severity)
        elif name in self.helpers and len(node.args) > self.helpers[name]:
            self._emit(node.args[self.helpers[name]], None)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        keys = {k.value: v for k, v in zip(node.keys, node.values, strict=True)
                if isinstance(k, ast.Constant) and isinstance(k.value, str)}
        if "rule" in keys:
            self._emit(keys["rule"], keys.get("severity"))
        self.generic_visit(node)


def _emitted() -> Emitted:
    out = Emitted()
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "rules.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), rel)
        _Scan(rel, tree, out).visit(tree)
    return out


EMITTED = _emitted()


def test_the_scan_sees_every_way_the_code_gives_a_rule() -> None:
    files = EMITTED.files
    assert "validate/plaintext.py" in files["plaintext-secret"]      # a module constant
    assert "validate/rules.py" in files["qos-control"]               # a helper's positional `rule`
    assert "spec/pyspec.py" in files["python"]                       # a finding as a dict
    assert "spec/load.py" in files[DEFAULT_RULE]                     # Finding's default
    assert "verify/rules.py" in files["rack-reach"] and "checks/physical_rules.py" in files["physical"]


def test_every_rule_expression_is_resolved_or_a_known_pass_through() -> None:
    assert EMITTED.unresolved <= PASS_THROUGH, (
        f"rule expressions the scan cannot resolve: {sorted(EMITTED.unresolved - PASS_THROUGH)}; give the rule as a "
        "string literal or a module-level constant, or add a pass-through here")


def test_every_rule_the_code_emits_is_listed_and_every_listed_rule_is_emitted() -> None:
    emitted = set(EMITTED.files)
    missing = {r: sorted(EMITTED.files[r]) for r in sorted(emitted - set(BY_ID))}
    assert not missing, f"rule ids the code emits that teton.rules.RULES lacks: {missing}"
    stale = sorted(set(BY_ID) - emitted)
    assert not stale, f"rule ids in teton.rules.RULES that no code emits: {stale}"


def test_each_rule_has_the_severity_the_code_gives_it() -> None:
    wrong = {}
    for rule, seen in EMITTED.severities.items():
        want = "both" if len(seen) > 1 else next(iter(seen))
        if rule in BY_ID and BY_ID[rule].severity != want:
            wrong[rule] = (BY_ID[rule].severity, want)
    assert not wrong, f"(listed, in the code): {wrong}"


def test_the_verify_rules_are_listed_as_verify_rules() -> None:
    doc = ast.get_docstring(ast.parse((PACKAGE / "verify" / "rules.py").read_text(encoding="utf-8"))) or ""
    named = set(re.findall(r"`([a-z][a-z-]+)`:", doc))
    assert len(named) >= 9
    assert all(n in BY_ID and "verify" in BY_ID[n].where for n in named), sorted(named - set(BY_ID))
    assert named <= {r for r, files in EMITTED.files.items() if "verify/rules.py" in files}


def _slug(heading: str) -> str:
    return re.sub(r"[^\w\- ]", "", heading.replace("`", "").lower()).replace(" ", "-")


def test_docs_rules_md_is_what_markdown_renders() -> None:
    assert DOC.read_text(encoding="utf-8") == markdown(), (
        "docs/rules.md is stale: regenerate it with `PYTHONPATH=infra python -m teton.rules > docs/rules.md`")


def test_docs_rules_md_has_a_heading_for_every_rule_and_unique_anchors() -> None:
    headings = re.findall(r"^#{1,6} (.+)$", DOC.read_text(encoding="utf-8"), re.M)
    slugs = [_slug(h) for h in headings]
    assert len(slugs) == len(set(slugs)), "two headings of docs/rules.md have one anchor"
    assert {f"### {r.id}" for r in RULES} <= {f"### {h}" for h in headings}
    assert {r.anchor for r in RULES} <= set(slugs)


def test_as_json_is_sorted_complete_and_well_formed() -> None:
    entries = as_json()
    ids = [e["id"] for e in entries]
    assert ids == sorted(ids) and len(ids) == len(set(ids)) == len(RULES)
    anchors = {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", DOC.read_text(encoding="utf-8"), re.M)}
    labels = {label for _, label, _ in AREAS.values()}
    for e in entries:
        assert isinstance(e["meaning"], str) and e["meaning"].strip() and "\n" not in e["meaning"], e
        assert e["severity"] in SEVERITIES, e
        assert e["anchor"] in anchors and e["docs"] == f"docs/rules.md#{e['anchor']}", e
        assert isinstance(e["where"], list) and e["where"] and set(e["where"]) <= labels, e


def test_teton_rules_json_lists_every_rule_id_with_its_docs_anchor():
    from click.testing import CliRunner

    from teton.cli import main

    result = CliRunner().invoke(main, ["rules", "--json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)
    docs = (ROOT / "docs" / "rules.md").read_text()
    assert [r["id"] for r in rows] == sorted(r.id for r in RULES)
    assert "physical" in {r["id"] for r in rows}
    assert all(f"### {r['id']}" in docs and r["docs"] == f"docs/rules.md#{r['anchor']}" for r in rows)
