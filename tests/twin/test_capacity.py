"""A twin too big for the machine is refused before anything starts, with the size that would fit."""

from __future__ import annotations

import pytest

from teton.findings import TetonError
from teton.twin.capacity import MIB_PER_SWITCH, SWITCHES_PER_CORE, Machine, check_fits


def test_cpu_limits_a_machine_with_memory_to_spare():
    assert Machine(cores=2, available_mib=24_000).max_switches() == 2 * SWITCHES_PER_CORE


def test_memory_limits_a_machine_with_cores_to_spare():
    assert Machine(cores=64, available_mib=4_000).max_switches() == 4_000 * 3 // 4 // MIB_PER_SWITCH


def test_a_twin_that_fits_passes_and_one_too_big_is_refused_with_the_size_that_would():
    small = Machine(cores=2, available_mib=24_000)
    check_fits("lab", 29, 15, small)
    with pytest.raises(TetonError) as exc:
        check_fits("big", 3320, 4000, small)
    message = str(exc.value)
    assert "3320 switches and 4000 hosts" in message and f"at most {2 * SWITCHES_PER_CORE} switches" in message
    assert f"{-(-3320 // SWITCHES_PER_CORE)} cores" in message


def test_this_machine_holds_the_lab():
    assert Machine.here().max_switches() >= 29
