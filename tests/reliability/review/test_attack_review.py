"""Attack: the pull-request review.  scripts/spec-review wrote spec file names into the comment inside backticks as
they were: a name holding a backtick ends the code span and the rest is markdown of the author's (links, images,
mentions).  The workflow ran the pull request's own code with the checkout's token left in .git/config and posted
the comment with the pull request's copy of scripts/post-pr-comment, holding pull-requests: write.  Now names are
escaped, the review job keeps no credentials and cannot write, and the comment is posted by a job that runs the base
branch's script on the review's artifact."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import yaml

from tests.helpers import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "spec-review.yml"
TETON = ROOT / ".venv" / "bin" / "teton"
EVIL = "inventory/x`![img](evil.example)`<b>y.yaml"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com",
                           "-c", "core.quotepath=off", *args], check=True, capture_output=True, text=True).stdout


def test_spec_names_are_escaped_in_the_comment(tmp_path):
    repo = tmp_path / "repo"
    (repo / "inventory").mkdir(parents=True)
    gone = repo / "inventory" / "gone`[x](evil.example).yaml"
    gone.write_text("name: a\n")
    _git(repo, "init", "-q")
    _git(repo, "config", "core.quotepath", "off")
    _git(repo, "add", ".")
    _git(repo, "commit", "-q", "-m", "base")
    base = _git(repo, "rev-parse", "HEAD").strip()
    gone.unlink()
    (repo / EVIL).write_text("name: [not, a, spec\n")             # invalid: only validate runs
    done = subprocess.run([str(ROOT / "scripts" / "spec-review"), base, "out"], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, "TETON": str(TETON)}, timeout=300)
    md = (repo / "out" / "review.md").read_text()
    assert done.returncode == 2, done.stderr
    assert "- `inventory/gone'[x](evil.example).yaml`: removed" in md
    assert "### `inventory/x'![img](evil.example)'<b>y.yaml`: invalid" in md


def test_the_review_job_runs_the_pull_requests_code_without_a_token_that_writes():
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    review = jobs["review"]
    assert review["permissions"] == {"contents": "read"}
    checkout = next(s for s in review["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False
    assert not any("GITHUB_TOKEN" in (s.get("env") or {}) or "post-pr-comment" in s.get("run", "")
                   for s in review["steps"])


def test_the_comment_is_posted_by_the_base_branchs_script():
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    posting = [name for name, job in jobs.items() if any("post-pr-comment" in s.get("run", "") for s in job["steps"])]
    assert posting == ["comment"]
    job = jobs["comment"]
    assert job["permissions"] == {"contents": "read", "pull-requests": "write"} and job["needs"] == "review"
    checkout = next(s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert checkout["with"]["persist-credentials"] is False
