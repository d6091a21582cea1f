"""`teton render SITE`: a build per cluster and the tier's, site.json written last, all or nothing; on Dask the same
bytes."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.site.conftest import LAB_SITE, tree
from teton.cli.app import main
from teton.findings import Finding, SpecError
from teton.pipeline.output import OutputError
from teton.site.render import Piece, render_site


def test_the_lab_site_renders_each_clusters_build_and_the_tiers_with_site_json(lab_site: Path) -> None:
    index = json.loads((lab_site / "site.json").read_text())
    assert {k: index[k] for k in ("format", "site", "tier", "clusters")} == {
        "format": 1, "site": "lab-site", "tier": "lab-site", "clusters": {"lab-a": "lab-a", "lab-b": "lab-b"}}
    for folder in ("lab-a", "lab-b", "lab-site"):
        manifest = lab_site / folder / "manifest.json"
        assert index["manifests"][folder] == hashlib.sha256(manifest.read_bytes()).hexdigest()
    # the BAG switches are rendered in the tier's build only; the clusters' ATSWs in their own
    assert sorted(p.name for p in (lab_site / "lab-site" / "devices").iterdir()) == ["bag01", "bag02"]
    assert not (lab_site / "lab-a" / "devices" / "bag01").exists()
    assert (lab_site / "lab-a" / "devices" / "atsw01").is_dir()
    startup = (lab_site / "lab-site" / "devices" / "bag01" / "startup-config").read_text()
    assert "lab-a--atsw01" in startup and "lab-b--atsw02" in startup
    # a cluster's manifest records its spec (the cluster as the site loads it)
    assert json.loads((lab_site / "lab-b" / "manifest.json").read_text())["spec"]["cluster"] == "lab-b"


def test_the_merged_site_is_one_build_with_every_clusters_devices_named_by_cluster(lab_site: Path) -> None:
    devices = {p.name for p in (lab_site.parent / "merged" / "devices").iterdir()}
    assert {"bag01", "bag02", "lab-a--atsw01", "lab-b--atsw02", "lab-a--z01-r001-rtsw"} <= devices
    assert not any(d.startswith(("atsw", "z01")) for d in devices)


def test_dask_local_in_chunks_is_byte_identical_to_this_process(lab_site: Path, tmp_path: Path) -> None:
    """Three workers for two clusters: each cluster in two pieces (its switches round-robin), each piece designing
    its cluster itself; the same bytes as `--dask off`."""
    result = CliRunner().invoke(main, ["render", str(LAB_SITE), "-o", str(tmp_path / "out"), "--dask", "local",
                                       "--workers", "3", "--json"])
    assert result.exit_code == 0, result.output
    assert "a LocalCluster of 3 workers" in result.output
    assert tree(tmp_path / "out") == tree(lab_site)


def test_a_failed_piece_publishes_nothing_and_leaves_the_previous_builds(lab_site: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(lab_site, out)
    before = tree(out)

    def failing(jobs: list) -> list[Piece]:         # type: ignore[type-arg]
        # lab-b's failure comes first: lab-a's piece (empty here) is then not staged
        return [Piece(j.cluster.name, j.chunk, problems=[Finding(j.file, "backend", "planted", rule="io")])
                if j.cluster.name == "lab-b" else Piece(j.cluster.name, j.chunk) for j in reversed(jobs)]

    with pytest.raises(SpecError) as exc:
        render_site(LAB_SITE, out, runner=failing)
    assert [f.message for f in exc.value.findings if f.severity == "error"] == ["planted"]
    assert tree(out) == before
    assert not [p for p in out.iterdir() if p.name.startswith(".site-staging")]


def test_a_folder_that_is_not_a_build_is_refused_before_any_work(tmp_path: Path) -> None:
    (tmp_path / "out" / "lab-a").mkdir(parents=True)
    (tmp_path / "out" / "lab-a" / "notes.txt").write_text("mine")

    def never(jobs: list) -> list[Piece]:           # type: ignore[type-arg]
        raise AssertionError("rendered")

    with pytest.raises(OutputError, match="not a teton build"):
        render_site(LAB_SITE, tmp_path / "out", runner=never)
    assert (tmp_path / "out" / "lab-a" / "notes.txt").read_text() == "mine"


def test_a_cluster_with_the_sites_name_exits_2_naming_it(site_dir: Path, tmp_path: Path) -> None:
    bad = site_dir / "bad-name.yaml"
    bad.write_text((site_dir / "site.yaml").read_text().replace("name: lab-a", "name: lab-site"))
    result = CliRunner().invoke(main, ["render", str(bad), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert "clusters[0].name" in result.output and "site's name" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "out").exists()


def test_site_options_are_refused_for_a_cluster_spec_and_cluster_options_for_a_site(tmp_path: Path) -> None:
    lab = Path(LAB_SITE).parent / "lab.yaml"
    result = CliRunner().invoke(main, ["render", str(lab), "-o", str(tmp_path / "x"), "--dask", "local"])
    assert result.exit_code == 2 and "--dask" in result.output
    result = CliRunner().invoke(main, ["render", str(LAB_SITE), "-o", str(tmp_path / "y"), "--only", "sonic"])
    assert result.exit_code == 2 and "--only" in result.output
    result = CliRunner().invoke(main, ["render", str(LAB_SITE), "-o", str(tmp_path / "z"), "--dask", "nowhere"])
    assert result.exit_code == 2 and "scheduler's address" in result.output
