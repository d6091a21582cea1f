"""The rendered unit tests of the rules (`monitoring/tests/*.test.yml`), for `promtool test rules`: for a fixed sample
of the design's cables, sessions, switches and hosts (`monitoring.test_sample` of each kind), the series that must
fire each alert and those that must not (`teton.targets.monitoring.testkit`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from teton.fabric.intent import MonitoringIntent
from teton.fabric.model import Fabric
from teton.targets.monitoring.designed import Series
from teton.targets.monitoring.metrics import monitored
from teton.targets.monitoring.rules import LINK_END_LABELS
from teton.targets.monitoring.testkit import Group, bgp_source, end_labels, pick, port_source
from teton.targets.monitoring.text import dump_yaml, number

Found = dict[str, list[Series]]
_END = [x.strip() for x in LINK_END_LABELS.split(",")]


def by_label(found: Found, name: str, key: str) -> dict[str, list[Series]]:
    out: dict[str, list[Series]] = {}
    for s in found[name]:
        out.setdefault(s.get(key), []).append(s)
    return out


# `sample_links` of each (links list, n) while `teton.targets.monitoring.unittests_hosts.test_files` runs (None
# otherwise): its eight link groups sample the same links, each a pass over every cable (the 24k's 67k: 0.17 s); the
# lists are `found`'s, alive (their ids not reused) until test_files returns
_SAMPLES: dict[tuple[int, int], list[Series]] | None = None


def sample_links(found: Found, n: int) -> list[Series]:
    links = found["teton_designed_link"]
    memo, key = _SAMPLES, (id(links), n)
    if memo is not None and key in memo:
        return list(memo[key])
    by_kind = by_label(found, "teton_designed_link", "kind")
    out = [s for kind in sorted(by_kind) for s in pick(by_kind[kind], n)]
    if memo is not None:
        memo[key] = list(out)
    return out


def _context(found: Found, devices: set[str], links: Sequence[Series] = ()) -> list[Series]:
    """The designed series a test needs beside its own: the build's, and its devices' and cables'."""
    return [*found["teton_designed_build_info"], *links,
            *(s for s in found["teton_designed_device"] if s.get("device") in devices)]


def _ends(links: Sequence[Series]) -> list[tuple[Series, dict[str, str]]]:
    return [(link, end_labels(link, e)) for link in links for e in ("a", "b")]


def links(fabric: Fabric, m: MonitoringIntent, found: Found) -> Group:
    g = Group(fabric, m, "links: an end down or unobserved fires TetonLinkDown with its cable id; healthy ends and "
                         "devices teton does not watch do not")
    sample = sample_links(found, m.test_sample)
    steps = m.link_down_for_s // g.step + 1
    fired = []
    for j, (_, lab) in enumerate(_ends(sample)):
        d = fabric.device(lab["device"])
        down, absent = (j // 2) % 3 == 1 and lab["end"] == "a", (j // 2) % 3 == 2 and lab["end"] == "b"
        src = port_source(d)
        if src is not None and not absent:
            name = "node_network_up" if src == "node" else "teton_gnmi_port_oper_up"
            g.observed(d, src, name, {"port": lab["port"]}, f"{0 if down else 1}x{steps}")
        if (down or absent) and monitored(d.nos):
            fired.append((lab, ""))
    g.designed(_context(found, {x for s in sample for x in (s.get("device"), s.get("peer_device"))}, sample), steps)
    g.expect("TetonLinkDown", m.link_down_for_s, fired)
    g.count("teton:designed_link_end", 0, 2 * len(sample))
    return g


def bgp(fabric: Fabric, m: MonitoringIntent, found: Found) -> Group:
    g = Group(fabric, m, "bgp: a session not Established, or absent at one end, fires TetonBgpSessionDown there")
    cable = {s.get("cable_id"): s for s in found["teton_designed_link"]}
    by_kind: dict[tuple[str, str], list[Series]] = {}
    for s in found["teton_designed_bgp_session"]:
        by_kind.setdefault((cable[s.get("cable_id")].get("kind"), s.get("afi")), []).append(s)
    sample = [s for key in sorted(by_kind) for s in pick(by_kind[key], m.test_sample)]
    steps = m.bgp_down_for_s // g.step + 1
    fired, used = [], []
    for j, s in enumerate(sample):
        link = cable[s.get("cable_id")]
        used.append(link)
        for end in ("a", "b"):
            lab = {k: v for k, v in end_labels(link, end).items() if k != "kind"}
            lab.update(afi=s.get("afi"), peer_address=s.get("peer_address" if end == "a" else "address"))
            d, peer = fabric.device(lab["device"]), fabric.device(lab["peer_device"])
            down, absent = j % 3 == 1 and end == "a", j % 3 == 2 and end == "b"
            values, src = f"{0 if down else 1}x{steps}", bgp_source(d)
            if src == "frr" and not absent:
                g.observed(d, src, "frr_bgp_peer_state", {
                    "afi": lab["afi"], "local_as": d.asn, "peer": lab["peer_address"], "peer_as": peer.asn,
                    "safi": "unicast", "vrf": "default"}, values)
            elif src == "gnmi" and not absent:
                g.observed(d, src, "teton_gnmi_bgp_session_established",
                           {"afi": lab["afi"], "peer_address": lab["peer_address"]}, values)
            if (down or absent) and monitored(d.nos):
                fired.append((lab, ""))
    devices = {x for s in used for x in (s.get("device"), s.get("peer_device"))}
    g.designed([*_context(found, devices, list({s.get("cable_id"): s for s in used}.values())), *sample], steps)
    g.expect("TetonBgpSessionDown", m.bgp_down_for_s, fired)
    g.count("teton:designed_bgp_session_end", 0, 2 * len(sample))
    return g


def _counter(g: Group, window: int, value: int) -> str:
    """A counter that is 0 until the middle of `window`, then `value`: its increase over `window` at `window` s
    is exactly `value`."""
    k = window // g.step
    first = k // 2
    return f"0x{first} {value}x{max(0, k - first - 1)}"


def counters(fabric: Fabric, m: MonitoringIntent, found: Found, alert: str) -> Group:
    """TetonLinkFlapping or TetonPortErrors: every other sampled end just over its threshold, the others at it."""
    flaps = alert == "TetonLinkFlapping"
    window = m.link_flap_window_s if flaps else m.port_error_window_s
    over, at = (2 * m.link_flaps, 2 * m.link_flaps - 2) if flaps else (m.port_errors + 1, m.port_errors)
    g = Group(fabric, m, f"{alert}: {over} in {window}s fires, {at} does not")
    sample = sample_links(found, m.test_sample)
    ends = [(link, lab) for link, lab in _ends(sample) if port_source(fabric.device(lab["device"]))]
    fired = []
    for j, (_, lab) in enumerate(pick(ends, 2 * m.test_sample)):
        d = fabric.device(lab["device"])
        src = port_source(d)
        name = {("node", True): "node_network_carrier_changes_total",
                ("node", False): "node_network_receive_errs_total",
                ("gnmi", True): "teton_gnmi_port_carrier_transitions_total",
                ("gnmi", False): "teton_gnmi_port_in_errors_total"}[src, flaps]      # type: ignore[index]
        value = over if j % 2 == 0 else at
        g.observed(d, str(src), name, {"port": lab["port"]}, _counter(g, window, value))
        if not flaps:         # the other direction's counter, which the rule adds
            other = "node_network_transmit_errs_total" if src == "node" else "teton_gnmi_port_out_errors_total"
            g.observed(d, str(src), other, {"port": lab["port"]}, f"0x{window // g.step}")
        if value == over:
            fired.append(({k: lab[k] for k in ("device", "port", *_END)}, number(value)))
    g.designed(_context(found, set(), sample), window // g.step)
    g.expect(alert, window, fired)
    return g


def optics(fabric: Fabric, m: MonitoringIntent, found: Found) -> Group:
    low, high = -8.0, 4.0
    g = Group(fabric, m, f"optics: receive power beyond the module's warnings ({low:g}, {high:g} dBm) by more than "
                         f"{m.optics_margin_db:g} dB fires, inside does not")
    sample = sample_links(found, m.test_sample)
    ends = [(link, lab) for link, lab in _ends(sample) if fabric.device(lab["device"]).nos in ("sonic", "eos")]
    steps = m.optics_for_s // g.step + 1
    fired = []
    for j, (_, lab) in enumerate(pick(ends, 3 * m.test_sample)):
        d = fabric.device(lab["device"])
        power = (-3.0, low - m.optics_margin_db - 1, high + m.optics_margin_db + 1)[j % 3]
        g.observed(d, "gnmi", "teton_gnmi_optic_rx_power_dbm", {"port": lab["port"], "lane": "1"},
                   f"{number(power)}x{steps}")
        g.observed(d, "gnmi", "teton_gnmi_optic_rx_power_low_warning_dbm", {"port": lab["port"]},
                   f"{number(low)}x{steps}")
        g.observed(d, "gnmi", "teton_gnmi_optic_rx_power_high_warning_dbm", {"port": lab["port"]},
                   f"{number(high)}x{steps}")
        if j % 3:
            fired.append(({k: lab[k] for k in ("device", "port", *_END)} | {"lane": "1"}, ""))
    g.designed(_context(found, set(), sample), steps)
    g.expect("TetonOpticRxPowerOutOfRange", m.optics_for_s, fired)
    return g


def _lossless_ends(found: Found, n: int) -> tuple[list[Series], list[tuple[Series, dict[str, str]]],
                                                  dict[str, Series]]:
    lossless = {s.get("device"): s for s in found["teton_designed_lossless"]}
    sample = sample_links(found, n)
    return sample, [(link, lab) for link, lab in _ends(sample) if lab["device"] in lossless], lossless


def _roce_context(found: Found, sample: list[Series], lossless: dict[str, Series], ends: list[dict[str, str]]) \
        -> list[Series]:
    return [*_context(found, set(), sample), *{lab["device"]: lossless[lab["device"]] for lab in ends}.values()]


def _on_lossless(lab: dict[str, str], designed: Series) -> dict[str, str]:
    """The labels of a PFC alert on a port's lossless priority: the port's end and the priority's watchdog."""
    out = {k: lab[k] for k in ("device", "port", *_END)} | {"priority": designed.get("priority")}
    return out | ({"watchdog_ms": designed.get("watchdog_ms")} if designed.get("watchdog_ms") else {})


def pfc_storms(fabric: Fabric, m: MonitoringIntent, found: Found) -> Group | None:
    sample, ends, lossless = _lossless_ends(found, m.test_sample)
    if not ends:
        return None
    g = Group(fabric, m, "pfc watchdog: a storm on the lossless priority fires TetonPfcWatchdogStorm; none, or one "
                         "on another priority, does not")
    chosen = [lab for _, lab in pick(ends, 2 * m.test_sample)]
    fired = []
    for j, lab in enumerate(chosen):
        d, designed = fabric.device(lab["device"]), lossless[lab["device"]]
        p = designed.get("priority")
        g.observed(d, "gnmi", "teton_gnmi_pfcwd_storms_total", {"port": lab["port"], "priority": p},
                   "0 1 1" if j % 2 == 0 else "2x2")
        if j == 1 and p != "0":
            g.observed(d, "gnmi", "teton_gnmi_pfcwd_storms_total", {"port": lab["port"], "priority": "0"}, "0 1 1")
        if j % 2 == 0:
            fired.append((_on_lossless(lab, designed), ""))
    g.designed(_roce_context(found, sample, lossless, chosen), 2)
    g.expect("TetonPfcWatchdogStorm", 2 * g.step, fired)
    return g


def _shares(percent: int) -> tuple[float, float]:
    """Shares just over and just under `percent` (0..1)."""
    return min(1.0, (percent + 5) / 100), max(0.0, (percent - 5) / 100)


def pfc_pause(fabric: Fabric, m: MonitoringIntent, found: Found) -> Group | None:
    sample, ends, lossless = _lossless_ends(found, m.test_sample)
    if not ends:
        return None
    over, under = _shares(m.pfc_pause_percent)
    g = Group(fabric, m, f"pfc pause: the lossless priority paused {over:.0%} of the time fires TetonPfcPauseHigh, "
                         f"{under:.0%} (or another priority) does not")
    at = m.pfc_pause_window_s + m.pfc_pause_for_s + g.step
    steps = at // g.step
    chosen = [lab for _, lab in pick(ends, 2 * m.test_sample)]
    fired = []
    for j, lab in enumerate(chosen):
        d, p = fabric.device(lab["device"]), lossless[lab["device"]].get("priority")
        share = over if j % 2 == 0 else under
        g.observed(d, "gnmi", "teton_gnmi_pfc_rx_pause_seconds_total", {"port": lab["port"], "priority": p},
                   f"0+{number(share * g.step)}x{steps}")
        if j == 1 and p != "0":
            g.observed(d, "gnmi", "teton_gnmi_pfc_rx_pause_seconds_total", {"port": lab["port"], "priority": "0"},
                       f"0+{number(g.step)}x{steps}")
        if share > m.pfc_pause_percent / 100:
            fired.append((_on_lossless(lab, lossless[lab["device"]]), ""))
    g.designed(_roce_context(found, sample, lossless, chosen), steps)
    g.expect("TetonPfcPauseHigh", at, fired, before=False)
    return g


def buffers(fabric: Fabric, m: MonitoringIntent, found: Found) -> Group | None:
    pools = by_label(found, "teton_designed_buffer_pool_bytes", "device")
    if not pools:
        return None
    g = Group(fabric, m, f"buffers: a pool at {m.buffer_percent + 1}% of its designed size fires "
                         f"TetonBufferOccupancyHigh, at {m.buffer_percent - 1}% it does not")
    steps = m.buffer_for_s // g.step + 1
    names = pick(sorted(pools), m.test_sample)
    fired = []
    for j, name in enumerate(names):
        for k, s in enumerate(pools[name]):
            hot = j % 2 == 0 and k == 0
            share = (m.buffer_percent + (1 if hot else -1)) / 100
            g.observed(fabric.devices[name], "gnmi", "teton_gnmi_buffer_pool_occupancy_bytes",
                       {"pool": s.get("pool")}, f"{round(s.value * share)}x{steps}")
            if hot:
                fired.append(({"device": name, "pool": s.get("pool")}, ""))
    g.designed([*found["teton_designed_build_info"], *(s for n in names for s in pools[n])], steps)
    g.expect("TetonBufferOccupancyHigh", m.buffer_for_s, fired)
    return g


def ecn(fabric: Fabric, m: MonitoringIntent, found: Found, on: bool) -> Group | None:
    sample, ends, lossless = _lossless_ends(found, m.test_sample)
    chosen = [lab for _, lab in ends if lossless[lab["device"]].get("ecn") == ("on" if on else "off")]
    if not chosen:
        return None
    chosen = pick(chosen, 2 * m.test_sample)
    over, under = _shares(m.ecn_mark_percent)
    g = Group(fabric, m, f"ecn: {over:.0%} of the lossless queue's packets marked fires TetonEcnMarkingHigh, "
                         f"{under:.0%} does not" if on else "ecn: marks where the design has ECN off fire "
                         "TetonEcnMarksUndesigned, none do not")
    at = m.ecn_window_s + m.ecn_for_s + g.step if on else 2 * g.step
    steps = at // g.step
    fired = []
    for j, lab in enumerate(chosen):
        d, q = fabric.device(lab["device"]), lossless[lab["device"]].get("queue")
        where = {"port": lab["port"], "queue": q}
        if on:
            share = over if j % 2 == 0 else under
            g.observed(d, "gnmi", "teton_gnmi_queue_tx_packets_total", where, f"0+{1000 * g.step}x{steps}")
            g.observed(d, "gnmi", "teton_gnmi_ecn_marked_packets_total", where,
                       f"0+{number(share * 1000 * g.step)}x{steps}")
            hot = share > m.ecn_mark_percent / 100
        else:
            hot = j % 2 == 0
            g.observed(d, "gnmi", "teton_gnmi_ecn_marked_packets_total", where, "0 5 5" if hot else "7x2")
        if hot:
            fired.append(({"device": lab["device"], "port": lab["port"], "queue": q}, ""))
    g.designed(_roce_context(found, sample, lossless, chosen), steps)
    g.expect("TetonEcnMarkingHigh" if on else "TetonEcnMarksUndesigned", at, fired, before=False)
    return g


def test_file(m: MonitoringIntent, groups: list[Group], what: str) -> str:
    data: dict[str, Any] = {"rule_files": ["../rules/teton.rules.yml"],
                            "evaluation_interval": f"{m.evaluation_interval_s}s", "tests": [g.data() for g in groups]}
    return dump_yaml(data, f"promtool test rules: {what}\nRendered by teton from the design; see docs/monitoring.md.")
