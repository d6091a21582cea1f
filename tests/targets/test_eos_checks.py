"""teton.targets.eos.checks: the fast paths give exactly what the slow, explaining paths give."""

from __future__ import annotations

import copy
import ipaddress
import math
import random
from typing import Any

import pytest
import yaml

from teton.targets.eos import checks
from teton.targets.eos.avd import validate_structured_config
from teton.targets.eos.checks import _ipv6_int, _shape_clean, _walk_shape, teton_checks

from .test_eos_avd import DEVICE, example_config


class _Str(str):
    """A str subclass: the checks must treat it as a str."""


def _shapes() -> list[Any]:
    base = example_config()
    cyclic: dict[str, Any] = {"hostname": "x"}
    cyclic["metadata"] = {"again": [cyclic]}
    shared = {"a": 1}
    out: list[Any] = [base, {"eos_cli": "line one\nline two"}, {"eos_cli": ["a\nb"]}, {"x": {"eos_cli": "a\rb"}},
                      {"description": "a\nb"}, {"l": ["ok", "a\rb"]}, {"f": float("nan")}, {"f": float("inf")},
                      {"f": 1.5}, {"t": (1, 2)}, {1: "int key"}, {"s": _Str("sub")}, {"b": True, "n": None},
                      cyclic, {"one": shared, "two": shared}, {"o": object()}, {"motd": {"nested": "a\nb"}}]
    bad = copy.deepcopy(base)
    bad["ethernet_interfaces"][2]["description"] = "x\ny"
    out.append(bad)
    return out


@pytest.mark.parametrize("cfg", _shapes(), ids=lambda c: repr(c)[:40])
def test_the_shape_fast_path_is_clean_only_where_the_walk_finds_nothing(cfg: Any) -> None:
    found = list(_walk_shape(DEVICE, cfg, "", None, set()))
    if found:
        assert not _shape_clean(cfg, False, set())
    assert list(checks._data_shape(DEVICE, cfg)) == found


def test_plain_json_data_takes_the_fast_path() -> None:
    for cfg in (example_config(), {"eos_cli": "a\nb", "b": True, "n": None, "f": 1.5, "l": [[], {}]}):
        assert _shape_clean(cfg, False, set())


def _ipv6_reference(text: str) -> int | None:
    try:
        return int(ipaddress.IPv6Address(text))
    except ValueError:
        return None


def test_the_ipv6_fast_parser_agrees_with_ipaddress_wherever_it_answers() -> None:
    rnd = random.Random(6)
    answered = 0
    for _ in range(50_000):
        groups = ["".join(rnd.choice("0123456789abcdefABCDEF") for _ in range(rnd.randint(0, 5)))
                  for _ in range(rnd.randint(1, 10))]
        text = ":".join(groups)
        if rnd.random() < 0.3:
            text = text.replace(":", "::", 1)
        got = _ipv6_int(text)
        if got is not None:
            answered += 1
            assert got == _ipv6_reference(text), text
    assert answered > 1000
    for text in ("::", "::1", "fe80::1", "2001:db8::", "1:2:3:4:5:6:7:8", "2001:DB8::A"):
        assert _ipv6_int(text) == _ipv6_reference(text)
    for text in ("::ffff:1.2.3.4", "fe80::1%eth0", "1:2:3:4:5:6:7:8:9", "1:::2", "g::1", ""):
        assert _ipv6_int(text) is None


def _v6_config() -> dict[str, Any]:
    cfg = example_config()
    for i, intf in enumerate(cfg["ethernet_interfaces"]):
        intf["ipv6_address"] = f"2001:db8:0:{i:x}::1/64"
    return cfg


def test_ipv6_interface_addresses_overlaps_and_link_local() -> None:
    cfg = _v6_config()
    assert list(teton_checks(DEVICE, cfg)) == []
    cfg["ethernet_interfaces"][1]["ipv6_address"] = "2001:db8:0:0::2/64"   # Ethernet 0's /64
    cfg["ethernet_interfaces"][2]["ipv6_address"] = "2001:db8::/129"
    cfg["ethernet_interfaces"][3]["ipv6_address"] = "2001:db8::1"
    issues = list(teton_checks(DEVICE, cfg))
    assert [i.path for i in issues] == ["ethernet_interfaces[2].ipv6_address", "ethernet_interfaces[3].ipv6_address",
                                        "ethernet_interfaces[1].ipv6_address"]
    assert "overlaps 2001:db8::/64 of ethernet_interfaces[0].ipv6_address" in issues[2].message
    cfg = _v6_config()
    for intf in cfg["ethernet_interfaces"]:
        intf["ipv6_address"] = "fe80::1/64"   # link-local: may repeat
    assert list(teton_checks(DEVICE, cfg)) == []


def test_bgp_neighbour_and_router_id_addresses_of_either_version() -> None:
    cfg = example_config()
    nbrs = cfg["router_bgp"]["neighbors"]
    nbrs[0]["ip_address"] = "2001:db8::1"
    nbrs[1]["ip_address"] = "2001:db8::1::2"
    nbrs[2]["ip_address"] = "10.1.0.01"
    cfg["router_bgp"]["router_id"] = "2001:db8::1"
    assert [i.path for i in validate_structured_config(DEVICE, cfg)] == [
        "router_bgp.router_id", "router_bgp.neighbors[1].ip_address", "router_bgp.neighbors[2].ip_address"]


def test_the_example_has_multiline_eos_cli_and_stays_clean() -> None:
    cfg = yaml.safe_load(yaml.safe_dump(example_config()))
    cfg["eos_cli"] = "interface Loopback9\n   description x\n"
    assert list(teton_checks(DEVICE, cfg)) == []


def _shape_clean_reference(node: Any, multiline_ok: bool, ancestors: set[int]) -> bool:
    """The one-call-per-node walk `_shape_clean` replaced (its leaves now tested in their container's loop)."""
    t = type(node)
    if t is str:
        return multiline_ok or ("\n" not in node and "\r" not in node)
    if t is dict:
        i = id(node)
        if i in ancestors:
            return False
        ancestors.add(i)
        for k, v in node.items():
            if type(k) is not str or not _shape_clean_reference(v, k in checks._MULTILINE_KEYS, ancestors):
                return False
        ancestors.discard(i)
        return True
    if t is list:
        i = id(node)
        if i in ancestors:
            return False
        ancestors.add(i)
        for v in node:
            if not _shape_clean_reference(v, multiline_ok, ancestors):
                return False
        ancestors.discard(i)
        return True
    if t is int or t is bool or node is None:
        return True
    return t is float and math.isfinite(node)


def _has_float(node: Any) -> bool:
    if isinstance(node, dict):
        return any(_has_float(v) for v in node.values())
    if isinstance(node, list | tuple):
        return any(_has_float(v) for v in node)
    return type(node) is float


def _random_shape(rnd: random.Random, depth: int = 0) -> Any:
    kind = rnd.randrange(6 if depth < 5 else 3)
    if kind == 0:
        return rnd.choice(["x", "a\nb", "a\rb", "", _Str("s"), _Str("s\n")])
    if kind == 1:
        return rnd.choice([0, True, None, 1.5, float("nan"), float("inf"), -0.0, 2**70, (1,), object(), b"x"])
    if kind == 2:
        return rnd.choice([[], {}, "plain", 7])
    if kind in (3, 4):
        keys = ["k", "eos_cli", "motd", "description", 1, None] if rnd.random() < 0.1 else ["k", "eos_cli", "n", "x"]
        return {k if i == 0 else f"{k}{i}" if isinstance(k, str) else k: _random_shape(rnd, depth + 1)
                for i, k in enumerate(rnd.choice(keys) for _ in range(rnd.randrange(4)))}
    return [_random_shape(rnd, depth + 1) for _ in range(rnd.randrange(4))]


def test_the_shape_walk_answers_as_the_one_call_per_node_walk_and_says_where_floats_are() -> None:
    rnd = random.Random(44)
    clean = floats = 0
    for _ in range(5000):
        cfg = {"hostname": "x", "data": _random_shape(rnd)}
        if rnd.random() < 0.05:
            cfg["data"] = [cfg, cfg["data"]] if rnd.random() < 0.5 else [cfg["data"], cfg["data"]]
        shape = checks.plain_json(cfg)
        assert bool(shape) == _shape_clean_reference(cfg, False, set()), cfg
        if shape:
            assert shape == checks.PLAIN | (checks.FLOATS if _has_float(cfg) else 0), cfg
            clean += 1
            floats += shape != checks.PLAIN
    assert 500 < clean < 4500 and 100 < floats < clean - 100
    assert checks.plain_json(example_config()) == checks.PLAIN
    assert checks.plain_json({"a": [{"b": [1.5]}]}) == checks.PLAIN | checks.FLOATS
    shapes = [checks.plain_json(x) for x in ("a", "a\nb", 1.5, (1,))]
    assert shapes == [checks.PLAIN, 0, checks.PLAIN | checks.FLOATS, 0]
    assert checks._shape_clean("a\nb", True, set()) == checks.PLAIN
