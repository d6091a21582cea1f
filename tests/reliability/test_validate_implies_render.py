"""The invariant "validate passes => render passes", over generated specs.

Specs vary what a user can get wrong and what only a vendor's schema would catch late: counts, address families and
pools (overlapping ones too), QoS values, BGP timers, AAA protocol and servers, telemetry, secret names, the management
VRF and the NOS of each tier.  For each, `teton validate` either refuses it (exit 2, findings with spec paths), or
`teton render` must succeed: every vendor schema error still reachable would be a bug, since its finding would name a
rendered file instead of the spec path to change.
"""

from __future__ import annotations

import copy
import json

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.helpers import LAB
from teton.cli import main

BASE = yaml.safe_load(LAB.read_text())
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                           HealthCheck.too_slow])

def mostly(good: st.SearchStrategy, bad: st.SearchStrategy, tenths: int = 9) -> st.SearchStrategy:
    """A draw of `good` in `tenths` of ten cases, else of `bad`: specs valid often enough to reach render, with every
    kind of mistake still tried."""
    return st.integers(0, 9).flatmap(lambda k: good if k < tenths else bad)


valid_secrets = st.text(alphabet="abcXYZ09_", min_size=1, max_size=12)
secret_names = mostly(valid_secrets, st.text(alphabet="abc09_- .", min_size=1, max_size=10))
lab_v4 = {"loopbacks": "10.0.0.0/24", "fabric_links": "10.1.0.0/24", "host_links": "10.64.0.0/24"}
v4_pools = st.sampled_from(["10.0.0.0/24", "10.1.0.0/24", "10.64.0.0/24", "10.0.0.0/16", "10.1.0.0/26",
                            "10.0.0.0/30", "192.0.2.0/24"])
prefixes = st.lists(st.sampled_from(["192.0.2.0/24", "198.51.100.0/24", "2001:db8::/32", "10.0.0.0/8"]),
                    max_size=3, unique=True)


@st.composite
def _distinct(draw: st.DrawFn, low: int, high: int) -> tuple[int, int]:
    a = draw(st.integers(low, high))
    return a, low + (a - low + draw(st.integers(1, high - low))) % (high - low + 1)


@st.composite
def _timers(draw: st.DrawFn) -> tuple[int, int]:
    keepalive = draw(st.integers(1, 10))
    return keepalive, draw(st.integers(3 * keepalive, 3 * keepalive + 30))


@st.composite
def specs(draw: st.DrawFn) -> dict:
    d = copy.deepcopy(BASE)
    d.update(zones=draw(st.integers(1, 2)), racks_per_zone=draw(st.integers(1, 2)),
             hosts_per_rack=draw(st.integers(1, 2)))
    be = d["backend"]
    be["ctsw"]["per_zone"] = draw(st.integers(1, 4))
    be["atsw"]["count"] = draw(mostly(st.integers(1, 2), st.just(0)) if d["zones"] > 1 else st.integers(0, 2))
    # the design's own ratios, so that the oversubscription rule (tested elsewhere) does not hide everything else
    be["rtsw"]["oversubscription"] = d["hosts_per_rack"] * 8 / be["ctsw"]["per_zone"]
    be["ctsw"]["oversubscription"] = d["racks_per_zone"] / max(1, be["atsw"]["count"])
    be["rtsw"]["nos"] = draw(mostly(st.just("sonic"), st.just("fboss")))
    if draw(st.booleans()):
        be["rtsw"].update(model="arista-7060dx5-64s", nos=draw(st.sampled_from(["eos", "sonic"])))
    roce_dscp, cnp_dscp = draw(mostly(_distinct(0, 63), st.tuples(st.integers(0, 63), st.integers(0, 63))))
    lossless, cnp = draw(mostly(_distinct(1, 7), st.tuples(st.integers(0, 7), st.integers(0, 7))))
    ecn_min, ecn_max = draw(mostly(st.integers(1, 2999).flatmap(lambda lo: st.tuples(st.just(lo),
                                                                                      st.integers(lo + 1, 3000))),
                                   st.tuples(st.integers(1, 3000), st.integers(1, 3000))))
    thresholds = [{"speed_gbps": 400, "buffer": draw(st.sampled_from(["shallow", "deep"])),
                   "min_bytes": ecn_min * 1000, "max_bytes": ecn_max * 1000}] if draw(st.booleans()) else []
    be["qos"] = {"roce_dscp": roce_dscp, "cnp_dscp": cnp_dscp, "lossless_priority": lossless, "cnp_priority": cnp,
                 "ecn": draw(st.booleans()), "ecn_thresholds": thresholds,
                 "control_dscp": draw(mostly(st.just(46), st.integers(0, 63))),
                 "control_priority": draw(mostly(st.just(5), st.integers(0, 7))),
                 "pfc_watchdog": draw(st.booleans()),
                 "pfc_watchdog_ms": draw(mostly(st.integers(10, 500).map(lambda x: x * 10), st.integers(1, 6000)))}
    keepalive, hold = draw(mostly(_timers(), st.tuples(st.integers(0, 12), st.integers(0, 40))))
    be["bgp"] = {"timers": {"keepalive": keepalive, "hold": hold, "connect_retry": draw(st.integers(1, 60))},
                 "bfd": draw(st.booleans())}
    if draw(st.booleans()):
        be["bgp"]["password_secret"] = draw(secret_names)
    addressing = be["addressing"]
    addressing["ipv4"] = draw(mostly(st.just(lab_v4), st.fixed_dictionaries(
        {"loopbacks": v4_pools, "fabric_links": v4_pools, "host_links": v4_pools})))
    if draw(st.booleans()):
        addressing.pop("ipv6")
    if not draw(st.booleans()):
        d.pop("frontend")
        d["storage"] = []
    m = d["management"]
    m.update(aaa_protocol=draw(st.sampled_from(["tacacs+", "radius"])),
             telemetry=draw(st.sampled_from(["gnmi", "snmpv3"])), prefixes=draw(prefixes),
             vrf=draw(mostly(st.just("mgmt"), st.just("OOB"))))
    if draw(st.booleans()):
        m["aaa_servers"] = []
    for key in ("aaa_key_secret", "snmpv3_auth_secret", "snmpv3_priv_secret"):
        if draw(st.booleans()):
            m[key] = draw(secret_names)
    return d


@SETTINGS
@given(spec=specs())
def test_a_spec_that_validates_renders(tmp_path, spec):
    path = tmp_path / "gen.yaml"
    path.write_text(yaml.safe_dump(spec))
    runner = CliRunner()
    checked = runner.invoke(main, ["validate", "--json", str(path)])
    assert checked.exit_code in (0, 2) and "Traceback" not in checked.output, checked.output
    event("refused by validate" if checked.exit_code else "validated, so rendered")
    if checked.exit_code == 2:
        findings = json.loads(checked.output[:checked.output.rindex("}") + 1])["findings"]
        assert findings and all(f["file"] == str(path) and f["path"] for f in findings), findings
        return
    out = tmp_path / "build"
    rendered = runner.invoke(main, ["render", str(path), "-o", str(out), "--force"])
    assert rendered.exit_code == 0, f"validate passed but render failed:\n{rendered.output}"
    assert (out / "manifest.json").is_file()
