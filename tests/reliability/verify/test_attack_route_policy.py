"""Attack: a route map whose clauses all match one long prefix list.  `teton verify` keyed each clause by a copy of
every rule of its lists and evaluated the list again for each clause: 2,000 clauses x 2,000 rules (a 230 KB
frr.conf) took 52 s (141 s on a loaded CI box); 100k rules x 5,000 clauses (6.5 MB) was a MemoryError at 3.7 GB.
A prefix list is one shared `Rules` however many clauses match it, evaluated once per table in bounded blocks of
rules x prefixes: 2.9 s and 196 MiB, and 4.1 s and 250 MiB (the whole `teton verify` of the lab, measured)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time

import pytest

from tests.helpers import LAB, ROOT
from teton.fabric.bgpview import PrefixListView, PrefixRule, RouteMapClause, RouteMapView
from teton.pipeline import build
from teton.verify import policy
from teton.verify.policy import DENY, PrefixTable, Prepends, evaluate, map_key, permits_scalar

TETON = ROOT / ".venv" / "bin" / "teton"
MEASURE = """
import resource, subprocess, sys, time
t = time.monotonic()
r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=300)
took = time.monotonic() - t
print(r.returncode, round(took, 3), resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.stderr.write(r.stdout[-2000:] + r.stderr[-2000:])
"""
SWITCH = "s1-r01-frsw"


def _inflate(folder, rules, clauses):
    """SWITCH's ORIGINATE_V4 grown by `rules` deny lines, its EXPORT_V4 by `clauses` clauses matching it."""
    conf = folder / "devices" / SWITCH / "frr.conf"
    text = conf.read_text()
    lines = "\n".join(f"ip prefix-list ORIGINATE_V4 seq {100 + k} deny 172.{16 + (k >> 16) % 16}.{(k >> 8) & 255}."
                      f"{k & 255}/32" for k in range(rules))
    maps = "\n".join(f"route-map EXPORT_V4 permit {100 + k}\n match ip address prefix-list ORIGINATE_V4\n!"
                     for k in range(clauses))
    text = text.replace("ip prefix-list ORIGINATE_V4 seq 20", f"{lines}\nip prefix-list ORIGINATE_V4 seq 20", 1)
    conf.write_text(f"{text}\n{maps}\n")


@pytest.fixture(scope="module")
def lab_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("route-policy-attack") / "build"
    build(LAB, out, force=True)
    return out


@pytest.mark.parametrize(("rules", "clauses", "seconds"), [(2_000, 2_000, 30), (100_000, 5_000, 60)],
                         ids=["2k-rules-x-2k-clauses", "100k-rules-x-5k-clauses"])
def test_verify_cost_grows_as_clauses_plus_rules(lab_build, tmp_path, rules, clauses, seconds):
    folder = tmp_path / "b"
    shutil.copytree(lab_build, folder)
    _inflate(folder, rules, clauses)
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'infra'}:{ROOT}", "TETON_CACHE": "off"}
    res = subprocess.run([sys.executable, "-c", MEASURE, str(TETON), "verify", str(folder), "--dask", "off"],
                         capture_output=True, text=True, env=env, timeout=400, check=True)
    code, took, rss_kib = res.stdout.split()
    assert int(code) == 0, res.stderr
    assert "every assertion holds" in res.stderr
    assert int(rss_kib) * 1024 < 1024**3, f"peak RSS {int(rss_kib) >> 10} MiB"
    assert float(took) < seconds, f"took {took} s"      # generous: the box is shared; measured 2.9 s and 4.1 s


def test_route_policy_of_2000_clauses_over_2000_rules_takes_well_under_a_second_or_two():
    rules = tuple(PrefixRule(k, False, f"172.16.{k >> 8}.{k & 255}/32") for k in range(2_000))
    plist = PrefixListView("BIG", "ipv4", (*rules, PrefixRule(9_999, True, "10.0.0.0/8", le=32)))
    rm = RouteMapView("OUT", tuple(RouteMapClause(k, True, ("BIG",)) for k in range(2_000)))
    table = PrefixTable("ipv4", [f"10.{k >> 8}.{k & 255}.0/24" for k in range(5_000)])
    t = time.monotonic()
    key = map_key("OUT", {"OUT": rm}, {"BIG": plist})
    out = evaluate(table, key, Prepends())
    assert time.monotonic() - t < 2.0
    assert (out == 0).all()
    assert key[0][2][0] is key[-1][2][0]          # one list, shared by every clause


def _text(value, plen, family):
    if family == "ipv4":
        return f"{value >> 24}.{(value >> 16) & 255}.{(value >> 8) & 255}.{value & 255}/{plen}"
    import ipaddress

    return f"{ipaddress.IPv6Address(value).compressed}/{plen}"


def _random_prefix(rng, bits, under=None):
    """A random network (inside `under`, a (value, length), when given)."""
    plen = rng.randint(under[1] if under else 0, bits)
    value = rng.getrandbits(bits)
    if under:
        value = under[0] | (value & ((1 << (bits - under[1])) - 1))
    return value & ~((1 << (bits - plen)) - 1), plen


def _random_rule(rng, seq, family, table):
    """A rule around one of the table's prefixes (shortened: it covers it), with ge/le now and then."""
    bits = 32 if family == "ipv4" else 128
    value, plen = rng.choice(table)
    plen = max(0, plen - rng.choice([0, 0, 0, 1, 2, 4, 9, 40]) if rng.random() < 0.97 else 0)
    value &= ~((1 << (bits - plen)) - 1)
    ge = rng.choice([None, None, min(bits, plen + rng.randint(0, 8))])
    le = rng.choice([None, None, min(bits, max(ge or plen, plen) + rng.randint(0, 16))])
    return PrefixRule(seq, rng.random() < 0.5, _text(value, plen, family), ge, le)


@pytest.mark.parametrize("block", [None, 2_000], ids=["one-block", "blocks-of-5-rules"])
@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
def test_the_blocked_evaluation_decides_as_the_rule_by_rule_one(family, block, monkeypatch):
    """`evaluate` (arrays, blocks of rules) and `permits_scalar` (rule by rule, in Python) agree on random lists."""
    if block is not None:
        monkeypatch.setattr(policy, "_BLOCK", block)
    rng = random.Random(34)
    bits = 32 if family == "ipv4" else 128
    bases = [_random_prefix(rng, bits) for _ in range(3)]
    table = [_random_prefix(rng, bits, rng.choice(bases) if rng.random() < 0.9 else None) for _ in range(400)]
    prefixes = [_text(v, n, family) for v, n in table]
    plists = {f"L{i}": PrefixListView(f"L{i}", family, tuple(_random_rule(rng, s, family, table) for s in range(60)))
              for i in range(4)}
    clauses = tuple(RouteMapClause(k, rng.random() < 0.7, tuple(rng.sample([*sorted(plists), "MISSING"],
                                                                          rng.choice([0, 1, 1, 1, 2]))))
                    for k in range(12))
    key = map_key("M", {"M": RouteMapView("M", clauses)}, plists)
    got = {p for p, v in zip(prefixes, evaluate(PrefixTable(family, prefixes), key, Prepends()), strict=True)
           if v != DENY}
    assert got == set(permits_scalar(prefixes, family, key))
    assert 0 < len(got) < len(prefixes)
