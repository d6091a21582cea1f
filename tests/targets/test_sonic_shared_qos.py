"""`shared_qos_tables` hands switches with the same QoS intents and cabled ports one set of QoS and buffer dicts
(the render's `config_db(..., shared=True)`): the same text as `qos_tables` builds afresh, for every SONiC switch of the
lab and for random ports, and the reference's own where the key cannot stand for the content (a speed that is no
int)."""

from __future__ import annotations

import json
import random
from dataclasses import replace

from teton.targets import get
from teton.targets.sonic import qos
from teton.targets.sonic.config_db import config_db


def _text(db: dict) -> str:
    return json.dumps(db)       # key order included


def test_shared_config_db_is_the_reference_on_every_lab_switch(lab_fabric):
    devices = get("sonic").devices(lab_fabric)
    assert devices
    for d in devices + devices:        # the second pass hits the cache
        model = lab_fabric.models[d.model]
        assert _text(config_db(d, model, shared=True)) == _text(config_db(d, model))


def test_shared_tables_are_reused_only_for_the_same_ports(lab_fabric):
    d = next(d for d in get("sonic").devices(lab_fabric) if d.qos is not None and d.interfaces)
    buffering = lab_fabric.models[d.model].buffering
    first = qos.shared_qos_tables(d, d.qos, d.buffers, buffering)
    assert qos.shared_qos_tables(d, d.qos, d.buffers, buffering) is first
    kinds = sorted({(i.speed_gbps, i.medium) for i in d.interfaces})      # those the buffers have profiles of
    rng = random.Random(7)
    seen = set()
    for _ in range(200):
        ports = list(d.interfaces)
        rng.shuffle(ports)
        ports = ports[:rng.randint(1, 3)]
        speed, medium = rng.choice(kinds)
        ports[0] = ports[0]._replace(speed_gbps=speed, medium=medium)
        other = replace(d, interfaces=tuple(ports))
        got = qos.shared_qos_tables(other, d.qos, d.buffers, buffering)
        assert _text(got) == _text(qos.qos_tables(other, d.qos, d.buffers, buffering))
        seen.add(id(got))
    assert len(seen) < 200      # some were hits


def test_a_speed_that_is_no_int_is_not_keyed(lab_fabric):
    d = next(d for d in get("sonic").devices(lab_fabric) if d.qos is not None and d.interfaces)
    buffering = lab_fabric.models[d.model].buffering
    i = d.interfaces[0]
    as_float = replace(d, interfaces=(i._replace(speed_gbps=float(i.speed_gbps)),))
    as_int = replace(d, interfaces=(i,))
    assert _text(qos.shared_qos_tables(as_int, d.qos, d.buffers, buffering)) == _text(
        qos.qos_tables(as_int, d.qos, d.buffers, buffering))
    assert _text(qos.shared_qos_tables(as_float, d.qos, d.buffers, buffering)) == _text(
        qos.qos_tables(as_float, d.qos, d.buffers, buffering))
    assert qos.shared_qos_tables(as_float, d.qos, d.buffers, buffering) is not qos.shared_qos_tables(
        as_float, d.qos, d.buffers, buffering)     # built afresh each time
