"""Attack: a crafted build whose host variables hold a template.  `"teton_rack": "{{ lookup('pipe','touch FILE') }}"`
in a host_vars file (manifest hash updated) passed `validate --rendered`, and the first ansible command that read
the variable ran the pipe (ansible-core trusts a vars file's strings as templates).  `validate --rendered` refuses a
template mark in any variable, key or value, of every host and group vars file."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import LAB
from tests.hosts.harness import VENV_BIN, env
from teton.buildfolder import host_vars_path
from teton.cli import main
from teton.pipeline import build
from teton.targets.ansible.unsafe import UNSAFE_KEY, Dumper, mark_yaml, unwrap, wrap_json

PIPE = "{{ lookup('pipe','touch %s') }}"


@pytest.fixture(scope="module")
def lab_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("ansible-attack") / "build"
    build(LAB, out, force=True)
    return out


def _set_json(text, name, value):
    data = json.loads(text)
    data[name] = value
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


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
    ("ansible/host_vars/s1-r01-sp01.json", lambda t: _set_json(t, "teton_rack", PIPE % "/tmp/pwned")),
    # a template under teton's own unsafe mark is refused as well: validate reads the data, whatever its marks
    ("ansible/host_vars/s1-r01-sp01.json", lambda t: _set_json(t, "teton_rack", wrap_json(PIPE % "/tmp/pwned"))),
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


HOST = "z01-r001-h1"


def _ansible_reads_teton_rack(build, where):
    """The first ansible command that reads the host's teton_rack (a play printing it, on the controller)."""
    play = where / "play.yml"
    tasks = [{"ansible.builtin.debug": {"msg": "rack {{ teton_rack }}"}},
             {"ansible.builtin.debug": {"msg": "{{ teton_extra | default('') }}"}}]
    play.write_text(yaml.safe_dump([{"hosts": HOST, "gather_facts": False, "connection": "local", "tasks": tasks}]))
    return subprocess.run([str(VENV_BIN / "ansible-playbook"), "-i", str(build / "ansible/inventory.yml"), str(play)],
                          capture_output=True, text=True, env={**env(), "HOME": str(where)}, check=False, timeout=300)


@pytest.mark.parametrize("marked", [True, False], ids=["as-teton-writes-it", "unmarked-control"])
def test_real_ansible_does_not_run_a_template_in_host_vars(lab_build, tmp_path, marked):
    """Even when validate is bypassed: a host_vars file written the way teton writes it (every string marked
    `__ansible_unsafe`) holding `{{ lookup('pipe','touch ...') }}` in teton_rack runs nothing under real
    ansible-playbook, which prints the text as it is.  The control (the same value unmarked, as teton wrote it before)
    shows the pipe does run, so the marking is what stops it."""
    folder = tmp_path / "b"
    shutil.copytree(lab_build, folder)
    pwned = tmp_path / "pwned"
    rel = folder / host_vars_path(HOST)
    data = unwrap(json.loads(rel.read_text()))
    data["teton_rack"] = PIPE % pwned
    rel.write_text(json.dumps(wrap_json(data) if marked else data))
    res = _ansible_reads_teton_rack(folder, tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    if marked:
        assert not pwned.exists(), "ansible ran the template in a host variable"
        assert f"rack {PIPE % pwned}" in res.stdout
    else:
        assert pwned.exists(), "the control did not run the pipe: this test would not see the attack"


def test_real_ansible_does_not_run_a_template_in_group_vars(lab_build, tmp_path):
    """The same through a group_vars YAML file: a variable tagged `!unsafe` as teton tags them is printed, not run."""
    folder = tmp_path / "b"
    shutil.copytree(lab_build, folder)
    pwned = tmp_path / "pwned"
    gv = folder / "ansible/group_vars/gpu.yml"
    gv.write_text(gv.read_text() + yaml.dump(mark_yaml({"teton_extra": PIPE % pwned}, {}), Dumper=Dumper))
    assert "teton_extra: !unsafe" in gv.read_text()
    res = _ansible_reads_teton_rack(folder, tmp_path)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert not pwned.exists() and PIPE % pwned in res.stdout


def test_rendered_vars_files_mark_every_string_unsafe(lab_build):
    """Every string of every host_vars file is marked, every group_vars variable tagged, but teton's own template."""
    def bare(value):
        if isinstance(value, str):
            return [value]
        if isinstance(value, dict):
            if set(value) == {UNSAFE_KEY}:
                return []
            return [s for x in value.values() for s in bare(x)]
        return [s for x in value for s in bare(x)] if isinstance(value, list) else []

    files = sorted((lab_build / "ansible/host_vars").glob("*.json"))
    assert files and all(bare(json.loads(f.read_text())) == [] for f in files)
    for f in sorted((lab_build / "ansible/group_vars").glob("*.yml")):
        for line in f.read_text().splitlines():
            if line and not line.startswith(("#", " ", "- ")):    # "- ": an item of the variable above
                name, _, value = line.partition(":")
                assert value.startswith(" !unsafe") or name == "teton_slurm_files" or \
                    isinstance(yaml.safe_load(value), (int, float, bool)), f"{f.name}: {line}"
