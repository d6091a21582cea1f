"""A device's facts (what `teton diff` compares beside the files) depend on its record, not on how it was built."""

from __future__ import annotations

from teton.diff.facts import device_facts
from teton.fabric.serialize import dump_fabric, load_fabric


def test_facts_are_equal_for_a_designed_fabric_and_its_fabric_json(lab_fabric):
    read_back = load_fabric(dump_fabric(lab_fabric))
    changed = [n for n in lab_fabric.devices
               if device_facts(lab_fabric.devices[n]) != device_facts(read_back.devices[n])]
    assert changed == []
