"""Attack: a crafted build whose host variables hold a template.  `"teton_rack": "{{ lookup('pipe','touch FILE') }}"`
in a host_vars file (manifest hash updated) passed `validate --rendered`, and the first ansible command that read
the variable ran the pipe (ansible-core trusts a vars file's strings as templates).  `validate --rendered` refuses a
template mark in any variable, key or value, of every host and group vars file."""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from click.testing import CliRunner

from tests.helpers import LAB
from teton.build import build
from teton.cli import main


@pytest.fixture(scope="module")
def lab_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("ansible-attack") / "build"
    build(LAB, out, force=True)
    return out


def _poison(folder, rel, edit):
    path = folder / rel
    text = path.read_text()
    new = edit(text)
    assert new != text
    path.write_text(new)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest["files"][rel].update(sha256=hashlib.sha256(new.encode()).hexdigest(), bytes=len(new.encode()))
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


@pytest.mark.parametrize(("rel", "edit"), [
    ("ansible/host_vars/s1-r01-sp01.json",
     lambda t: t.replace('"teton_rack": "s1-r01"', '"teton_rack": "{{ lookup(\'pipe\',\'touch /tmp/pwned\') }}"')),
    ("ansible/group_vars/all.yml", lambda t: t + "teton_extra: '{% for x in [1] %}x{% endfor %}'\n"),
])
def test_validate_rendered_refuses_a_template_in_a_variable(lab_build, tmp_path, rel, edit):
    folder = tmp_path / "b"
    shutil.copytree(lab_build, folder)
    clean = CliRunner().invoke(main, ["validate", "--rendered", str(folder)])
    assert clean.exit_code == 0, clean.output
    _poison(folder, rel, edit)
    result = CliRunner().invoke(main, ["validate", "--rendered", str(folder)])
    assert result.exit_code == 2, result.output
    assert rel in result.output and "template" in result.output
