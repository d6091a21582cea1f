"""The pull-request workflow: actionlint accepts it, every step is a plain command of this repository, and those
commands do their job here: scripts/spec-review on a git repository with changed specs (each with its report and
the diagram of what changes), scripts/post-pr-comment against a stand-in for GitHub's REST API on the loopback,
scripts/publish-review pushing the reports to a branch of a local remote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
import yaml

from tests.helpers import LAB, ROOT, write_spec

WORKFLOW = ROOT / ".github" / "workflows" / "spec-review.yml"
ACTIONLINT = Path(os.environ.get("ACTIONLINT", Path.home() / ".cache" / "teton" / "bin" / "actionlint"))
TETON = ROOT / ".venv" / "bin" / "teton"
SCRIPTS = ("spec-review", "post-pr-comment", "publish-review")
URL = "https://o.github.io/r/pr-3"


def test_actionlint_accepts_the_workflow():
    assert ACTIONLINT.is_file(), f"{ACTIONLINT} is missing: scripts/setup builds it (or set $ACTIONLINT)"
    done = subprocess.run([str(ACTIONLINT), "-no-color", str(WORKFLOW)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert shutil.which("shellcheck"), "shellcheck is missing: scripts/setup installs it (actionlint runs it)"
    done = subprocess.run(["shellcheck", *(str(ROOT / "scripts" / s) for s in SCRIPTS)], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stdout


def test_every_step_runs_a_command_of_this_repository_or_a_pinned_action():
    jobs = yaml.safe_load(WORKFLOW.read_text())["jobs"]
    steps = [step for job in jobs.values() for step in job["steps"]]
    assert jobs["publish"]["permissions"] == {"contents": "write"} and jobs["publish"]["needs"] == "review"
    scripts = set()
    for step in steps:
        if "uses" in step:
            assert "@v" in step["uses"], step
            continue
        for word in step["run"].split():
            if word.startswith("scripts/"):
                scripts.add(word)
    assert scripts == {"scripts/setup", *(f"scripts/{s}" for s in SCRIPTS)}
    for s in scripts:
        assert os.access(ROOT / s, os.X_OK), s


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          check=True, capture_output=True, text=True).stdout


def review(repo: Path, base: str, **env: str) -> tuple[int, str]:
    done = subprocess.run([str(ROOT / "scripts" / "spec-review"), base, "out"], cwd=repo, capture_output=True,
                          text=True, env={**os.environ, "TETON": str(TETON), **env}, timeout=600)
    md = repo / "out" / "review.md"
    return done.returncode, md.read_text() if md.exists() else done.stderr


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "inventory").mkdir(parents=True)
    shutil.copy(LAB, repo / "inventory" / "lab.yaml")
    git(repo, "init", "-q")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "base")
    return repo


def test_spec_review_comments_each_changed_spec_and_fails_on_high_unless_allowed(repo):
    base = git(repo, "rev-parse", "HEAD").strip()
    code, md = review(repo, base)
    assert code == 0 and "No spec under `inventory/` changes" in md

    data = yaml.safe_load((repo / "inventory" / "lab.yaml").read_text())
    data["storage"][-1]["racks"] += 1
    write_spec(repo / "inventory", data, "lab.yaml")
    write_spec(repo / "inventory", {**data, "name": "lab-two"}, "lab-two.yaml")
    code, md = review(repo, base)
    assert code == 0, md
    assert md.startswith("<!-- teton-spec-review -->")
    assert "### teton diff: `" in md and "**Verdict: 🟡 MEDIUM**" in md
    assert "`inventory/lab-two.yaml`: new spec" in md
    assert json.loads((repo / "out" / "lab.json").read_text())["verdict"] == "medium"
    for name in ("lab", "lab-two"):                                   # each spec's report
        assert (repo / "out" / "reports" / name / "index.html").is_file()
    assert (repo / "out" / "reports" / "lab" / "changes.svg").read_text().startswith("<svg")
    assert "_Report: `teton docs inventory/lab.yaml -o DIR` writes it" in md and "![" not in md
    code, md = review(repo, base, REPORT_URL=URL)
    assert code == 0, md
    assert f"(<{URL}/lab/index.html>)" in md and f"(<{URL}/lab/changes.svg>)" in md
    assert f"**Report:** [`inventory/lab-two.yaml`](<{URL}/lab-two/index.html>)" in md

    data["backend"]["qos"]["roce_dscp"] = 24
    write_spec(repo / "inventory", data, "lab.yaml")
    code, md = review(repo, base)
    assert code == 1 and "**Verdict: 🔴 HIGH**" in md and "label the pull request `allow-high`" in md
    code, md = review(repo, base, ALLOW_HIGH="1")
    assert code == 0 and "**Verdict: 🔴 HIGH**" in md

    data["zones"] = "two"
    write_spec(repo / "inventory", data, "lab.yaml")
    code, md = review(repo, base)
    assert code == 2 and "`inventory/lab.yaml`: invalid" in md


def test_spec_review_checks_committed_intended_configs(repo):
    base = git(repo, "rev-parse", "HEAD").strip()
    subprocess.run([str(TETON), "render", "inventory/lab.yaml", "-o", "intended/lab"], cwd=repo, check=True,
                   capture_output=True)
    data = yaml.safe_load((repo / "inventory" / "lab.yaml").read_text())
    data["backend"]["bgp"]["timers"]["hold"] = 9
    write_spec(repo / "inventory", data, "lab.yaml")
    code, md = review(repo, base, ALLOW_HIGH="1")
    assert code == 1 and "**`intended/lab` is stale**" in md and "differs" in md


class FakeGitHub(BaseHTTPRequestHandler):
    comments: list[dict] = []
    calls: list[tuple[str, str]] = []

    def _reply(self, code: int, data: object) -> None:
        body = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _body(self) -> dict:
        return json.loads(self.rfile.read(int(self.headers["Content-Length"])))

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        self.calls.append(("GET", self.path))
        self._reply(200, self.comments if "page=1" in self.path else [])

    def do_POST(self) -> None:  # noqa: N802
        assert self.headers["Authorization"] == "Bearer t0ken"
        self.calls.append(("POST", self.path))
        self.comments.append({"id": 7, "body": self._body()["body"]})
        self._reply(201, self.comments[-1])

    def do_PATCH(self) -> None:  # noqa: N802
        self.calls.append(("PATCH", self.path))
        self.comments[0]["body"] = self._body()["body"]
        self._reply(200, self.comments[0])

    def log_message(self, *args: object) -> None:
        """Quiet: the test reads the calls, not a log."""


def test_post_pr_comment_creates_the_comment_once_then_updates_it(tmp_path):
    server = HTTPServer(("127.0.0.1", 0), FakeGitHub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        env = {**os.environ, "GITHUB_TOKEN": "t0ken", "GITHUB_REPOSITORY": "o/r", "PR_NUMBER": "12",
               "GITHUB_API_URL": f"http://127.0.0.1:{server.server_port}"}
        md = tmp_path / "review.md"
        for text in ("<!-- teton-spec-review -->\nfirst", "<!-- teton-spec-review -->\nsecond"):
            md.write_text(text)
            done = subprocess.run([str(ROOT / "scripts" / "post-pr-comment"), str(md)], env=env,
                                  capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr
    finally:
        server.shutdown()
    assert [c[0] for c in FakeGitHub.calls] == ["GET", "POST", "GET", "PATCH"]
    assert FakeGitHub.calls[1][1] == "/repos/o/r/issues/12/comments"
    assert FakeGitHub.calls[3][1] == "/repos/o/r/issues/comments/7"
    assert FakeGitHub.comments == [{"id": 7, "body": "<!-- teton-spec-review -->\nsecond"}]


def test_publish_review_puts_the_reports_under_the_prefix_of_a_branch_and_keeps_the_rest(repo, tmp_path):
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(repo, "remote", "add", "origin", str(remote))
    reports = tmp_path / "reports"
    (reports / "lab" / "build").mkdir(parents=True)
    (reports / "lab" / "index.html").write_text("<html>one</html>")
    (reports / "lab" / "changes.svg").write_text("<svg/>")

    def publish(prefix: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([str(ROOT / "scripts" / "publish-review"), str(reports), "pages", prefix], cwd=repo,
                              capture_output=True, text=True, timeout=120)

    assert publish("pr-1").returncode == 0
    (reports / "lab" / "index.html").write_text("<html>two</html>")
    assert publish("pr-2").returncode == 0
    (reports / "lab" / "changes.svg").unlink()
    assert publish("pr-1").returncode == 0
    done = publish("pr-1")
    assert done.returncode == 0 and "is up to date" in done.stderr
    files = git(remote, "ls-tree", "-r", "--name-only", "pages").split()
    assert files == [".nojekyll", "pr-1/lab/index.html", "pr-2/lab/changes.svg", "pr-2/lab/index.html"]
    assert git(remote, "show", "pages:pr-1/lab/index.html") == "<html>two</html>"
    assert git(remote, "log", "--format=%s", "pages").splitlines() == ["spec review: pr-1", "spec review: pr-2",
                                                                        "spec review: pr-1"]
    assert git(repo, "worktree", "list").count("\n") == 1 and not git(repo, "status", "--short")
    assert publish("../x").returncode == 2
