"""`teton docs`: one self-contained, deterministic HTML page: the cluster's SVG holds every device of the plan (one
symbol each, or an aggregate box counting them), one SVG per zone, the plan's figures, the sections other commands
fill ("not available" without them), and links to every device's files that all resolve."""

from __future__ import annotations

import html
import re
import shutil
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

import pytest
from click.testing import CliRunner

from teton.buildfolder import BuildFolder
from teton.cli import main
from teton.fabric.model import Fabric
from teton.fabric.plan import plan
from teton.report import INDEX, Table, Unavailable, register, unregister, write_report
from teton.report.diagrams import MAX_SYMBOLS, cluster_svg, zone_svg


class Page(HTMLParser):
    """The page's links, ids and devices drawn in each SVG."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.svgs: list[str] = []
        self.devices: dict[str, Counter[str]] = {}      # svg class -> role -> devices drawn
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "svg":
            self.svgs.append(str(a.get("class")))
            self.devices.setdefault(self.svgs[-1], Counter())
        if "href" in a:
            self.hrefs.append(str(a["href"]))
        for key in ("src", "srcset", "data"):
            if key in a:
                self.external.append(f"{tag} {key}={a[key]}")
        if tag in ("script", "link", "iframe", "object", "embed", "img"):
            self.external.append(tag)
        if self.svgs and "data-device" in a and tag == "rect":
            self.devices[self.svgs[-1]][str(a["data-role"])] += 1
        if self.svgs and "data-count" in a:
            self.devices[self.svgs[-1]][str(a["data-role"])] += int(str(a["data-count"]))


def parse(text: str) -> Page:
    p = Page()
    p.feed(text)
    return p


def broken_links(index: Path, page: Page) -> list[str]:
    broken = []
    for href in page.hrefs:
        if href.startswith("#"):
            if href[1:] not in page.ids:
                broken.append(href)
        elif re.match(r"[a-z][a-z0-9+.-]*:", href) or not (index.parent / unquote(href)).is_file():
            broken.append(href)
    return broken


def expected_devices(fabric: Fabric) -> Counter[str]:
    """Devices by role, from the plan's figures (services from the Fabric: the plan does not count them)."""
    p = plan(fabric)
    want: Counter[str] = Counter({t: n for t, n in p["switches"].items() if n})
    want.update({{"rsw": "fe-rsw"}.get(k, k): n for k, n in p["frontend_switches"].items() if n})
    want.update(host=p["hosts"], storage=p["storage"]["servers"], service=len(fabric.by_role("service")))
    return +want


def test_the_cluster_svg_draws_every_device_of_the_plan(lab_report, lab_fabric):
    page = parse(lab_report.read_text())
    assert page.svgs[0] == "cluster" and page.svgs[1:] == ["zone", "zone"]
    drawn = page.devices["cluster"]
    assert drawn == expected_devices(lab_fabric) == Counter(d.role for d in lab_fabric.devices.values())
    text = lab_report.read_text()
    assert text.count('class="agg"') == 0                     # the lab: every device its own symbol
    assert sum(drawn.values()) == len(lab_fabric.devices) == 44


def test_every_link_resolves_and_every_device_links_its_files(lab_report, lab_build, lab_fabric):
    page = parse(lab_report.read_text())
    assert broken_links(lab_report, page) == []
    files = {unquote(h) for h in page.hrefs if not h.startswith("#")}
    targets = {(lab_report.parent / f).resolve() for f in files}
    for name in ("z01-r001-rtsw", "atsw01"):
        assert all((lab_build / "devices" / name / f).resolve() in targets for f in
                   (p.name for p in (lab_build / "devices" / name).iterdir()))
    assert (lab_build / "ansible/host_vars/z01-r001-h1.json").resolve() in targets
    for rel in ("fabric.json", "cabling.csv", "slurm/topology.yaml", "kubernetes/kueue.yaml", "manifest.json"):
        assert (lab_build / rel).resolve() in targets, rel
    assert {f"dev-{d}" for d in lab_fabric.devices} <= page.ids     # every symbol's target row


def test_the_page_is_self_contained(lab_report):
    text = lab_report.read_text()
    page = parse(text)
    assert page.external == []
    assert set(re.findall(r"https?://[^\s\"'<>]+", text)) == {"http://www.w3.org/2000/svg"}   # a namespace only
    assert "url(" not in text and "@import" not in text


def test_the_report_is_the_same_bytes_every_time(lab_build, lab_report, tmp_path):
    import teton.targets  # noqa: F401

    folder = BuildFolder.open(lab_build)
    before = lab_report.read_bytes()
    assert write_report(folder.fabric(), lab_report.parent, folder).read_bytes() == before
    import subprocess
    import sys

    code = ("import sys, teton.targets; from pathlib import Path; from teton.buildfolder import BuildFolder; "
            "from teton.report import write_report; b = BuildFolder.open(sys.argv[1]); "
            "write_report(b.fabric(), Path(sys.argv[2]), b)")
    for seed in ("1", "2"):                      # another process, another hash seed: the same bytes
        subprocess.run([sys.executable, "-c", code, str(lab_build), str(lab_report.parent)], check=True,
                       env={**__import__("os").environ, "PYTHONHASHSEED": seed})
        assert lab_report.read_bytes() == before
    fabric = folder.fabric()
    assert cluster_svg(fabric) == cluster_svg(fabric) and zone_svg(fabric, 1) == zone_svg(fabric, 1)


def test_figures_and_zones_are_on_the_page(lab_report, lab_fabric):
    text = lab_report.read_text()
    p = plan(lab_fabric)
    for key, value in (("gpus", "64"), ("bisection_tbps", "3.2"), ("oversubscription.rtsw", "4")):
        assert re.search(rf"<td>{re.escape(key)}</td><td class=\"n\">{value}</td>", text), key
    assert p["gpus"] == 64
    assert 'id="zone-z01"' in text and 'id="zone-z02"' in text
    assert "zone z02: 2 racks, 4 GPU hosts, 32 GPUs" in text


def test_sections_without_a_provider_say_not_available_and_take_one_when_given(lab_build, lab_fabric, tmp_path):
    text = write_report(lab_fabric, tmp_path / "a", BuildFolder.open(lab_build)).read_text()
    for key in ("bom", "verify", "what_if"):
        section = text.split(f'<h2 id="{key}">', 1)[1].split("<h2", 1)[0]
        assert '<p class="na">not available' in section, key

    def bom(fabric, build):
        assert build is None and fabric is lab_fabric
        return [Table("Optics", ("part", "count"), (("400G-SMF", 104),), note="from cabling.csv")]

    def what_if(fabric, build):
        raise Unavailable("the twin is not up")

    register("bom", bom)
    try:
        text = write_report(lab_fabric, tmp_path / "b", None, providers={"what_if": what_if}).read_text()
    finally:
        unregister("bom")
    bom_section = text.split('<h2 id="bom">', 1)[1].split("<h2", 1)[0]
    assert "<h3>Optics</h3>" in bom_section and '<td class="n">104</td>' in bom_section
    assert "not available: the twin is not up" in text
    assert "not available: the report was made without a build folder" in text
    with pytest.raises(KeyError):
        register("nonsense", bom)


def test_a_large_group_is_one_aggregate_box_that_counts_its_devices(lab_fabric):
    import dataclasses

    extra = {}
    for i in range(MAX_SYMBOLS + 1):
        d = dataclasses.replace(lab_fabric.devices["atsw01"], name=f"atsw{100 + i}")
        extra[d.name] = d
    fabric = dataclasses.replace(lab_fabric, devices={**lab_fabric.devices, **extra})
    page = parse(cluster_svg(fabric))
    assert page.devices["cluster"]["atsw"] == 2 + MAX_SYMBOLS + 1
    assert cluster_svg(fabric).count('class="agg" data-role="atsw" data-count="67"') == 1


def test_infiniband_lab_report(lab_ib_build, lab_ib_fabric, tmp_path):
    import teton.targets  # noqa: F401

    index = write_report(lab_ib_fabric, tmp_path / "ib", BuildFolder.open(lab_ib_build))
    page = parse(index.read_text())
    assert page.devices["cluster"] == expected_devices(lab_ib_fabric)
    assert broken_links(index, page) == []
    assert "rail leaves (leaf n: rail n of every host of the SU)" in index.read_text()


def test_teton_docs_from_a_spec_and_from_a_build(lab_build, tmp_path):
    from tests.helpers import LAB

    runner = CliRunner()
    res = runner.invoke(main, ["docs", str(LAB), "-o", str(tmp_path / "from-spec")])
    assert res.exit_code == 0, res.output
    index = tmp_path / "from-spec" / INDEX
    assert (tmp_path / "from-spec/build/manifest.json").is_file()
    assert broken_links(index, parse(index.read_text())) == []
    assert 'href="build/devices/atsw01/startup-config"' in index.read_text()
    res = runner.invoke(main, ["docs", str(lab_build), "-o", str(tmp_path / "from-build")])
    assert res.exit_code == 0, res.output
    moved = tmp_path / "from-build" / INDEX
    assert broken_links(moved, parse(moved.read_text())) == []
    not_a_build = tmp_path / "empty"
    not_a_build.mkdir()
    res = runner.invoke(main, ["docs", str(not_a_build), "-o", str(tmp_path / "x")])
    assert res.exit_code == 2 and "not a teton build folder" in res.output
    shutil.rmtree(tmp_path / "from-spec")


def test_teton_docs_fills_the_bom_verify_and_what_if_sections_from_the_build(lab_build, tmp_path):
    """From the build's cabling/bom.csv, `teton verify` on it, and `--what-if ctsw`: the worst single CTSW failure of
    the lab costs the aggregation tier one path of four (4 ATSW-facing paths become 3)."""
    import csv

    res = CliRunner().invoke(main, ["docs", str(lab_build), "-o", str(tmp_path / "r"), "--what-if", "ctsw"])
    assert res.exit_code == 0, res.output
    text = (tmp_path / "r" / INDEX).read_text()
    assert "not available" not in text
    bom = list(csv.reader((lab_build / "cabling/bom.csv").open()))
    assert all(f"<th>{html.escape(c)}</th>" in text for c in bom[0])
    assert "every assertion holds" in text and "Worst single failure per tier" in text
    assert '<td>ctsw</td><td class="n">8</td><td>z01-ctsw01</td><td>atsw 4 -&gt; 3</td>' in text


def test_the_readme_shows_the_lab_reports_screenshot():
    from PIL import Image

    from tests.helpers import ROOT

    readme = (ROOT / "README.md").read_text()
    images = re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", readme)
    assert "docs/report-lab.png" in images
    with Image.open(ROOT / "docs/report-lab.png") as img:
        assert img.format == "PNG" and img.width >= 1000
