"""The twin's answers are records; their `to_json()` is what `teton twin ... --json` prints, with the keys it
always had."""

from __future__ import annotations

from teton.expect import EcmpMismatch, EcmpProbe, Failures, PingProbe, RackPaths, SessionMismatch
from teton.twin.reports import (
    BgpCheck,
    DownResult,
    EcmpCheck,
    FailResult,
    PingCheck,
    Reconvergence,
    RestoreResult,
    VerifyReport,
)

ECMP = EcmpMismatch(EcmpProbe(switch="s1", towards="r2", prefix="10.0.0.0/27", width=4), got=3)


def test_verify_json_keeps_its_keys_and_shapes():
    r = VerifyReport(
        twin="lab", ok=False, failures=Failures(devices=("c1",)), unchecked=(),
        bgp=BgpCheck(expected_sessions=10, established=8, mismatched=(SessionMismatch("s1", 0, 2),), seconds=0.1),
        same_rail_ping=PingCheck(pinged=4, of=8, failed=(PingProbe("h1", "10.0.0.1", "h2", "10.0.0.2"),), hosts=2,
                                 seconds=0.2),
        ecmp=EcmpCheck(checked=5, mismatched=(ECMP,), seconds=0.3), eos_as_frr=("c2",))
    assert r.to_json() == {
        "twin": "lab", "ok": False, "failures": {"devices": ["c1"], "links": []}, "unchecked": [],
        "bgp": {"expected_sessions": 10, "established": 8, "mismatched": {"s1": {"established": 0, "expected": 2}},
                "seconds": 0.1},
        "same_rail_ping": {"pinged": 4, "of": 8, "failed": [{"from": "h1", "src": "10.0.0.1", "to": "h2",
                                                             "dst": "10.0.0.2"}], "hosts": 2, "seconds": 0.2},
        "ecmp": {"checked": 5, "mismatched": [{"switch": "s1", "prefix": "10.0.0.0/27", "towards": "r2",
                                              "expected": 4, "got": 3}], "seconds": 0.3},
        "frontend_ping": None, "eos_as_frr": ["c2"]}
    front = PingCheck(pinged=2, of=2, failed=(), hosts=2, seconds=0.1)
    assert VerifyReport(**{**r.__dict__, "frontend_ping": front}).to_json()["frontend_ping"] == {
        "pinged": 2, "of": 2, "failed": [], "hosts": 2, "seconds": 0.1}


def test_fail_json_says_what_lost_paths_and_whether_it_was_survived():
    rc = Reconvergence(sessions_settled_s=0.1, ecmp_settled_s=0.5, ecmp_mismatched=())
    fewer = RackPaths("r1", "r2", 2, 1)
    ok = FailResult(twin="lab", failed="f1", how="kill", reconvergence=rc, lost=(fewer,), probed=10)
    assert ok.survived and ok.to_json() == {
        "twin": "lab", "failed": "f1", "how": "kill", "survived": True,
        "summary": "1 rack pairs lost paths (0 of them every path); 10 of 10 pings answered after it settled",
        "lost_paths": [{"rack": "r1", "towards": "r2", "paths": "2 -> 1"}], "unreached": [],
        "reconvergence": {"sessions_settled_s": 0.1, "ecmp_settled_s": 0.5, "ecmp_mismatched": []}}
    cut = FailResult(twin="lab", failed="f1", how="kill", reconvergence=rc, lost=(RackPaths("r1", "r3", 2, 0),),
                     probed=10, unreached=(PingProbe("h1", "10.0.0.1", "s1", "10.0.1.1"),))
    assert not cut.survived and cut.to_json()["unreached"] == [
        {"from": "h1", "src": "10.0.0.1", "to": "s1", "dst": "10.0.1.1"}]
    assert not FailResult(twin="lab", failed="f1", how="kill", reconvergence=rc, lost=(RackPaths("r1", "r3", 2, 0),),
                          probed=10).survived      # a rack cut off is not survived, even with every ping answered


def test_restore_and_down_json():
    rc = Reconvergence(sessions_settled_s=1.0, ecmp_settled_s=2.0, ecmp_mismatched=())
    r = RestoreResult(twin="lab", restored=Failures(links=(("a:1", "b:2"),)), restarted=("c3",), reconvergence=rc)
    assert r.to_json() == {"twin": "lab", "restored": {"devices": [], "links": [["a:1", "b:2"]]},
                           "restarted": ["c3"], "reconvergence": {"sessions_settled_s": 1.0, "ecmp_settled_s": 2.0,
                                                                  "ecmp_mismatched": []}, "uncrossed": []}
    assert DownResult(twin="lab", stopped=True, leftovers_removed=("netns x",)).to_json() == {
        "twin": "lab", "stopped": True, "leftovers_removed": ["netns x"]}
