"""The Ansible inventory's own node builder (`teton.targets.ansible._inventory_yaml`) writes `_yaml(data, flow=False)`'s
text: on the lab's inventory and on random trees of names that YAML reads as other types, need quotes, or are not
str at all, and with a mapping met twice."""

from __future__ import annotations

import random
from typing import Any

from teton.targets import ansible


def _tree(rng: random.Random, depth: int = 0) -> Any:
    names = ["gpu", "z01-r001-h1", "null", "true", "yes", "on", "1", "0x1f", "1:20", "~", "", " lead", "a: b", "#c",
             "-x", "é", "a" * 130, "rail_0", "<<", "=", "'q'", '"d"']
    if depth > 2 or rng.random() < 0.4:
        return rng.choice([None, None, None, 1, "v", [1]]) if rng.random() < 0.1 else None
    return {rng.choice(names) if rng.random() < 0.97 else 5: _tree(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def test_the_inventory_writer_writes_yaml_dumps_text(lab_fabric):
    inventory = ansible.build_documents(lab_fabric).inventory()
    assert ansible._inventory_yaml(inventory) == ansible._yaml(inventory, flow=False)
    rng = random.Random(9)
    for _ in range(3000):
        data = {"all": _tree(rng)}
        assert ansible._inventory_yaml(data) == ansible._yaml(data, flow=False), data
    shared: dict[str, Any] = {"h": None}
    twice = {"a": {"hosts": shared}, "b": {"hosts": shared}}
    assert ansible._inventory_yaml(twice) == ansible._yaml(twice, flow=False)
