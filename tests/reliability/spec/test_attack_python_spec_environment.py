"""Attack: a Python spec is code, and it ran with the caller's whole environment: the secrets' values
(`TETON_SECRET_*`) and the render cache's key (`TETON_CACHE_KEY`) were there for it to copy into the cluster's data
or anywhere else, also when the spec came from a git ref (`teton diff HEAD~1:inventory/evil.py ...`).  The spec's
process is started without them (`teton.environment.for_untrusted_child`); docs/trust.md says a Python spec is
trusted code (it can still read what the user can read, the cache key file included)."""

from __future__ import annotations

import json
import subprocess

import pytest
from click.testing import CliRunner

from tests.helpers import INVENTORY
from teton import environment
from teton.cli import main
from teton.spec.load import load_spec

SECRET = "S3cret-bgp-password"
KEY = "k" * 40
EVIL = """import os, json
open({seen!r}, "w").write(json.dumps(dict(os.environ)))
"""


def _evil(tmp_path, seen):
    return EVIL.format(seen=str(seen)) + (INVENTORY / "lab.py").read_text()


@pytest.fixture
def hostile_env(monkeypatch):
    monkeypatch.setenv("TETON_SECRET_bgp_backend", SECRET)
    monkeypatch.setenv("TETON_CACHE_KEY", KEY)
    monkeypatch.setenv("TETON_CACHE", "off")


def test_a_python_spec_does_not_see_the_secrets_or_the_cache_key(tmp_path, hostile_env):
    seen = tmp_path / "seen.json"
    spec = tmp_path / "evil.py"
    spec.write_text(_evil(tmp_path, seen))
    load_spec(spec)
    env = json.loads(seen.read_text())
    assert not any(k.startswith("TETON_SECRET_") for k in env)
    assert "TETON_CACHE_KEY" not in env
    assert SECRET not in seen.read_text() and KEY not in seen.read_text()
    assert env.get("TETON_CACHE") == "off"          # the rest of the environment is there


def test_a_python_spec_from_a_git_ref_does_not_see_them_either(tmp_path, hostile_env, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "inventory").mkdir(parents=True)
    seen = tmp_path / "seen.json"

    def git(*args):
        subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                       check=True, capture_output=True)

    git("init", "-q")
    (repo / "inventory" / "evil.py").write_text(_evil(tmp_path, seen))
    git("add", ".")
    git("commit", "-q", "-m", "evil")
    (repo / "inventory" / "lab.py").write_text((INVENTORY / "lab.py").read_text())
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(main, ["diff", "HEAD:inventory/evil.py", "inventory/lab.py"])
    assert "Traceback" not in result.output, result.output
    env = json.loads(seen.read_text())
    assert not any(k.startswith("TETON_SECRET_") for k in env) and "TETON_CACHE_KEY" not in env


def test_the_environment_of_a_spec_keeps_everything_else():
    env = {"PATH": "/bin", "TETON_SECRET_x": "v", "TETON_SECRET_": "w", "TETON_CACHE_KEY": "k", "TETON_WORKERS": "2",
           "HOME": "/h"}
    assert environment.for_untrusted_child(env) == {"PATH": "/bin", "TETON_WORKERS": "2", "HOME": "/h"}
