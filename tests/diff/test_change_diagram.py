"""The diagram of what changes (`teton diff --diagram`) and the review comment that shows it: the report's cluster
drawing of the new side with exactly the diff's devices outlined by class (the removed ones faded where they were),
groups drawn as one box counting theirs, a legend; the markdown links the report and the image from --report-url;
the same bytes on every run, hash seed and render-cache state."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.design.test_growth import lab_with_room
from tests.helpers import ROOT, write_spec
from teton.cli import main
from teton.fabric.model import Fabric
from teton.report import change_svg
from teton.report.diagrams import MAX_SYMBOLS

URL = "https://example.org/spec-review/pr-7/lab"


class Drawn(HTMLParser):
    """Every device symbol of an SVG (its class in the change, or ""), and the aggregate boxes."""

    def __init__(self) -> None:
        super().__init__()
        self.symbols: dict[str, str] = {}
        self.boxes: list[dict[str, str | None]] = []
        self.classes: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "svg":
            self.classes.append(str(a.get("class")))
        if tag == "rect" and "data-device" in a:
            name = str(a["data-device"])
            assert name not in self.symbols, f"{name} drawn twice"
            self.symbols[name] = str(a.get("data-change") or "")
        if tag == "g" and "data-count" in a:
            self.boxes.append(a)


def drawn(svg: str) -> Drawn:
    d = Drawn()
    d.feed(svg)
    return d


def teton(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="module")
def zone_added(tmp_path_factory) -> tuple[Path, Path]:
    """(the lab with room to grow, the same with a third zone): an expansion."""
    folder = tmp_path_factory.mktemp("zone-added")
    data = lab_with_room()
    old = write_spec(folder, data, "lab.yaml")
    data["zones"] = 3
    return old, write_spec(folder, data, "lab-3.yaml")


def diff(old: Path, new: Path, out: Path, *extra: str) -> tuple[dict, str, str]:
    """(the JSON diff, the markdown comment, the diagram) of OLD -> NEW."""
    out.mkdir(exist_ok=True)
    code, js, err = teton("diff", str(old), str(new), "--format", "json", "--allow-high")
    assert code == 1, err
    code, _, err = teton("diff", str(old), str(new), "--format", "markdown", "-o", str(out / "c.md"),
                         "--diagram", str(out / "changes.svg"), "--allow-high", *extra)
    assert code == 1, err
    return json.loads(js), (out / "c.md").read_text(), (out / "changes.svg").read_text()


def test_a_zone_added_outlines_exactly_the_added_and_attached_devices(zone_added, tmp_path):
    old, new = zone_added
    data, md, svg = diff(old, new, tmp_path, "--report-url", URL)
    found = data["classification"]
    assert found["kind"] == "expansion", found
    assert found["counts"]["added"] > 0 and found["counts"]["attached"] > 0
    seen = drawn(svg)
    assert seen.classes == ["changes"] and not seen.boxes           # the lab: one symbol per device
    marked = {n: k for n, k in seen.symbols.items() if k}
    assert Counter(marked.values()) == +Counter(found["counts"])
    assert sorted(marked) == data["devices_changed"]
    assert {n for n, k in marked.items() if k == "added"} == {n for n in seen.symbols if n.startswith("z03-")}
    for kind, n in found["counts"].items():
        assert f"{kind} \u00d7 {n}<" in svg                               # the legend counts each class
    # the comment: the report linked, the diagram shown from the same place
    assert f"**Report:** [`{new}` drawn, its figures and every device's files](<{URL}/index.html>)" in md
    alt = ", ".join(f"{n} {k}" for k, n in found["counts"].items() if n)
    assert f"![what changes: {alt}](<{URL}/changes.svg>)" in md
    assert md.index("**Verdict:") < md.index("![what changes") < md.index("| tier | zone |")


def test_a_zone_removed_draws_its_devices_faded_where_they_were(zone_added, tmp_path):
    new, old = zone_added
    data, md, svg = diff(old, new, tmp_path)
    removed = {d["name"] for d in data["devices"] if d["status"] == "removed"}
    seen = drawn(svg)
    assert removed and {n for n, k in seen.symbols.items() if k == "removed"} == removed
    assert 'fill-opacity="0.35" stroke-dasharray="4 2"' in svg
    assert f"backend, {len(seen.symbols) - len(removed)} devices" in svg     # the new side's count
    # without --report-url: how to make the report, and where the diagram is, no image
    assert f"_Report: `teton docs {new} -o DIR` writes it" in md and "![" not in md
    assert f"`{tmp_path / 'changes.svg'}`; with `--report-url` it shows here" in md


def test_the_diagram_is_the_same_bytes_across_runs_hash_seeds_and_the_cache(zone_added, tmp_path):
    old, new = zone_added
    outs = []
    for i, (seed, cache) in enumerate((("1", "off"), ("2", "on"), ("3", "on"))):   # designed, then replayed
        (tmp_path / str(i)).mkdir()
        svg, md = tmp_path / str(i) / "changes.svg", tmp_path / str(i) / "c.md"
        env = {**os.environ, "PYTHONHASHSEED": seed, "TETON_CACHE": cache,
               "PYTHONPATH": os.pathsep.join([str(ROOT / "infra"), str(ROOT)])}
        done = subprocess.run([sys.executable, "-m", "teton.cli", "diff", str(old), str(new), "--format", "markdown",
                               "-o", str(md), "--diagram", str(svg), "--report-url", URL],
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 1, done.stderr
        outs.append((svg.read_bytes(), md.read_bytes()))
    assert "0 rendered" in done.stderr, done.stderr                 # the last run: both sides from the cache
    assert outs[0] == outs[1] == outs[2]
    assert b"\r" not in outs[0][0] and outs[0][0].endswith(b"</svg>")


def test_a_group_drawn_as_one_box_says_how_many_of_it_change(lab_fabric: Fabric):
    host = lab_fabric.by_role("host")[0]
    many = {f"z01-x{i:03d}": replace(host, name=f"z01-x{i:03d}") for i in range(MAX_SYMBOLS + 1)}
    fabric = replace(lab_fabric, devices=dict(sorted({**lab_fabric.devices, **many}.items())))
    marks = dict.fromkeys(["z01-x000", "z01-x001", "z01-x002"], "added") | {"z01-x003": "renumbered"}
    n = sum(1 for d in fabric.devices.values() if d.role == "host" and d.zone == host.zone)
    svg = change_svg(fabric, marks, caption="what changes")
    seen = drawn(svg)
    box = next(b for b in seen.boxes if b["data-role"] == "host" and b.get("data-changed"))
    assert box["data-changed"] == "4" and box["data-count"] == str(n)
    assert f"{n} host (4 changed)" in svg and f"4 of {n} host: 3 added, 1 renumbered" in svg
    assert not any(seen.symbols.values())                  # the marked hosts are in the box, not drawn one by one
    assert f"{n} host (3 added)" in change_svg(fabric, dict.fromkeys(["z01-x000", "z01-x001", "z01-x002"], "added"))


def test_a_report_url_that_is_not_an_http_url_is_refused(zone_added, tmp_path):
    old, new = zone_added
    code, _, err = teton("diff", str(old), str(new), "--format", "markdown", "--report-url", "file:///x y")
    assert code == 2 and "--report-url 'file:///x y': not an http(s) URL" in err
