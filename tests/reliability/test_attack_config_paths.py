"""Attack: follow the documentation to the letter.  The deploy block said `pulumi config set teton:spec
inventory/lab.yaml` (relative), but the program runs in `infra/` (`main: infra/`), so the spec and the default
build/<cluster> were looked up there and the preview failed.  Paths of the stack config resolve against the project
folder (where Pulumi.yaml is); this test runs the documented block verbatim, line by line, in a copy of the project,
and the preview previews the lab.

Two lines are not run, by name: `scripts/setup` (the installer; it built the engine this test needs) and
`teton twin up` (it starts the machine-wide `lab` twin; a preview does not reach the twin)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.helpers import ROOT
from tests.reliability.pulumi_project import engine_or_fail, make_project

NOT_RUN = (re.compile(r"^scripts/setup\b"), re.compile(r"\bteton twin up\b"))


def deploy_block() -> tuple[Path, list[str]]:
    """The first ```sh block after a heading holding "Deploy with Pulumi", in README.md or docs/*.md."""
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = page.read_text()
        heading = re.search(r"^#+ .*Deploy with Pulumi.*$", text, re.M)
        if heading is None:
            continue
        block = re.search(r"^```sh\n(.*?)^```", text[heading.end():], re.M | re.S)
        if block is not None:
            return page, block.group(1).splitlines()
    raise AssertionError("no ```sh block after a 'Deploy with Pulumi' heading in README.md or docs/*.md")


def test_the_documented_deploy_block_previews_the_lab_with_relative_paths(tmp_path):
    engine_or_fail()
    page, lines = deploy_block()
    preview = next(i for i, line in enumerate(lines) if line.startswith("pulumi preview"))
    run = [line for line in lines[:preview + 1] if not any(p.search(line) for p in NOT_RUN)]
    skipped = [line for line in lines[:preview + 1] if line not in run]
    assert len(skipped) == 2, f"{page}: lines not run changed: {skipped}"
    assert any(re.search(r"config set teton:spec inventory/", line) for line in run), "the block sets a relative spec"
    assert not any("teton:build" in line for line in run), "the block relies on the default build/<cluster>"
    project, env = make_project(tmp_path)
    script = "set -e\n" + "".join(f"echo '+ {i}'\n{line}\n" for i, line in enumerate(run))
    res = subprocess.run(["bash", "-c", script], cwd=project, env=env, capture_output=True, text=True, timeout=900,
                         check=False)
    out = res.stdout + res.stderr
    assert res.returncode == 0, f"{page}: the deploy block failed (rc {res.returncode}):\n{out[-4000:]}"
    assert (project / "build" / "lab" / "manifest.json").is_file()       # rendered where the user stands
    assert "teton:index:Switch" in out and "z01-r001-rtsw" in out, out[-3000:]
    assert re.search(r"\+ \d+ to create", out), out[-2000:]
