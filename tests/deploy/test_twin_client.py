"""A gate on the twin fails with one line that says what did not hold, the front end included."""

from __future__ import annotations

from teton.deploy.twin_client import verify_summary
from teton.expect import Failures, PingProbe
from teton.twin.reports import BgpCheck, EcmpCheck, PingCheck, VerifyReport


def test_a_front_end_that_no_longer_reaches_storage_fails_the_gate_by_name():
    lost = PingProbe("z01-r001-h1", "10.192.0.1", "s1-r01-sp01", "10.192.0.41")
    report = VerifyReport(
        twin="lab", ok=False, failures=Failures(), unchecked=(),
        bgp=BgpCheck(expected_sessions=168, established=168, mismatched=(), seconds=0.0),
        same_rail_ping=PingCheck(pinged=448, of=448, failed=(), hosts=8, seconds=0.0),
        ecmp=EcmpCheck(checked=150, mismatched=(), seconds=0.0), eos_as_frr=(),
        frontend_ping=PingCheck(pinged=56, of=56, failed=(lost,), hosts=8, seconds=0.0))
    assert verify_summary(report) == ("twin verify of lab: 1/56 front-end pings failed "
                                      "(z01-r001-h1 -> s1-r01-sp01)")
