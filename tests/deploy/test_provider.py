"""The provider's hot path (Check, Diff) and its detailed diff, called directly (the engine calls them over gRPC in
tests/deploy/test_pulumi_e2e.py)."""

from __future__ import annotations

from google.protobuf import struct_pb2
from pulumi.runtime.proto import provider_pb2

from teton.deploy.provider import GATE, SWITCH, Provider

NONE, SOME = provider_pb2.DiffResponse.DIFF_NONE, provider_pb2.DiffResponse.DIFF_SOME


def struct(d):
    s = struct_pb2.Struct()
    s.update(d)
    return s


SW = {"device": "z01-r001-rtsw", "nos": "sonic", "wave": 0, "transport": "twin", "twin": "lab", "build": "/b",
      "files": {"frr.conf": "a\nb\n", "config_db.json": "{}\n"}}


def diff(olds, news, outputs=None):
    req = provider_pb2.DiffRequest(type=SWITCH, urn=f"urn:pulumi:s::p::{SWITCH}::x", olds=struct(outputs or olds),
                                   news=struct(news), old_inputs=struct(olds))
    return Provider().Diff(req, None)


def test_unchanged_inputs_are_no_change():
    assert diff(SW, dict(SW)).changes == NONE


def test_a_changed_file_is_one_detailed_diff_entry_on_that_file():
    news = {**SW, "files": {**SW["files"], "frr.conf": "a\nc\n"}}
    r = diff(SW, news)
    assert r.changes == SOME and list(r.diffs) == ['files["frr.conf"]']
    assert r.detailedDiff['files["frr.conf"]'].kind == provider_pb2.PropertyDiff.UPDATE
    assert r.detailedDiff['files["frr.conf"]'].inputDiff


def test_descriptive_inputs_do_not_push():
    assert diff(SW, {**SW, "wave": 3, "build": "/elsewhere"}).changes == NONE


def test_drift_recorded_by_refresh_is_a_change():
    r = diff(SW, SW, outputs={**SW, "drift": ["- neighbor X remote-as 1"]})
    assert r.changes == SOME and list(r.diffs) == ["drift"]


def test_gate_changes_with_its_digest_only():
    g = {"wave": 1, "name": "rtsw-01", "devices": ["a"], "digest": "x", "transport": "twin", "twin": "lab"}
    req = provider_pb2.DiffRequest(type=GATE, olds=struct(g), news=struct({**g, "digest": "y"}), old_inputs=struct(g))
    assert Provider().Diff(req, None).changes == SOME


def test_check_returns_the_inputs_as_they_came():
    big = {**SW, "files": {"config_db.json": "x" * 64_000, "frr.conf": "y" * 3_000}}
    req = provider_pb2.CheckRequest(olds=struct(big), news=struct(big))
    assert Provider().Check(req, None).inputs == struct(big)
