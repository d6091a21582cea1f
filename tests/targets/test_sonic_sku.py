"""`config qos reload` regenerates a SONiC switch's QoS from its HwSKU files: rendered with the switch's own Config DB
(as sonic-cfggen does), teton's buffers.json.j2 and qos.json.j2 give back exactly the tables of its config_db.json."""

from __future__ import annotations

import json

import jinja2
import pytest

QOS_TABLES = ("DSCP_TO_TC_MAP", "TC_TO_QUEUE_MAP", "TC_TO_PRIORITY_GROUP_MAP", "MAP_PFC_PRIORITY_TO_QUEUE", "SCHEDULER",
              "WRED_PROFILE", "PORT_QOS_MAP", "QUEUE")
BUFFER_TABLES = ("BUFFER_POOL", "BUFFER_PROFILE", "BUFFER_PG", "BUFFER_QUEUE", "CABLE_LENGTH")


def _reload(template: str, db: dict) -> dict:
    return json.loads(jinja2.Environment(undefined=jinja2.StrictUndefined).from_string(template).render(**db))


@pytest.mark.parametrize("variant", ["lab_build", "lab_dcqcn_build"])
def test_a_qos_reload_gives_back_the_rendered_tables_on_every_rack_switch(variant, request):
    build = request.getfixturevalue(variant)
    sku = build / "sku" / "Facebook-Minipack2-64x400G"
    buffers, qos = (sku / "buffers.json.j2").read_text(), (sku / "qos.json.j2").read_text()
    switches = sorted((build / "devices").glob("*-rtsw/config_db.json"))
    assert len(switches) == 4
    for path in switches:
        db = json.loads(path.read_text())
        assert ("WRED_PROFILE" in db) == (variant == "lab_dcqcn_build")      # ECN only in the DCQCN variant
        assert _reload(buffers, db) == {t: db[t] for t in BUFFER_TABLES}, path
        assert _reload(qos, db) == {t: db[t] for t in QOS_TABLES if t in db}, path
    # config_db.json has no room for a comment: the HwSKU's template says SONiC cannot hash the destination QP
    assert "never the RoCE BTH's destination QP" in qos and "16 QPs per GPU pair" in qos


def test_the_lookup_table_lists_every_speed_and_standard_cable(lab_build):
    rows = [r.split() for r in (lab_build / "sku/Facebook-Minipack2-64x400G/pg_profile_lookup.ini").read_text()
            .splitlines() if not r.startswith("#")]
    assert {(r[0], r[1]) for r in rows} == {("400000", "5m"), ("400000", "40m"), ("400000", "300m")}
    db = json.loads((lab_build / "devices/z01-r001-rtsw/config_db.json").read_text())
    assert {r[4] for r in rows if r[1] == "5m"} == {db["BUFFER_PROFILE"]["pg_lossless_400000_5m_profile"]["xoff"]}
