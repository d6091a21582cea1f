"""End to end (issue 34): real FRR enforces the inbound policy the design gives every session.  In the services twin a
rack switch is made to announce another rack's aggregate (an address of that rack on its loopback, a `network` its
export permits) and a default route to its spines: it does announce both, and no spine or aggregation switch installs
either (the other rack's traffic is not drawn to it); a spine whose inbound policy is opened takes both (the rogue's
aggregate into its BGP table, the default into its kernel: what the policy prevents).  Everything changed is undone
(the rogue's sessions reset: FRR does not withdraw a default-originate that is removed), and every route is seen to
be as before."""

from __future__ import annotations

import subprocess
import time

import pytest

pytestmark = pytest.mark.root

ROGUE, VICTIM = "z01-r001-rtsw", "z01-r002-rtsw"
THEIRS, ADDRESS = "10.64.0.32/27", "10.64.0.33/27"      # the victim's rack aggregate, an address inside it
SPINES = ("z01-ctsw01", "z01-ctsw02", "z01-ctsw03", "z01-ctsw04")
ROGUE_LINES = [f"ip prefix-list ORIGINATE_V4 seq 5 permit {THEIRS}", "router bgp", "address-family ipv4 unicast",
               f"network {THEIRS}", "neighbor CTSW_V4 default-originate"]
UNDO_LINES = ["router bgp", "address-family ipv4 unicast", f"no network {THEIRS}",
              "no neighbor CTSW_V4 default-originate", "exit-address-family", "exit",
              f"no ip prefix-list ORIGINATE_V4 seq 5 permit {THEIRS}"]


def _vtysh(twin, node: str, lines: list[str]) -> None:
    cmd = ["vtysh", "--vty_socket", str(twin.node_dir(node)), "-c", "configure terminal"]
    for line in lines:
        cmd += ["-c", line]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=30, check=False)
    assert res.returncode == 0, res.stdout + res.stderr


def _advertised(twin, node: str, peer: str) -> set[str]:
    from teton.frr.vty import vty_json

    got = vty_json(twin.node_dir(node) / "bgpd.vty", f"show bgp ipv4 unicast neighbors {peer} advertised-routes json",
                   timeout=5) or {}
    default = got.get("bgpOriginatingDefaultNetwork")          # default-originate, outside the table's routes
    return set(got.get("advertisedRoutes", {})) | ({default} if default else set())


def _peers(twin, node: str, prefix: str) -> set[str]:
    """The peers a switch's BGP table has a path for `prefix` from."""
    from teton.frr.vty import vty_json

    got = vty_json(twin.node_dir(node) / "bgpd.vty", f"show bgp ipv4 unicast {prefix} json", timeout=5) or {}
    return {p.get("peer", {}).get("peerId", "") for p in got.get("paths", [])}


def _until(check, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return check()


def _routes(twin, nodes) -> dict[str, tuple[int, int]]:
    """Per switch: the kernel's next hops towards THEIRS and towards the default route."""
    return {n: (twin.kernel_nexthops(n, THEIRS), twin.kernel_nexthops(n, "0.0.0.0/0")) for n in nodes}


def test_a_rack_switch_announcing_another_racks_prefix_and_a_default_is_ignored_by_its_peers(services_twin):
    from tests.e2e.conftest import SERVICES_TWIN
    from teton.design import design
    from teton.spec.load import load_spec
    from teton.twin.service import load_twin

    fabric = design(load_spec(services_twin.spec))
    rogue = fabric.devices[ROGUE].routing
    assert rogue is not None
    uplink = next(n.address for n in rogue.neighbors if n.family == "ipv4")   # its session with a spine
    twin = load_twin(SERVICES_TWIN)
    watched = (*SPINES, "atsw01", "atsw02", "z02-r001-rtsw")
    before = _routes(twin, watched)
    assert all(v == (1, 0) for k, v in before.items() if k in SPINES), before     # the victim's one link, no default
    ns = services_twin.netns(ROGUE)
    subprocess.run(["ip", "netns", "exec", ns, "ip", "addr", "add", ADDRESS, "dev", "lo"], check=True)
    try:
        _vtysh(twin, ROGUE, ROGUE_LINES)
        assert _until(lambda: {THEIRS, "0.0.0.0/0"} <= _advertised(twin, ROGUE, uplink)), \
            _advertised(twin, ROGUE, uplink)                                       # it really announces both
        time.sleep(3)                                                              # time to spread, were it taken
        assert _routes(twin, watched) == before
        for spine in SPINES:                                  # the spine's RIB: THEIRS via the victim's link alone
            entry = twin.routes(spine, THEIRS).get(THEIRS, [{}])[0]
            hops = {h.get("ip") for h in entry.get("nexthops", [])}
            victim_side = {n.address for n in fabric.devices[spine].routing.neighbors
                           if n.peer.startswith(VICTIM + ":") and n.family == "ipv4"}
            assert hops == victim_side, (spine, hops)
        # the control: one spine whose inbound policy from the rogue permits everything takes both
        _vtysh(twin, SPINES[0], [f"route-map IMPORT_{ROGUE}_V4 permit 20"])
        rogue_side = {n.address for n in fabric.devices[SPINES[0]].routing.neighbors
                      if n.peer.startswith(ROGUE + ":") and n.family == "ipv4"}
        assert _until(lambda: rogue_side <= _peers(twin, SPINES[0], THEIRS)
                      and twin.kernel_nexthops(SPINES[0], "0.0.0.0/0") == 1, 40), _peers(twin, SPINES[0], THEIRS)
    finally:
        _vtysh(twin, SPINES[0], [f"no route-map IMPORT_{ROGUE}_V4 permit 20"])
        _vtysh(twin, ROGUE, UNDO_LINES)
        subprocess.run(["ip", "netns", "exec", ns, "ip", "addr", "del", ADDRESS, "dev", "lo"], check=False)
        # FRR does not withdraw a default route when `default-originate` is removed: the rogue's sessions are reset
        subprocess.run(["vtysh", "--vty_socket", str(twin.node_dir(ROGUE)), "-c", "clear bgp *"], check=False,
                       capture_output=True, timeout=30)
    assert _until(lambda: not ({THEIRS, "0.0.0.0/0"} & _advertised(twin, ROGUE, uplink)))
    assert _until(lambda: _routes(twin, watched) == before, 60), (_routes(twin, watched),
                                                                 _peers(twin, SPINES[0], "0.0.0.0/0"))
