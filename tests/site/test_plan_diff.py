"""`teton plan SITE` and `teton diff SITE_A SITE_B`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import teton.site.diff as site_diff
from tests.site.conftest import LAB_SITE, tree
from teton.cli.app import main
from teton.diff import sides
from teton.findings import Finding
from teton.site.diff import diff_sites
from teton.site.render import render_site
from teton.spec.model import Cluster
from teton.targets import RenderContext


def test_the_site_plan_counts_each_tier_and_every_cable_once() -> None:
    result = CliRunner().invoke(main, ["plan", str(LAB_SITE), "--json"])
    assert result.exit_code == 0, result.output
    p = json.loads(result.stdout)
    assert list(p["clusters"]) == ["lab-a", "lab-b"]
    a = p["clusters"]["lab-a"]
    assert a["gpus"] == 64 and a["switches"]["atsw"] == 2
    assert "atsw-bag" not in a["links"]                  # a member's links into the tier are the tier's
    assert a["oversubscription"]["atsw"] == 4.0          # 8 CTSW links down, 2 into the tier
    t = p["tier"]
    assert (t["switches"], t["links"], t["oversubscription"], t["goal"]) == (2, 8, 4.0, 4.0)
    # per BAG switch: 2 clusters x 2 ATSWs x 1 uplink used; the room holds 4 clusters x 4 ATSWs; 144 400G ports
    assert t["ports"] == {"total": 144, "used": 4, "free_in_room": 12, "free": 128, "room_clusters": 4,
                          "room_atsw": 4, "per_slot": 4}
    s = p["totals"]
    assert s["gpus"] == 128 and s["switches"]["bag"] == 2 and s["switches"]["atsw"] == 4
    assert s["links"]["atsw-bag"] == 8
    assert s["optics"] == sum(c["optics"] for c in p["clusters"].values()) + t["optics"]
    assert s["power_kw"] == round(sum(c["power_kw"] for c in p["clusters"].values()) + t["power_kw"], 3)


def test_a_fourth_cluster_in_the_room_changes_only_the_tiers_attachment_lines(site_dir: Path, tmp_path: Path) -> None:
    three, four = render_site(site_dir / "site3.yaml", tmp_path / "three"), render_site(site_dir / "site4.yaml",
                                                                                         tmp_path / "four")
    for cluster in ("lab-a", "lab-b", "lab-c"):      # every existing cluster's build byte for byte
        assert tree(three.out / cluster) == tree(four.out / cluster), cluster
    d = diff_sites(site_dir / "site3.yaml", site_dir / "site4.yaml")
    assert d.changed
    assert list(d.added) == ["lab-d"] and not d.removed
    assert list(d.clusters) == ["lab-a", "lab-b", "lab-c"]
    assert not any(r.changed for r in d.clusters.values())
    bag = [f for f in d.tier if f.path.startswith("devices/bag")]
    assert {f.path.split("/")[1] for f in bag} == {"bag01", "bag02"}
    assert all(f.removed == 0 and f.added > 0 for f in bag), [(f.path, f.removed) for f in bag]
    added = [line for f in bag for line in f.lines if line.startswith("+") and not line.startswith("+++")]
    assert any("lab-d--atsw01" in line for line in added)
    # the tier's run list gains lab-d's cables into it and no existing cable moves (the BAG racks keep their places)
    (cabling,) = [f for f in d.tier if f.path == "cabling.csv"]
    assert cabling.removed == 0 and cabling.added == 4, cabling.lines
    text = d.render("text")
    assert "cluster lab-d: new cluster" in text and "cluster lab-a: unchanged" in text
    result = CliRunner().invoke(main, ["diff", str(site_dir / "site3.yaml"), str(site_dir / "site4.yaml"),
                                       "--format", "json"])
    assert result.exit_code == 1, result.output
    assert list(json.loads(result.stdout)["new_clusters"]) == ["lab-d"]


def test_a_site_diff_with_itself_is_empty(site_dir: Path) -> None:
    d = diff_sites(site_dir / "site.yaml", site_dir / "site.yaml")
    assert not d.changed and not d.tier and list(d.clusters) == ["lab-a", "lab-b"]


def test_a_member_with_the_same_inputs_on_both_sides_is_designed_once(site_dir: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A fifth cluster's diff of a 4 x 24k site designed each of the four unchanged clusters twice (5 min): a member
    whose spec and place in the site are equal on both sides is designed once, and the diff is the one two designs
    give, in every format, warnings included; a member whose spec changed is still designed on each side."""
    designs: list[str] = []
    real = sides.design_spec

    def counting(path: object, cluster: Cluster, site: object = None) -> object:
        designs.append(cluster.name)
        return real(path, cluster, site=site)  # type: ignore[arg-type]

    monkeypatch.setattr(sides, "design_spec", counting)
    tiers: list[list[str]] = []
    tier_files = site_diff._tier_files

    def recording(loaded: object, attached: dict[str, object], ctx: object) -> object:
        tiers.append(list(attached))
        return tier_files(loaded, attached, ctx)  # type: ignore[arg-type]

    monkeypatch.setattr(site_diff, "_tier_files", recording)
    shared = diff_sites(site_dir / "site3.yaml", site_dir / "site4.yaml")
    assert sorted(designs) == ["lab-a", "lab-b", "lab-c"]      # lab-d, new, is designed by the site diff itself
    # each side's tier from its members in the site's order (lab-d's design ends before lab-c's comparison)
    assert tiers == [["lab-a", "lab-b", "lab-c"], ["lab-a", "lab-b", "lab-c", "lab-d"]]
    designs.clear()
    monkeypatch.setattr(site_diff, "same_inputs", lambda *_: False)
    twice = diff_sites(site_dir / "site3.yaml", site_dir / "site4.yaml")
    assert sorted(designs) == ["lab-a", "lab-a", "lab-b", "lab-b", "lab-c", "lab-c"]
    for fmt in ("text", "json", "markdown"):
        assert shared.render(fmt) == twice.render(fmt), fmt
    assert shared.warnings == twice.warnings
    assert {c: r.warnings for c, r in shared.clusters.items()} == {c: r.warnings for c, r in twice.clusters.items()}
    # a changed member (lab-c's management domain) is designed on each side and its change is reported
    monkeypatch.undo()
    monkeypatch.setattr(sides, "design_spec", counting)
    designs.clear()
    changed = tmp_path / "site4-domain.yaml"
    text = (site_dir / "site4.yaml").read_text()
    assert "domain: lab-c.example.net" in text
    changed.write_text(text.replace("domain: lab-c.example.net", "domain: lab-c2.example.net"))
    shutil.copyfile(site_dir / "lab.yaml", tmp_path / "lab.yaml")
    d = diff_sites(site_dir / "site4.yaml", changed)
    assert designs.count("lab-c") == 2 and designs.count("lab-a") == 1
    assert d.clusters["lab-c"].changed and not d.clusters["lab-a"].changed


def test_the_new_side_of_a_member_designed_once_names_the_new_site_in_its_warnings(lab_cluster: Cluster) -> None:
    old = sides.Side("old/site.yaml", Path("old/lab.yaml"), lab_cluster, RenderContext(folders={}), None)
    new = sides.Side("new/site.yaml", Path("new/lab.yaml"), lab_cluster, RenderContext(folders={}), None)
    old.warnings = [Finding("old/site.yaml", "hosts", "a", rule="r"), Finding("catalogue.yaml", "x", "b", rule="r")]
    made = site_diff._as_new_side(old, new)
    assert (made.label, made.spec) == ("new/site.yaml", Path("new/lab.yaml"))
    assert [w.file for w in made.warnings] == ["new/site.yaml", "catalogue.yaml"]
    assert [w.file for w in old.warnings] == ["old/site.yaml", "catalogue.yaml"]     # the old side as it was
