"""What the design promises a running fabric shows, under any failures: sessions per switch, ECMP width per
destination, same-rail reachability over the backend, and, where the cluster has a front end, every GPU host reaching
every storage server and service host over it.  One definition, checked by the twin's verify, deploy's health checks
and gates.

All of it is computed from the Fabric of a build, never from the spec.

eBGP with RFC 7938 ASNs routes valley-free (up some tiers, then down) on shortest AS paths, and with multipath every
equal shortest path is used.  So the expected next hops of switch x towards rack switch t are the links to alive
neighbours on a shortest valley-free path, computed here on the Fabric with failed devices and links removed.  The
routed networks are the RoCE backend and the front end (both eBGP on RFC 7938 tiers); they share no link, so one model
holds both and a switch's probes stay inside its own network.

`promise(fabric, failures, sampling)` gives what to check (a `Promise`); `check(promise, observer)` asks an `Observer`
(the twin, a live switch) what it shows and returns the differences (a `Report`).  Sampling is a parameter: the twin's
verify and a deploy gate check the same things through the same functions, on more or fewer probes.
"""

from teton.expect.model import (
    ECMP_SAMPLE,
    FRONTEND_NICS,
    NO_FAILURES,
    PING_SAMPLE,
    RACK_ROLES,
    ROUTED,
    TIER,
    EcmpModel,
    EcmpProbe,
    Failures,
    PingProbe,
    Promise,
    RackPaths,
    Sampling,
    ecmp_probes,
    expected_ecmp,
    expected_peers,
    expected_sessions,
    frontend_pairs,
    lost_paths,
    promise,
    same_rail_pairs,
)
from teton.expect.observe import (
    EcmpMismatch,
    Observer,
    PeerObserver,
    Report,
    SessionMismatch,
    check,
    wait_until_kept,
)

__all__ = [
    "ECMP_SAMPLE", "FRONTEND_NICS", "NO_FAILURES", "PING_SAMPLE", "RACK_ROLES", "ROUTED", "TIER", "EcmpMismatch",
    "EcmpModel", "EcmpProbe", "Failures", "Observer", "PeerObserver", "PingProbe", "Promise", "RackPaths", "Report",
    "Sampling", "SessionMismatch", "check", "ecmp_probes", "expected_ecmp", "expected_peers", "expected_sessions",
    "frontend_pairs", "lost_paths", "promise", "same_rail_pairs", "wait_until_kept",
]  # fmt: skip
