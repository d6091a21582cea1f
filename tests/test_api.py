"""The library API (`import teton`, infra/teton/api.py, docs/api.md): the verbs in a fresh interpreter, a light import,
no import order, one error root."""

from __future__ import annotations

import ast
import builtins
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import teton
from tests.helpers import LAB, ROOT, write_spec
from teton.findings import SpecError, TetonError

HEAVY = ("pyavd", "libyang", "jsonschema_rs", "teton.targets")


def _python(code: str, timeout: float = 300) -> str:
    """Run `code` in a fresh interpreter from the repository's root, importing this worktree's teton; its stdout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "infra"), str(ROOT)])}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_import_teton_imports_nothing_heavy() -> None:
    out = _python(f"""
        import sys
        import teton
        assert teton.Error.__name__ == "TetonError"   # the root is light too
        print([m for m in {HEAVY!r} + ("teton.api",) if m in sys.modules])
        """)
    assert out.strip() == "['teton.api']"   # teton.Error loaded the API module, and nothing heavy came with it
    out = _python(f"import sys, teton; print([m for m in {HEAVY!r} + ('teton.api',) if m in sys.modules])")
    assert out.strip() == "[]"


def test_the_example_runs_in_a_fresh_interpreter(tmp_path: Path) -> None:
    out = _python(f"""
        import json, sys
        from pathlib import Path
        import teton
        from teton.buildfolder import BuildFolder
        from teton.fabric.model import Fabric
        from teton.spec.model import Cluster

        spec = teton.load({str(LAB)!r})
        assert isinstance(spec, Cluster)
        fabric = teton.design(spec)
        assert isinstance(fabric, Fabric) and fabric.devices == teton.design({str(LAB)!r}).devices
        figures = teton.plan(fabric)
        assert "bom" in figures and "room" not in figures          # a Fabric: no room (it needs the spec)
        build = teton.render(spec, {str(tmp_path / "lab")!r})
        assert isinstance(build, BuildFolder) and (build.root / "manifest.json").is_file()
        assert build.fabric().devices == fabric.devices
        findings = teton.validate(spec)
        assert not [f for f in findings if f.severity == "error"]
        assert teton.validate_build(build) == []
        report = teton.verify(build)
        assert report.ok and report.findings == [], report.findings
        changes = teton.diff({str(LAB)!r}, {str(LAB)!r})
        assert changes.level == "none" and not changes.changed and changes.exit_code() == 0
        index = teton.report(build, {str(tmp_path / "report")!r}, verify=False)
        assert index == Path({str(tmp_path / "report" / "index.html")!r}) and index.stat().st_size > 0
        print(json.dumps(teton.plan(spec), sort_keys=True))
        print(sorted(m for m in ("teton.targets",) if m in sys.modules))
        """)
    plan_line, targets_line = out.splitlines()[-2:]
    assert targets_line == "['teton.targets']"
    from click.testing import CliRunner

    from teton.cli import main

    cli = CliRunner().invoke(main, ["plan", str(LAB), "--json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(plan_line) == json.loads(cli.stdout)    # plan(spec) is what `teton plan --json` prints


def test_a_design_needs_no_import_order() -> None:
    out = _python(f"""
        import sys
        import teton.design
        import teton.spec.load
        assert "teton.targets" not in sys.modules
        fabric = teton.design.design(teton.spec.load.load_spec({str(LAB)!r}))    # the subpackage's design
        again = teton.design(teton.spec.load.load_spec({str(LAB)!r}))           # the verb, after the import
        assert fabric.devices == again.devices
        print(len(fabric.devices))
        """)
    assert int(out) > 10


def test_a_bad_spec_raises_teton_error_naming_file_and_path(tmp_path: Path) -> None:
    bad = write_spec(tmp_path, LAB.read_text().replace("hosts_per_rack: 2", "hosts_per_rack: many", 1))
    with pytest.raises(teton.Error) as caught:
        teton.load(bad)
    assert isinstance(caught.value, SpecError)
    assert [(f.file, f.path) for f in caught.value.findings] == [(str(bad), "hosts_per_rack")]
    assert caught.value.findings[0].line is not None
    findings = teton.validate(bad)                # validate returns what load raises
    assert [(f.file, f.path) for f in findings] == [(str(bad), "hosts_per_rack")]


def test_a_rule_broken_in_a_loaded_spec_names_its_file(tmp_path: Path) -> None:
    text = LAB.read_text()
    assert "ctsw: {model: arista-7804r3" in text
    path = write_spec(tmp_path, text.replace("ctsw: {model: arista-7804r3", "ctsw: {model: arista-7899r9", 1))
    spec = teton.load(path)                       # the schema holds: the rule about models is the design's
    errors = [(f.file, f.path, f.rule) for f in teton.validate(spec) if f.severity == "error"]
    assert ((str(path), "backend.ctsw.model", "unknown-model")) in errors
    with pytest.raises(SpecError) as caught:
        teton.design(spec)
    assert [(f.file, f.path, f.rule) for f in caught.value.findings if f.severity == "error"] == errors
    assert all(f.line for f in caught.value.findings)          # the file `load` read gives the lines


def test_the_verbs_named_like_subpackages_stay_verbs() -> None:
    import teton.design.capacity
    import teton.diff
    import teton.report
    import teton.validate.rendered
    import teton.verify.run

    for name in ("design", "diff", "report", "validate", "verify"):
        verb = getattr(teton, name)
        assert callable(verb) and not isinstance(verb, type(sys)), name
    assert teton.design.capacity.room_report is sys.modules["teton.design.capacity"].room_report
    assert teton.verify.run.verify is sys.modules["teton.verify.run"].verify
    from teton.design import design

    assert design is sys.modules["teton.design"].design


def test_every_exception_class_derives_from_teton_error() -> None:
    """One root: a class that derives from a builtin exception also derives from TetonError (AST, so every module
    counts, imported or not)."""
    exceptions = {n for n, v in vars(builtins).items() if isinstance(v, type) and issubclass(v, BaseException)}
    outside = []
    for path in sorted((ROOT / "infra" / "teton").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            bases = {b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in
                     node.bases}
            if bases & exceptions and "TetonError" not in bases and node.name != "TetonError":
                outside.append(f"{path.relative_to(ROOT)}: {node.name}")
    assert outside == []
    assert teton.Error is TetonError and issubclass(SpecError, teton.Error)


def test_the_docs_examples_run() -> None:
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.M | re.S)
    assert len(blocks) == 2
    out = _python(blocks[0])
    assert "verify: ok" in out and "diff: none []" in out
    out = _python(blocks[1])
    assert re.fullmatch(r"\S+bad\.yaml \d+ hosts_per_rack .*\n", out), out
