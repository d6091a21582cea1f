"""Rules over the intent of a spec: values each valid on its own that together cannot work.

QoS classes that collide, ECN thresholds upside down, BGP timers a NOS rejects, zones with nothing between them,
address pools that hand out the same addresses twice.  Each rule is a small named function `(Cluster, file)`.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator

from teton.findings import Finding
from teton.spec.model import Addressing, Cluster, RoceBackend, RoceQos

QOS = "backend.qos"
TIMERS = "backend.bgp.timers"
MIN_HOLD_S = 3  # FRR (`timers bgp`) and EOS reject hold times of 1-2 s; 0 turns keepalives off


def qos_conflict(c: Cluster, file: str) -> Iterator[Finding]:
    """RoCE and CNP share a DSCP or a priority, a class sits in best-effort priority 0, or ECN min >= max."""
    if not isinstance(c.backend, RoceBackend):
        return
    q = c.backend.qos
    if q.roce_dscp == q.cnp_dscp:
        yield Finding(file, f"{QOS}.cnp_dscp", f"CNP DSCP {q.cnp_dscp} is also the RoCE DSCP (roce_dscp): RoCE data "
                      f"would be classified into the CNP queue (priority {q.cnp_priority}, strict, lossy) instead of "
                      f"lossless priority {q.lossless_priority}; give CNPs their own DSCP (48 is usual)", rule="qos")
    if q.lossless_priority == 0:
        yield Finding(file, f"{QOS}.lossless_priority", "lossless priority 0 is the best-effort traffic class that "
                      "every other DSCP maps to: PFC on it would make all traffic lossless (pause storms, "
                      "head-of-line blocking); use a priority of its own (3 is usual)", rule="qos")
    if q.cnp_priority == 0:
        yield Finding(file, f"{QOS}.cnp_priority", "CNP priority 0 is the best-effort traffic class that every other "
                      "DSCP maps to: congestion notifications would queue behind bulk traffic and the senders would "
                      "slow down late; use a strict-priority class of its own (6 is usual)", rule="qos")
    if q.lossless_priority == q.cnp_priority != 0:
        yield Finding(file, f"{QOS}.cnp_priority", f"CNP priority {q.cnp_priority} is also the lossless priority "
                      f"(lossless_priority): CNPs would share the PFC-paused RoCE queue and be held up by the "
                      f"congestion they report; use a different priority (6 is usual)", rule="qos")
    for n, t in enumerate(q.ecn_thresholds):
        if t.min_bytes >= t.max_bytes:
            msg = (f"ECN minimum threshold {t.min_bytes} bytes is not below the maximum {t.max_bytes} bytes "
                   f"({t.speed_gbps}G, {t.buffer} buffer): WRED/ECN marking needs min < max")
            if q.ecn:
                yield Finding(file, f"{QOS}.ecn_thresholds[{n}].min_bytes", msg, rule="qos")
            else:
                yield Finding(file, f"{QOS}.ecn_thresholds[{n}].min_bytes", msg + "; not an error while ecn is false "
                              "(the thresholds are rendered only when ecn is true), but it will be once ECN is turned "
                              "on", rule="qos", severity="warning")
    yield from _control_class(q, file)
    yield from _scheduling(q, file)


def _control_class(q: RoceQos, file: str) -> Iterator[Finding]:
    """The control class (NCCL's CTS messages) needs a DSCP and a priority of its own."""
    for other, dscp in (("roce_dscp", q.roce_dscp), ("cnp_dscp", q.cnp_dscp)):
        if q.control_dscp == dscp:
            yield Finding(file, f"{QOS}.control_dscp", f"control DSCP {dscp} is also {other}: the collective's "
                          "control messages would not get a class of their own (46 is usual)", rule="qos")
    for other, prio in (("lossless_priority", q.lossless_priority), ("cnp_priority", q.cnp_priority), ("", 0)):
        if q.control_priority == prio:
            yield Finding(file, f"{QOS}.control_priority", f"control priority {prio} is also "
                          f"{other or 'best effort (0)'}: clear-to-send messages would queue behind the data they "
                          "admit; give them a strict-priority class of their own (5 is usual)", rule="qos")


def _scheduling(q: RoceQos, file: str) -> Iterator[Finding]:
    """Strict classes above the lossless one (EOS makes every queue below a round-robin queue round robin), and a
    round-robin share left for best effort."""
    for name, prio in (("cnp_priority", q.cnp_priority), ("control_priority", q.control_priority)):
        if 0 < prio < q.lossless_priority:
            yield Finding(file, f"{QOS}.{name}", f"priority {prio} is below the lossless priority "
                          f"{q.lossless_priority}: its queue would be round robin on EOS (every queue below a "
                          "round-robin queue is), not strict; use a priority above the lossless one", rule="qos")
    idle = q.lossless_priority - 1 - sum(0 < p < q.lossless_priority for p in {q.cnp_priority, q.control_priority})
    if q.lossless_priority and q.lossless_weight + max(idle, 0) >= 100:
        yield Finding(file, f"{QOS}.lossless_weight", f"lossless weight {q.lossless_weight} % leaves nothing for "
                      f"best effort beside {max(idle, 0)} idle round-robin queue(s) of 1 % each", rule="qos")


def bgp_timers(c: Cluster, file: str) -> Iterator[Finding]:
    """Hold time 1-2 s, keepalive above the hold time, keepalives on with no hold time or the reverse."""
    if not isinstance(c.backend, RoceBackend):
        return
    t = c.backend.bgp.timers
    ka, hold = t.keepalive, t.hold
    if 0 < hold < MIN_HOLD_S:
        yield Finding(file, f"{TIMERS}.hold", f"hold time {hold} s: it must be 0 (no keepalives) or at least "
                      f"{MIN_HOLD_S} s; FRR and EOS reject 1-2 s and the session would not be configured",
                      rule="bgp-timers")
    if hold == 0 and ka != 0:
        yield Finding(file, f"{TIMERS}.keepalive", f"keepalive {ka} s with hold time 0 (keepalives off): set "
                      f"keepalive to 0 as well, or a hold time of at least {MIN_HOLD_S} s", rule="bgp-timers")
    elif ka == 0 and hold != 0:
        yield Finding(file, f"{TIMERS}.keepalive", f"keepalive 0 (none sent) with hold time {hold} s: the peers "
                      f"would drop the session every {hold} s; set a keepalive of at most a third of the hold time, "
                      f"or hold 0 to turn both off", rule="bgp-timers")
    elif ka > hold:
        yield Finding(file, f"{TIMERS}.keepalive", f"keepalive {ka} s exceeds the hold time {hold} s: the session "
                      f"would expire between keepalives", rule="bgp-timers")
    elif hold >= MIN_HOLD_S and 3 * ka > hold:
        yield Finding(file, f"{TIMERS}.keepalive", f"keepalive {ka} s is more than a third of the hold time {hold} "
                      f"s: one lost keepalive can drop the session (RFC 4271 suggests hold = 3 x keepalive)",
                      rule="bgp-timers", severity="warning")


def zones_disconnected(c: Cluster, file: str) -> Iterator[Finding]:
    """Several zones and no aggregation switches: nothing joins the zones' CTSWs."""
    if isinstance(c.backend, RoceBackend) and c.zones > 1 and c.backend.atsw.count == 0:
        yield Finding(file, "backend.atsw.count", f"{c.zones} zones and no aggregation switches: the zones' CTSWs "
                      f"have no uplinks, so GPUs in different zones cannot reach each other; set count to 1 or more "
                      f"(or use one zone)", rule="disconnected")


_POOL_USE = {"loopbacks": "switch loopbacks", "fabric_links": "switch-to-switch link /31s",
             "host_links": "NIC link blocks", "network": "switch management addresses"}


def _pools(c: Cluster) -> Iterator[tuple[str, str, ipaddress.IPv4Network | ipaddress.IPv6Network]]:
    """(spec path, use, network) of every address pool, in spec order."""
    planes: list[tuple[str, Addressing]] = []
    if isinstance(c.backend, RoceBackend):
        planes.append(("backend", c.backend.addressing))
    if c.frontend is not None:
        planes.append(("frontend", c.frontend.addressing))
    for plane, addressing in planes:
        for fam in ("ipv4", "ipv6"):
            p = getattr(addressing, fam)
            if p is None:
                continue
            for which in ("loopbacks", "fabric_links", "host_links"):
                net = getattr(p, which)
                if net is not None:
                    yield (f"{plane}.addressing.{fam}.{which}", f"{plane} {_POOL_USE[which]}",
                           ipaddress.ip_network(net))
    if c.management.network is not None:
        yield "management.network", _POOL_USE["network"], ipaddress.ip_network(c.management.network)


def pool_overlap(c: Cluster, file: str) -> Iterator[Finding]:
    """Two address pools of one family overlap: the design would give the same address twice.

    Management `prefixes` are ACL sources, not pools, and may overlap anything.
    """
    seen: list[tuple[str, str, ipaddress.IPv4Network | ipaddress.IPv6Network]] = []
    for path, use, net in _pools(c):
        for other_path, other_use, other in seen:
            if net.version == other.version and net.overlaps(other):
                yield Finding(file, path, f"{net} overlaps {other_path} ({other}): {use} and {other_use} would be "
                              f"given the same addresses; use disjoint pools", rule="pool-overlap")
        seen.append((path, use, net))


def single_server(c: Cluster, file: str) -> Iterator[Finding]:
    """A management service (NTP, syslog, AAA) with exactly one server: it works, until that server is down."""
    m = c.management
    for key, what, lost in (("ntp_servers", "NTP", "the clocks drift and logs and certificates disagree"),
                            ("syslog_servers", "syslog", "the switches' logs are lost"),
                            ("aaa_servers", m.aaa_protocol.upper(), "logins fall back to the break-glass user")):
        servers = getattr(m, key)
        if len(servers) == 1:
            yield Finding(file, f"management.{key}", f"one {what} server ({servers[0]}): when it is down {lost}; "
                          "list at least two", rule="management-redundancy", severity="warning")


INTENT_RULES = (qos_conflict, bgp_timers, zones_disconnected, pool_overlap, single_server)
