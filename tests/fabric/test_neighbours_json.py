"""teton.fabric.neighbours: neighbours.json's per-device text by orjson is exactly json.dumps's (random strings, the
labs); the index's shared port ids and cable ids are what each switch's own spelling and `cable_id` give."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from teton.fabric import neighbours
from teton.fabric.cables import cable_id
from teton.fabric.model import Fabric
from teton.fabric.neighbours import LLDP_KINDS, Neighbour, _Index, _ports_json, neighbours_json


class _Str(str):
    """A str subclass: orjson would write it as a str, so the fast path must leave it to json.dumps."""


def _text(rnd: random.Random) -> Any:
    if rnd.random() < 0.03:
        return rnd.choice([_Str("sub"), 7, None, "\ud800"])
    odd = "\"\\\n\x01\x7fé☃\U0001f600 :,{}[]"
    return "".join(rnd.choice(odd) if rnd.random() < 0.05 else rnd.choice("abcxyzEth0123/-._")
                   for _ in range(rnd.randrange(8)))


def _reference(ports: dict[str, Any]) -> str:
    return json.dumps(ports, sort_keys=True, separators=(",", ":"))


def test_orjson_writes_json_dumps_text_on_random_neighbours(monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(43)
    fast = 0
    for _ in range(3000):
        found = [Neighbour(*(_text(rnd) for _ in range(8))) for _ in range(rnd.randrange(1, 4))]
        ports = {n.port: {"port_id": n.local_id, "neighbour": {"system": n.system, "port_id": n.port_id},
                          "peer": n.peer, "peer_port": n.peer_port, "cable": n.cable, "kind": n.kind}
                 for n in found}
        try:
            want = _reference(ports)
        except (TypeError, UnicodeEncodeError) as exc:
            with pytest.raises(type(exc)):
                _ports_json(found, ports)
            continue
        assert _ports_json(found, ports) == want, found
        fast += want.isascii() and "\\" not in want and all(type(x) is str for n in found for x in n)
    assert 300 < fast < 2700   # both paths taken often


def test_the_labs_neighbours_json_as_json_dumps_writes_it(lab_fabric: Fabric, lab_ib_fabric: Fabric,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    for fabric in (lab_fabric, lab_ib_fabric):
        want = neighbours_json(fabric)
        monkeypatch.setattr(neighbours, "_ports_json", lambda found, ports: _reference(ports))
        assert neighbours_json(fabric) == want
        monkeypatch.undo()


def test_the_index_spells_each_switch_and_cable_as_before(lab_fabric: Fabric) -> None:
    index = _Index(lab_fabric)
    for link in lab_fabric.links:
        if link.kind in LLDP_KINDS:
            assert index.cables[(link.a.device, link.a.port)] == cable_id(lab_fabric, link)
    for d in lab_fabric.switches():
        spelled = _Index(lab_fabric)     # a fresh index: nothing shared
        assert {p.name: index.port_id(d, p.name) for p in d.ports} == {p.name: spelled.port_id(d, p.name)
                                                                        for p in d.ports}


def test_the_index_takes_the_kept_cables_ids_as_it_would_make_them(lab_fabric: Fabric, lab_ib_fabric: Fabric,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    from teton.fabric import cables

    for fabric in (lab_fabric, lab_ib_fabric):
        monkeypatch.setattr(cables, "_LAST", [])        # none kept: the index names each cable itself
        made = _Index(fabric).cables
        cables.cables(fabric)                           # kept: the index takes their ids
        assert cables.kept_cables(fabric) is not None
        taken = _Index(fabric).cables
        assert list(taken.items()) == list(made.items())
        monkeypatch.undo()
