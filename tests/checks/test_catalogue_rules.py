"""A switch model must be a switch that can exist: lanes x lane speed, SerDes count and ASIC capacity agree."""

from __future__ import annotations

import pytest

from teton.catalogue import builtin_models
from teton.checks.catalogue_rules import model_consistent
from teton.spec.model import Cluster


def _findings(lab_data, model: dict) -> list:
    lab_data["switch_models"] = [model]
    return list(model_consistent(Cluster.model_validate(lab_data), "s.yaml"))


def _model(**changes) -> dict:
    base = {"name": "m", "vendor": "x", "asic": "Tomahawk4", "asic_tbps": 25.6, "port_naming": "sonic",
            "serdes": 512, "serdes_gbps": 50, "nos": ["sonic"],
            "port_groups": [{"count": 64, "speed_gbps": 400, "lanes": 8, "form_factor": "QSFP-DD"}]}
    return {**base, **changes}


def test_every_builtin_model_is_consistent(lab_data):
    for name, m in builtin_models().items():
        assert m.serdes is not None and m.serdes_gbps is not None, name
        assert _findings(lab_data, m.model_dump(mode="json")) == [], name


def test_the_old_minipack2_map_cannot_exist(lab_data):
    """128 x 400G of 4 lanes on Tomahawk4's 512 x 50G: 200G ports, 51.2 Tb/s on a 25.6 Tb/s ASIC."""
    found = _findings(lab_data, _model(port_groups=[{"count": 128, "speed_gbps": 400, "lanes": 4,
                                                      "form_factor": "QSFP-DD"}]))
    messages = " | ".join(f.message for f in found)
    assert "a 400G port of 4 lanes of 50G runs at 200G" in messages
    assert "add up to 51.2 Tb/s but the Tomahawk4 switches 25.6 Tb/s" in messages
    assert {f.path for f in found} == {"switch_models[0].port_groups[0]", "switch_models[0]"}


def test_more_lanes_than_the_asic_has(lab_data):
    (f,) = _findings(lab_data, _model(serdes=256, asic_tbps=51.2))
    assert "take 512 lanes but the Tomahawk4 has 256 SerDes" in f.message and f.rule == "catalogue"


@pytest.mark.parametrize("oversubscribed,expected", [(False, 1), (True, 0)])
def test_a_front_panel_above_the_asic_must_say_it_is_oversubscribed(lab_data, oversubscribed, expected):
    found = _findings(lab_data, _model(asic_tbps=12.8, oversubscribed=oversubscribed))
    assert len(found) == expected


def test_a_builtin_model_a_tier_uses_is_checked_at_the_tier(lab_data, monkeypatch):
    broken = builtin_models()["minipack2"].model_copy(update={"serdes_gbps": 25})
    monkeypatch.setitem(builtin_models(), "minipack2", broken)
    found = list(model_consistent(Cluster.model_validate(lab_data), "s.yaml"))
    assert [f.path for f in found] == ["backend.rtsw.model"] and "(built-in)" in found[0].message
