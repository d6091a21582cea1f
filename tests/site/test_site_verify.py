"""`teton verify OUT` of a site's build folder (OUT/site.json naming each cluster's build and the tier's): the
sessions a member can only count are proven from both builds' files, every rack prefix of each cluster reaches every
rack of the other cluster with the design's ECMP width, `--fail-each bag` prices the loss of each BAG switch, and a
BAG switch that stops passing one cluster's prefixes is named with those prefixes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from teton.cli import main
from teton.site.index import SITE_JSON, read_index
from teton.site.verify import models, read_site, solved, verify_site

CLUSTER = {"switches": 29, "sessions": {"ipv4": 52, "ipv6": 32, "total": 84},
           "tier_sessions": {"ipv4": 4, "ipv6": 4, "total": 8}, "routes": 1323}


def run(*args: str) -> tuple[int, dict]:
    r = CliRunner().invoke(main, ["verify", *args, "--json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), r.output
    return r.exit_code, json.loads(r.stdout)


def test_the_lab_site_is_clean_with_per_cluster_counts(lab_site):
    code, report = run(str(lab_site))
    assert code == 0 and report["ok"] and report["findings"] == []
    c = report["counts"]
    assert c["switches"] == 60
    assert c["sessions"] == {"ipv4": 112, "ipv6": 72, "total": 184}     # each cluster's 84 and the 16 to the tier
    assert c["clusters"] == {"lab-a": CLUSTER, "lab-b": CLUSTER}
    assert c["tier"]["switches"] == 2 and c["tier"]["tier_sessions"]["total"] == 16
    text = CliRunner().invoke(main, ["verify", str(lab_site)])
    assert text.exit_code == 0
    flat = " ".join(text.output.split())
    assert "every assertion holds" in flat
    assert "cluster lab-b: 29 switches, 84 sessions inside it, 8 to the tier" in flat
    assert "tier lab-site: 2 switches, 0 sessions inside it, 16 to the clusters" in flat


def test_every_rack_of_one_cluster_reaches_every_rack_of_the_other_at_the_designed_width(lab_site):
    """Not vacuous: the design itself reaches the other cluster's racks (so rack-reach and ecmp-width hold them), and
    the files do, at its widths."""
    merged, _, views, _ = read_site(read_index(lab_site))
    model, design, findings = models(merged, views)
    assert findings == []
    files, planned = solved(model, design)
    racks = {c: [d for d in merged.devices.values() if d.role == "rtsw" and d.name.startswith(f"{c}--")]
             for c in ("lab-a", "lab-b")}
    assert len(racks["lab-a"]) == len(racks["lab-b"]) == 4
    checked = 0
    for src, dst in (("lab-a", "lab-b"), ("lab-b", "lab-a")):
        at = np.array([model.index[d.name] for d in racks[dst]])
        at_d = np.array([design.index[d.name] for d in racks[dst]])
        for d in racks[src]:
            for p in (*d.routing.aggregates4, *d.routing.aggregates6):
                got, want = files.dist(p), planned.dist(p)
                assert want is not None and (want[at_d] > 0).all(), (p, dst)
                assert got is not None and (got[at] == want[at_d]).all(), (p, dst)
                w = files.solution.width[files.row[p]][at]
                assert (w == planned.solution.width[planned.row[p]][at_d]).all() and (w > 0).all()
                checked += 1
    assert checked >= 8


def test_fail_each_bag_prices_the_loss_of_each_bag_switch(lab_site):
    code, report = run(str(lab_site), "--fail-each", "bag")
    assert code == 0
    s = report["sweep"]
    assert s["role"] == "bag" and s["failures"] == 2
    assert [x["failed"] for x in s["each"]] == ["bag01", "bag02"]
    for x in s["each"]:
        assert x["pairs_lost"] == 0 and x["unreached_routes"] == 0
        assert x["drop"] == {"network": "roce of lab-a", "zone": None, "role": "atsw", "towards": "racks",
                             "paths": [2, 1], "bandwidth_gbps": [800.0, 400.0]}   # rows per cluster: the first of
    assert s["worst"]["failed"] == "bag01"                                         # the equal drops


def test_a_bag_failure_is_priced_towards_the_other_clusters(lab_site):
    """A cluster's switches have their paths towards the other clusters' racks as a figure of their own (at 24k an
    ATSW's fewest paths, to its own cluster's racks, would hide the loss of 2 of its 28 paths into the tier); a
    network that joins no other cluster has none."""
    code, report = run(str(lab_site), "--fail", "bag01")
    assert code == 0
    (w,) = report["whatif"]
    rows = {(t["network"], t["zone"], t["role"]): t for t in w["tiers"]}
    for cluster in ("lab-a", "lab-b"):
        atsw = rows[(f"roce of {cluster}", None, "atsw")]
        assert atsw["paths_to_other_clusters"] == [2, 1] and atsw["design_paths_to_other_clusters"] == 1
        assert atsw["bandwidth_to_other_clusters_gbps"] == [800.0, 400.0]
        rtsw = rows[(f"roce of {cluster}", 1, "rtsw")]      # a rack switch's CTSWs, ECMP-wide either way
        assert rtsw["paths_to_other_clusters"] == [4, 4] and rtsw["paths"] == [4, 4]
    # a cluster's front end reaches no other cluster: nothing towards them
    assert rows[("frontend of lab-a", 1, "fsw")]["paths_to_other_clusters"] == [None, None]


def test_fail_takes_the_sites_names(lab_site):
    code, report = run(str(lab_site), "--fail", "lab-a--z01-ctsw01")
    assert code == 0
    (w,) = report["whatif"]
    assert w["failed"] == "lab-a--z01-ctsw01"
    rows = {(t["network"], t["zone"], t["role"]): t for t in w["tiers"]}
    rtsw = rows[("roce of lab-a", 1, "rtsw")]          # each cluster's zone 1 its own row: lab-a's lost a CTSW
    assert rtsw["paths"] == [4, 3] and rtsw["design_paths"] == 3
    assert rows[("roce of lab-b", 1, "rtsw")]["paths"] == [4, 4]   # lab-b's racks keep their 4 CTSWs
    assert ("frontend of lab-a", 1, "fsw") in rows                 # a cluster's front end named once
    # each cluster's front end is its own network: no route lost between two clusters' front ends
    assert all(t["unreached_routes"] == 0 for t in w["tiers"])


def _copy(lab_site: Path, tmp_path: Path) -> Path:
    out = tmp_path / "site"
    shutil.copytree(lab_site, out)
    return out


def test_a_bag_switch_that_drops_one_clusters_neighbours_is_named_with_its_prefixes(lab_site, tmp_path):
    out = _copy(lab_site, tmp_path)
    path = out / "lab-site" / "devices" / "bag01" / "structured-config.json"
    config = json.loads(path.read_text())
    bgp = config["router_bgp"]
    kept = [n for n in bgp["neighbors"] if not n.get("description", "").startswith("lab-b--")]
    assert len(kept) == len(bgp["neighbors"]) - 4
    bgp["neighbors"] = kept
    path.write_text(json.dumps(config, indent=1))
    code, report = run(str(out))
    assert code == 1
    by_rule: dict[str, list[dict]] = {}
    for f in report["findings"]:
        by_rule.setdefault(f["rule"], []).append(f)
    # lab-b's ATSWs configure bag01, which no longer configures them back: named from lab-b's files
    sessions = by_rule["bgp-session"]
    assert len(sessions) == 4
    assert {f["file"] for f in sessions} == {"lab-b/devices/atsw01/structured-config.json",
                                             "lab-b/devices/atsw02/structured-config.json"}
    assert all("bag01 configures no neighbour" in f["message"] for f in sessions)
    # lab-b's rack prefixes reach lab-a's racks over bag02 alone: the width falls at lab-a's ATSWs (and bag01 loses
    # them); lab-a's racks keep their reach
    merged, _, _, _ = read_site(read_index(out))
    lab_b = {p for d in merged.devices.values() if d.role == "rtsw" and d.name.startswith("lab-b--")
             for p in (*d.routing.aggregates4, *d.routing.aggregates6)}
    widths = {f["message"].split(" ", 1)[0]: f for f in by_rule["ecmp-width"]}
    assert {"lab-a--atsw01", "lab-a--atsw02"} <= set(widths)
    for name in ("lab-a--atsw01", "lab-a--atsw02"):
        f = widths[name]
        assert f["path"] in lab_b
        assert f"{f['path']} 1 (design 2)" in f["message"]
    assert "rack-reach" not in by_rule
    # and bag01 is named: it holds lab-a's prefixes and has no session to lab-b's ATSWs that take them from it
    assert {f["file"] for f in by_rule["tier-transit"]} == {"lab-site/devices/bag01/structured-config.json"}
    assert set(by_rule) <= {"bgp-session", "ecmp-width", "loopback-reach", "link-prefix", "rack-reach",
                            "tier-transit"}


def test_a_bag_switch_whose_export_denies_one_clusters_host_links_loses_their_width(lab_site, tmp_path):
    """The fault in policy (EOS's route map and prefix list, as read_eos_bgp models them): bag01 denies lab-b's
    host-link block out; lab-a's ATSWs reach lab-b's racks over bag02 alone."""
    out = _copy(lab_site, tmp_path)
    path = out / "lab-site" / "devices" / "bag01" / "structured-config.json"
    config = json.loads(path.read_text())
    config["prefix_lists"].append({"name": "NOT_LAB_B_V4", "sequence_numbers": [
        {"action": "permit 10.65.0.0/24 le 32", "sequence": 10}]})
    export = next(m for m in config["route_maps"] if m["name"] == "EXPORT_V4")
    export["sequence_numbers"].insert(0, {"match": ["ip address prefix-list NOT_LAB_B_V4"], "sequence": 5,
                                          "type": "deny"})
    path.write_text(json.dumps(config, indent=1))
    code, report = run(str(out))
    assert code == 1
    widths = [f for f in report["findings"] if f["rule"] == "ecmp-width"]
    named = {f["message"].split(" ", 1)[0] for f in widths}
    assert {"lab-a--atsw01", "lab-a--atsw02"} <= named
    assert all(f["path"].startswith("10.65.0.") for f in widths if f["message"].startswith("lab-a--atsw"))
    assert not [f for f in report["findings"] if f["rule"] == "bgp-session"]
    (transit,) = [f for f in report["findings"] if f["rule"] == "tier-transit"]
    assert transit["file"] == "lab-site/devices/bag01/structured-config.json"
    assert "prefixes of lab-b" in transit["message"] and "route-map EXPORT_V4 out" in transit["message"]


@pytest.mark.parametrize(("index", "problem"), [
    ("{", "line 1: not JSON"),
    ('{"format": 2, "site": "s", "tier": "t", "clusters": {"a": "a"}}', "format: 2: this teton reads format 1"),
    ('{"format": 1, "site": "lab-site", "tier": "lab-site", "clusters": {"lab-a": "../x"}}',
     "clusters.lab-a: '../x' is not a folder's name"),
    ('{"format": 1, "site": "lab-site", "tier": "lab-site", "clusters": {"lab-c": "lab-c"}}',
     "clusters.lab-c: "),
])
def test_a_bad_index_exits_2_naming_the_file_and_path(lab_site, tmp_path, index, problem):
    out = tmp_path / "site"
    out.mkdir()
    (out / SITE_JSON).write_text(index)
    (out / "lab-site").symlink_to(lab_site / "lab-site")
    r = CliRunner().invoke(main, ["verify", str(out)])
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    flat = " ".join(r.output.split())
    assert f"{out / SITE_JSON}: {problem}" in flat


def test_verify_site_is_the_benchmarks_hook(lab_site):
    result = verify_site(lab_site)
    assert result.ok and result.counts["switches"] == 60
    assert set(result.seconds) >= {"read", "model", "solve", "rules", "total"}


def test_the_library_verifies_a_site_too(lab_site):
    import teton

    r = teton.verify(lab_site, dask="off")
    assert r.ok and list(r.counts["clusters"]) == ["lab-a", "lab-b"] and r.counts["tier"]["name"] == "lab-site"


def test_a_sweep_names_a_loss_only_towards_the_other_clusters():
    """At 24k an ATSW keeps its 16 paths to its own cluster's racks when a BAG switch fails, and loses 2 of its 28
    into the tier: the sweep's worst drop is the one towards the other clusters, said as such."""
    from teton.verify.report import sweep_lines, whatif_lines
    from teton.verify.run import sweep_result, sweep_row

    atsw = {"network": "roce of c01", "zone": None, "role": "atsw", "switches": 24, "paths": [16, 16],
            "design_paths": None, "bandwidth_gbps": [6400.0, 6400.0], "unreached_routes": 0,
            "paths_to_other_clusters": [28, 26], "design_paths_to_other_clusters": 26,
            "bandwidth_to_other_clusters_gbps": [11200.0, 10400.0], "oversubscription": [4.571, 4.923],
            "worst": "c01--atsw01"}
    report = {"failed": "bag01", "tiers": [atsw], "rails": [], "pairs_lost": 0, "worst_oversubscription": 4.923,
              "deviations": []}
    row = sweep_row("bag01", report)
    assert row["drop"] == {"network": "roce of c01", "zone": None, "role": "atsw", "towards": "other clusters",
                           "paths": [28, 26], "bandwidth_gbps": [11200.0, 10400.0]}
    (line,) = sweep_lines(sweep_result("bag", [row]))
    assert "atsw ECMP paths towards the other clusters 28 -> 26, bandwidth 11,200 -> 10,400 Gb/s" in line
    text = "\n".join(whatif_lines(report))
    assert "ECMP paths 16 -> 16, bandwidth 6,400 -> 6,400 Gb/s" in text
    assert "towards the other clusters 28 -> 26 (design 26), 11,200 -> 10,400 Gb/s" in text
