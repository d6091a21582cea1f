"""teton.targets.eos.avd._pyavd_validate: pyavd's validation from orjson's text of the config gives exactly what
``pyavd.validate_structured_config`` gives (validated data with its types and key order, violations, deprecations),
and the configs it cannot prove the same for go to pyavd's function."""

from __future__ import annotations

import copy
import json
from typing import Any

import pyavd
import pytest

from teton.fabric.model import Fabric
from teton.targets.eos import avd
from teton.targets.eos.checks import PLAIN, plain_json
from teton.targets.eos.structured import structured_config


def _result(r: Any) -> tuple[Any, ...]:
    vr = r.validation_result
    return (json.dumps(r.validated_data), [(v.path, v.message) for v in vr.violations],
            [(d.path, d.message, d.removed, d.version, d.replacement, d.url) for d in vr.deprecations])


def _variants(cfg: dict[str, Any]) -> list[dict[str, Any]]:
    """`cfg`, and copies of it with violations, deprecations, type coercions and non-ASCII text."""
    bad = copy.deepcopy(cfg)
    eth = bad["ethernet_interfaces"]
    eth[0]["mtu"] = "abc"
    eth[0]["ipv6_address"] = "fd00::1/64"              # deprecated
    eth[-1]["speed"] = 5
    eth[-1]["bogus"] = {"x": [1, "é☃", "\U0001F600", "\x00\x1f\\\"/"]}
    bad["router_bgp"]["as"] = 65000                     # int -> str
    bad["router_bgp"]["timers"] = 7
    bad["spanning_tree"]["mode"] = "pvst"
    bad["access_lists"] = [{"name": "A", "sequence_numbers": [{"sequence": "10", "action": "permit ip any any"}]}]
    bad["hostname"] = "h\u00e9"
    bad["vlan_interfaces"] = [{"name": "Vlan1", "ip_address": 5, "mtu": None, "description": ""}]
    empty = {"hostname": "x", "ethernet_interfaces": [], "router_bgp": {}, "vrfs": [{}]}
    return [cfg, bad, empty, {"hostname": 2**63 - 1, "ip_routing": 1}]


def _assert_same(cfgs: list[dict[str, Any]]) -> int:
    fast = 0
    for cfg in cfgs:
        for c in _variants(cfg):
            clean = plain_json(c)
            assert _result(avd._pyavd_validate(c, clean)) == _result(pyavd.validate_structured_config(c))
            fast += clean == PLAIN
    return fast


def test_every_lab_switch_validates_as_pyavd_validates_it(lab_fabric: Fabric) -> None:
    cfgs = [structured_config(lab_fabric, d) for d in lab_fabric.switches("eos")]
    assert _assert_same(cfgs) == 4 * len(cfgs)   # all through orjson's text
    deprecated = pyavd.validate_structured_config(_variants(cfgs[0])[1]).validation_result.deprecations
    assert len(deprecated) == 2


@pytest.mark.scale24k
def test_a_sample_of_the_24k_switches_validates_as_pyavd_validates_it() -> None:
    from tests.helpers import REF24K
    from teton.pipeline import load_and_design

    fabric = load_and_design(REF24K).fabric
    cfgs = [structured_config(fabric, d) for d in fabric.switches("eos")[::12]]
    assert _assert_same(cfgs) == 4 * len(cfgs)


@pytest.mark.parametrize("cfg", [{"hostname": "x", "f": 1.5}, {"hostname": "x", "l": [1e16]}, {"n": 2**64},
                                 {"s": "\ud800"}, {"t": (1, 2)}, {1: "int key"}, {"d": float("nan")},
                                 {"s": "line\nbreak"}], ids=repr)
def test_what_orjson_may_write_differently_goes_to_pyavds_function(cfg: dict[str, Any],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    want = avd.validated_structured_config("x", cfg)
    monkeypatch.setattr(avd, "_text_validator", lambda: lambda text: pytest.fail(f"orjson's text: {text}"))
    assert avd.validated_structured_config("x", cfg) == want


def test_a_plain_config_takes_orjsons_text_unless_pyavds_function_was_replaced(
        monkeypatch: pytest.MonkeyPatch) -> None:
    texts = []
    validate = avd._text_validator()
    assert validate is not None
    monkeypatch.setattr(avd, "_text_validator", lambda: lambda text: texts.append(text) or validate(text))
    cfg = {"hostname": "x", "router_bgp": {"as": 65000}, "d": "é"}
    issues, validated = avd.validated_structured_config("x", cfg)
    assert texts == ['{"hostname":"x","router_bgp":{"as":65000},"d":"é"}']
    assert validated == {"hostname": "x", "router_bgp": {"as": "65000"}, "d": "é"}
    monkeypatch.setattr(pyavd, "validate_structured_config", lambda c: texts.append("public") or validate(
        json.dumps(c)))
    avd.validated_structured_config("x", cfg)
    assert texts[1:] == ["public"]


@pytest.mark.parametrize("cfg", [
    {"hostname": "x", "spanning_tree": {"mode": "pvsté☃\U0001F600"}},            # a violation quoting non-ASCII
    {"hostname": "é", "router_bgp": {"as": "x\u2028y"}},
    {"hostname": "x", "ethernet_interfaces": [{"name": "E1", "mtu": 2**64 - 1}]},  # orjson's largest int
    {"hostname": "x", "ethernet_interfaces": [{"name": "E1", "mtu": -2**63, "description": "\x00\x1f\"\\/"}]},
], ids=repr)
def test_edge_values_through_orjsons_text_validate_as_pyavd_validates_them(cfg: dict[str, Any]) -> None:
    assert plain_json(cfg) == PLAIN
    assert _result(avd._pyavd_validate(cfg, PLAIN)) == _result(pyavd.validate_structured_config(cfg))
