"""Attack: a diff side spelled as a git option.  `teton diff -- '--output=FILE:x' NEW` made `git show` take the side
as its `--output` option and write FILE; a side is read as `REF:path` with `--end-of-options` before it, and a ref
starting with `-` is refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

from click.testing import CliRunner

from teton.cli import main
from teton.diff import sides


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                   check=True, capture_output=True)


def test_a_side_spelled_as_a_git_option_writes_no_file(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.yaml").write_text("name: a\n")
    _git(repo, "add", "a.yaml")
    _git(repo, "commit", "-q", "-m", "base")
    victim = tmp_path / "victim"
    victim.mkdir()
    monkeypatch.chdir(repo)
    result = CliRunner().invoke(main, ["diff", "--", f"--output={victim}/f:x", "a.yaml"])
    assert list(victim.iterdir()) == [], "git wrote a file named by the diff side"
    assert result.exit_code == 2 and "does not start with '-'" in result.output + (result.stderr or "")
    assert "Traceback" not in result.output


def test_every_git_call_puts_end_of_options_before_the_users_value(tmp_path, monkeypatch):
    calls: list[list[str]] = []

    def fake_run(argv, **kwargs):
        calls.append(list(argv))
        return subprocess.CompletedProcess(argv, 0, b"name: a\n", b"")

    monkeypatch.setattr(sides.subprocess, "run", fake_run)
    with sides.SpecFiles() as files:
        out = files.resolve("HEAD~1:inventory/lab.yaml")
        assert out.read_text() == "name: a\n"
    assert calls == [["git", "show", "--end-of-options", "HEAD~1:inventory/lab.yaml"]]
