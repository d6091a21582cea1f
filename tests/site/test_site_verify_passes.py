"""The site's verify one destination at a time (`teton.site.verify.by_destination`, what `teton verify OUT` runs)
gives the report of the one-model verify (`verify_site(..., whole=True)`): the same findings in the same order, the
same counts, the same `--fail-each bag` sweep and `--fail` what-if, on the lab site clean and with planted faults
that each rule summed over the passes sees (a BAG switch dropping or denying one cluster's prefixes, a
maximum-prefix below what a session delivers, a rack switch announcing what the design does not have it send)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from teton.site.index import read_index
from teton.site.verify import destinations, models, read_site, verify_site


def _same(out: Path, **kw: Any) -> dict:
    parted = verify_site(out, **kw).to_json()
    whole = verify_site(out, whole=True, **kw).to_json()
    parted.pop("seconds")
    whole.pop("seconds")
    assert parted == whole
    return parted


def _edit(path: Path, change: Callable[[dict], None]) -> None:
    config = json.loads(path.read_text())
    change(config)
    path.write_text(json.dumps(config, indent=1))


def _drop_lab_b(config: dict) -> None:
    bgp = config["router_bgp"]
    bgp["neighbors"] = [n for n in bgp["neighbors"] if not n.get("description", "").startswith("lab-b--")]


def _deny_lab_b(config: dict) -> None:
    config["prefix_lists"].append({"name": "NOT_LAB_B_V4", "sequence_numbers": [
        {"action": "permit 10.65.0.0/24 le 32", "sequence": 10}]})
    export = next(m for m in config["route_maps"] if m["name"] == "EXPORT_V4")
    export["sequence_numbers"].insert(0, {"match": ["ip address prefix-list NOT_LAB_B_V4"], "sequence": 5,
                                          "type": "deny"})


def _small_limit(config: dict) -> None:
    bgp = config["router_bgp"]
    for group in bgp.get("peer_groups", []):
        if "maximum_routes" in group:
            group["maximum_routes"] = 3
    for n in bgp["neighbors"]:
        if "maximum_routes" in n:
            n["maximum_routes"] = 3


def _one_path(config: dict) -> None:
    config["router_bgp"]["maximum_paths"] = {"ecmp": 1, "paths": 1}


def test_the_parts_are_a_partition_of_every_prefix(lab_site):
    merged, _, views, _ = read_site(read_index(lab_site))
    model, design, _ = models(merged, views)
    parts = destinations(read_index(lab_site), merged, model, design)
    assert list(parts) == ["lab-a", "lab-b", "lab-site"]
    every = [p for ps in parts.values() for p in ps]
    assert len(every) == len(set(every))
    universe = {p for m in (model, design) for f in m.prefixes.values() for p in f.table.prefixes}
    assert universe <= set(every)
    assert parts["lab-a"] and parts["lab-b"] and not parts["lab-a"] & parts["lab-b"]


def test_clean_with_the_sweep_and_a_failure(lab_site):
    r = _same(lab_site, fail=("lab-a--z01-ctsw01",), fail_each="bag")
    assert r["ok"] and r["counts"]["routes"] > 0 and r["findings"] == [] and r["sweep"]["failures"] == 2 and r["whatif"]


@pytest.mark.parametrize(("device", "change", "rules"), [
    ("lab-site/devices/bag01", _drop_lab_b, {"bgp-session", "ecmp-width"}),
    ("lab-site/devices/bag01", _deny_lab_b, {"ecmp-width"}),
    ("lab-site/devices/bag02", _small_limit, {"maximum-prefix"}),
    ("lab-a/devices/z01-ctsw01", _one_path, {"ecmp-width"}),
])
def test_planted_faults_give_the_same_report(lab_site, tmp_path, device, change, rules):
    out = tmp_path / "site"
    shutil.copytree(lab_site, out)
    _edit(out / device / "structured-config.json", change)
    r = _same(out, fail_each="bag")
    assert not r["ok"]
    assert rules <= {f["rule"] for f in r["findings"]}
    transit = [f for f in r["findings"] if f["rule"] == "tier-transit"]
    if change is _drop_lab_b:      # bag01 holds lab-a's prefixes, and lab-b's ATSWs have no session to take them
        # (lab-a's prefixes, then its own loopbacks: the tier's)
        assert [f["message"].split(" ", 7)[6] for f in transit] == ["lab-a", "lab-a", "lab-site", "lab-site"]
        assert all(f["message"].startswith("bag01 holds ") and "(lab-b--atsw01, lab-b--atsw02)" in f["message"]
                   and "no ipv" in f["message"] for f in transit)
    elif change is _deny_lab_b:    # bag01 holds lab-b's host-link /27s and its export denies them to lab-a's ATSWs
        (f,) = transit
        assert f["file"] == "lab-site/devices/bag01/structured-config.json" and f["path"].startswith("10.65.0.")
        assert "prefixes of lab-b" in f["message"] and "(lab-a--atsw01, lab-a--atsw02)" in f["message"]
        assert "route-map EXPORT_V4 out" in f["message"]
    else:
        assert transit == []
    if change is _one_path:      # one switch's deviations from two passes (both clusters' racks): one finding
        (f,) = [f for f in r["findings"] if f["message"].startswith("lab-a--z01-ctsw01 ")]
        assert "10.64." in f["message"] and "10.65." in f["message"]
