"""Waves: a canary per tier first, then bounded waves tier by tier; every switch in exactly one wave."""

from __future__ import annotations

from collections import Counter

import pytest

from teton.deploy.rollout import RolloutPolicy, blast_group, plan_waves


def test_lab_waves_start_with_one_canary_per_tier_and_never_take_a_whole_zone_of_ctsws(lab_fabric):
    waves = plan_waves(lab_fabric.switches())
    assert waves[0].name == "canary"
    assert set(waves[0].devices) >= {"z01-r001-rtsw", "z01-ctsw01", "atsw01"}
    names = [n for w in waves for n in w.devices]
    assert sorted(names) == sorted(d.name for d in lab_fabric.switches()) and len(names) == len(set(names))
    for w in waves[1:]:
        groups = Counter(blast_group(lab_fabric.devices[n]) for n in w.devices)
        for g, n in groups.items():
            size = sum(1 for d in lab_fabric.switches() if blast_group(d) == g)
            assert n < size or size == 1, (w, g)


def test_waves_are_tier_by_tier_from_the_racks_up(lab_fabric):
    roles = [lab_fabric.devices[w.devices[0]].role for w in plan_waves(lab_fabric.switches())[1:]]
    firsts = [roles.index(r) for r in ("rtsw", "ctsw", "atsw")]
    assert firsts == sorted(firsts)


def test_explicit_canary_and_bad_policy(lab_fabric):
    some = [lab_fabric.devices[n] for n in ("z01-r001-rtsw", "z01-r002-rtsw", "z01-ctsw01")]
    waves = plan_waves(some, RolloutPolicy(canary=("z01-r002-rtsw",)))
    assert waves[0].devices == ("z01-r002-rtsw",)
    with pytest.raises(ValueError, match="canary devices are not switches being deployed: atsw01"):
        plan_waves(some[:1], RolloutPolicy(canary=("atsw01",)))
    with pytest.raises(ValueError, match="fraction"):
        RolloutPolicy(fraction=1.0)


@pytest.mark.scale24k
def test_24k_waves_are_bounded(roce24k):
    fabric = roce24k.fabric
    waves = plan_waves(fabric.switches())
    assert all(len(w.devices) <= 64 for w in waves)
    ctsw_per_zone = Counter(d.zone for d in fabric.by_role("ctsw"))
    for w in waves:
        per_zone = Counter(fabric.devices[n].zone for n in w.devices if fabric.devices[n].role == "ctsw")
        assert all(n <= ctsw_per_zone[z] // 4 for z, n in per_zone.items())
    assert len(waves) < 120
