"""The twin as a deploy gate sees it: `teton twin verify` of the whole twin, answered as the problems a gate fails on.

A gate after a wave on the twin (`teton.deploy.orchestration`) checks everything the design promises the running
fabric shows (`teton.expect`, through `teton.twin.service.verify`), not only the wave's switches: a wave can break
a switch it did not touch.
"""

from __future__ import annotations

from teton.twin.reports import VerifyReport


def verify_problems(twin: str) -> list[str]:
    """Empty when the twin `twin` keeps every promise of its design; else one line that says what did not hold."""
    from teton.twin import service

    report = service.verify(twin)
    return [] if report.ok else [verify_summary(report)]


def verify_summary(report: VerifyReport) -> str:
    bgp, ping, ecmp = report.bgp, report.same_rail_ping, report.ecmp
    parts = []
    if bgp.mismatched:
        parts.append(f"BGP {bgp.established}/{bgp.expected_sessions} sessions "
                     f"({', '.join(sorted(m.switch for m in bgp.mismatched)[:4])})")
    if ping.failed:
        parts.append(f"{len(ping.failed)}/{ping.pinged} same-rail pings failed")
    if report.frontend_ping is not None and report.frontend_ping.failed:
        front = report.frontend_ping
        parts.append(f"{len(front.failed)}/{front.pinged} front-end pings failed "
                     f"({', '.join(sorted({f'{p.host} -> {p.peer}' for p in front.failed})[:3])})")
    if ecmp.mismatched:
        parts.append(f"{len(ecmp.mismatched)} ECMP widths off the design")
    if report.unchecked:
        parts.append("nothing probed: " + ", ".join(report.unchecked))
    return f"twin verify of {report.twin}: " + ("; ".join(parts) or "not ok")
