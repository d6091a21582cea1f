"""`teton verify` of the 24k references (issue 22): the RoCE and the InfiniBand builds clean with their counts; one CTSW
failed keeps every same-rail pair's path and narrows its zone's RTSWs from 16 to 15 paths, as the design has it; the
sweep of each CTSW failure of a zone (bench/bench_verify.py sweeps all 128)."""

from __future__ import annotations

from pathlib import Path

import pytest

from teton.verify import run
from teton.verify.distributed import mapper_for
from teton.verify.run import verify

pytestmark = pytest.mark.scale24k


@pytest.fixture(scope="module")
def build24k(roce24k_network_build) -> Path:
    return roce24k_network_build[1]        # the session's build of the 24k reference (tests/conftest.py)


def test_the_24k_roce_build_is_clean_with_what_it_checked_and_each_ctsw_of_a_zone_failed(build24k, monkeypatch):
    """One verify: the build clean, its counts, and the `--fail-each ctsw` sweep over one zone's 16 CTSWs (one per
    plane; the other zones are the same shape; the whole sweep of the 128, about 100 s here, is
    bench/bench_verify.py's)."""
    every = run.swept

    def zone_1(fabric, role_name):
        return [n for n in every(fabric, role_name) if n.startswith("z01-")]

    monkeypatch.setattr(run, "swept", zone_1)
    with mapper_for(None, build24k) as mapper:
        r = verify(build24k, fail_each="ctsw", mapper=mapper)
    assert r.ok and r.findings == []
    c = r.counts
    assert c["switches"] == 3337
    assert c["sessions"] == {"ipv4": 35108, "ipv6": 28160, "total": 63268}
    assert c["prefixes"] == {"ipv4": 6467, "ipv6": 3228, "total": 9695}
    assert c["routes"] == 16244263
    s = r.sweep
    assert s is not None and s["failures"] == 16 and len(s["each"]) == 16
    assert {row["failed"] for row in s["each"]} == {f"z01-ctsw{i:02d}" for i in range(1, 17)}
    assert s["worst"]["pairs_lost"] == 0 and s["worst"]["drop"]["paths"][1] == 15


def test_one_ctsw_failed_on_the_24k_keeps_same_rail_paths_and_narrows_its_zone_16_to_15(build24k):
    with mapper_for(None, build24k) as mapper:
        r = verify(build24k, fail=["z01-ctsw01"], mapper=mapper)
    (w,) = r.whatif
    tiers = {(t["network"], t["zone"], t["role"]): t for t in w["tiers"]}
    rtsw = tiers[("roce", 1, "rtsw")]
    assert rtsw["paths"] == [16, 15] and rtsw["design_paths"] == 15 and rtsw["switches"] == 192
    assert tiers[("roce", 2, "rtsw")]["paths"] == [16, 16]
    assert w["pairs_lost"] == 0 and all(x["with_path"][0] == x["with_path"][1] == x["pairs"] for x in w["rails"])
    assert len(w["rails"]) == 8 and w["deviations"] == []


def test_the_24k_ib_build_is_clean(ib24k_network_build):
    build = ib24k_network_build
    with mapper_for(None, build) as mapper:
        r = verify(build, mapper=mapper)
    assert r.ok and r.findings == []
    c = r.counts
    assert c["sessions"]["ipv6"] == 0 and c["sessions"]["total"] > 0 and c["routes"] > c["switches"] * 100
