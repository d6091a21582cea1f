"""The Prometheus rules (`monitoring/rules/teton.rules.yml`): a few generic rules that join what the exporters observe
with the designed series (`teton.targets.monitoring.designed`), their thresholds and durations from the monitoring
intent.  Nothing in them names a device, a session or a cable: the design is data, so the rules stay the same size
for the lab and for 100,000 sessions.

Each group is evaluated in order, so a recording rule (`teton:*`) is seen by the alerts after it in the same
evaluation.  An alert's summary is written once, with `<label>` for a label's value and `<$value>` for the value;
`go_template` spells it for Prometheus and `expand` for the rendered unit tests.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from teton.fabric.intent import MonitoringIntent

LINK_END_LABELS = "cable_id, end, kind, peer_device, peer_port"
_PLACEHOLDER = re.compile(r"<(\$value|[a-z_]+)>")


class Alert(NamedTuple):
    group: str
    name: str
    expr: str
    for_s: int
    severity: str
    summary: str          # with <label> and <$value>
    why: str              # one line for docs/monitoring.md's table and the rule's description


class Record(NamedTuple):
    group: str
    name: str
    expr: str


def go_template(text: str) -> str:
    return _PLACEHOLDER.sub(lambda m: "{{ $value }}" if m[1] == "$value" else f"{{{{ $labels.{m[1]} }}}}", text)


def expand(text: str, labels: dict[str, str], value: str = "") -> str:
    return _PLACEHOLDER.sub(lambda m: value if m[1] == "$value" else labels.get(m[1], ""), text)


def _lr(expr: str, dst: str, replacement: str, src: str, regex: str) -> str:
    return f'label_replace({expr}, "{dst}", "{replacement}", "{src}", "{regex}")'


def _set(expr: str, label: str, value: str) -> str:
    """`label` set to `value` on every series ("" removes it)."""
    return _lr(expr, label, value, "", "")


def _swap(expr: str, pairs: tuple[tuple[str, str], ...]) -> str:
    """Each pair of labels' values exchanged."""
    for a, _ in pairs:
        expr = _lr(expr, f"swap_{a}", "$1", a, "(.*)")
    for a, b in pairs:
        expr = _lr(expr, a, "$1", b, "(.*)")
    for a, b in pairs:
        expr = _lr(expr, b, "$1", f"swap_{a}", "(.*)")
    for a, _ in pairs:
        expr = _set(expr, f"swap_{a}", "")
    return expr


def _s(seconds: int) -> str:
    return f"{seconds}s"


def _sum2(a: str, b: str, window: int) -> str:
    """Both counters' increase over `window`, added per port (each summed alone first: increase() drops the
    name, so the two would otherwise collide)."""
    return (f"sum by (device, port) (increase({a}[{_s(window)}]))\n  + sum by (device, port) "
            f"(increase({b}[{_s(window)}]))")


def _ratio(percent: float) -> str:
    return f"{percent / 100:g}"


ENDS = (("device", "peer_device"), ("port", "peer_port"))
_LINK = "max without (job, instance) (teton_designed_link)"
_SESSION = ("(max without (job, instance) (teton_designed_bgp_session) * on (cable_id) group_left (device, port, "
            "peer_device, peer_port) max without (job, instance) (teton_designed_link))")
_WATCHED = 'on (device) teton_designed_device{monitored="true"}'


def records() -> list[Record]:
    link_b = _swap(_set(_LINK, "end", "b"), ENDS)
    session_a = _set(_set(_SESSION, "end", "a"), "address", "")
    session_b = _set(_lr(_swap(_set(_SESSION, "end", "b"), ENDS), "peer_address", "$1", "address", "(.*)"),
                     "address", "")
    return [
        Record("teton-links", "teton:designed_link_end", f"{_set(_LINK, 'end', 'a')}\nor\n{link_b}"),
        Record("teton-links", "teton:port_up",
               "max by (device, port) (node_network_up)\nor\nmax by (device, port) (teton_gnmi_port_oper_up)"),
        Record("teton-bgp", "teton:designed_bgp_session_end", f"{session_a}\nor\n{session_b}"),
        Record("teton-bgp", "teton:bgp_session_up",
               'max by (device, peer_address, afi) (label_replace(frr_bgp_peer_state{safi="unicast"}, '
               '"peer_address", "$1", "peer", "(.*)"))\nor\nmax by (device, peer_address, afi) '
               "(teton_gnmi_bgp_session_established)"),
    ]


def alerts(m: MonitoringIntent) -> list[Alert]:
    end = f"* on (device, port) group_left ({LINK_END_LABELS}) teton:designed_link_end"
    lossless = "on (device, priority) group_left (watchdog_ms) teton_designed_lossless"
    margin = f"{m.optics_margin_db:g}"
    rx = "max by (device, port, lane) (teton_gnmi_optic_rx_power_dbm)"
    errors = m.port_error_window_s
    return [
        Alert("teton-links", "TetonLinkDown",
              f"(teton:designed_link_end unless on (device, port) (teton:port_up == 1))\nand {_WATCHED}",
              m.link_down_for_s, "critical",
              "<device> <port> is down or unobserved: cable <cable_id> to <peer_device> <peer_port>",
              "a designed cable's end not up (or no exporter reports it)"),
        Alert("teton-links", "TetonLinkFlapping",
              f"(\n  sum by (device, port) (increase(node_network_carrier_changes_total[{_s(m.link_flap_window_s)}]))"
              f"\n  or\n  sum by (device, port) (increase(teton_gnmi_port_carrier_transitions_total"
              f"[{_s(m.link_flap_window_s)}]))\n)\n{end}\n>= {2 * m.link_flaps}",
              0, "warning", f"<device> <port> flapped {m.link_flaps} times or more in {_s(m.link_flap_window_s)}: "
              "cable <cable_id> to <peer_device> <peer_port>",
              "a port's carrier went down and up again as often as the design's dampening suppresses it"),
        Alert("teton-links", "TetonPortErrors",
              f"(\n  {_sum2('node_network_receive_errs_total', 'node_network_transmit_errs_total', errors)}\n  or\n"
              f"  {_sum2('teton_gnmi_port_in_errors_total', 'teton_gnmi_port_out_errors_total', errors)}\n)\n{end}\n"
              f"> {m.port_errors}",
              0, "warning", f"<device> <port> has more than {m.port_errors} errored frames in "
              f"{_s(m.port_error_window_s)}: cable <cable_id> (<kind>)",
              "errored frames on a designed port; on a host's rail NIC, errors a lossless class turns into "
              "retransmissions"),
        Alert("teton-links", "TetonOpticRxPowerOutOfRange",
              f"(\n  {rx}\n    < on (device, port) group_left () (max by (device, port) "
              f"(teton_gnmi_optic_rx_power_low_warning_dbm) + {margin})\n  or\n  {rx}\n"
              f"    > on (device, port) group_left () (max by (device, port) "
              f"(teton_gnmi_optic_rx_power_high_warning_dbm) - {margin})\n)\n{end}",
              m.optics_for_s, "warning",
              "<device> <port> lane <lane>: receive power outside the module's warning thresholds: cable <cable_id>",
              "an optic's receive power outside its own (CMIS) warning thresholds"),
        Alert("teton-bgp", "TetonBgpSessionDown",
              "(teton:designed_bgp_session_end unless on (device, peer_address, afi) (teton:bgp_session_up == 1))"
              f"\nand {_WATCHED}", m.bgp_down_for_s, "critical",
              "<device>: <afi> session with <peer_device> (<peer_address>) not Established: cable <cable_id>",
              "a designed eBGP session not Established at one of its ends, or absent there (bgpd or its exporter "
              "dead)"),
        Alert("teton-roce", "TetonPfcWatchdogStorm",
              f"(sum by (device, port, priority) (increase(teton_gnmi_pfcwd_storms_total"
              f"[{_s(m.pfc_storm_window_s)}])) > 0)\n* {lossless}\n{end}", 0, "critical",
              "<device> <port>: the PFC watchdog (<watchdog_ms> ms) acted on lossless priority <priority>: "
              "cable <cable_id> to <peer_device>",
              "the PFC watchdog found the lossless priority paused past its detection time (a PFC storm)"),
        Alert("teton-roce", "TetonPfcPauseHigh",
              f"(sum by (device, port, priority) (rate(teton_gnmi_pfc_rx_pause_seconds_total"
              f"[{_s(m.pfc_pause_window_s)}])) > {_ratio(m.pfc_pause_percent)})\n* {lossless}\n{end}",
              m.pfc_pause_for_s, "warning",
              f"<device> <port>: lossless priority <priority> paused more than {m.pfc_pause_percent}% of the time: "
              "cable <cable_id> to <peer_device>",
              "the lossless priority paused by its peer a large share of the time"),
        Alert("teton-roce", "TetonBufferOccupancyHigh",
              "max by (device, pool) (teton_gnmi_buffer_pool_occupancy_bytes)\n/ on (device, pool) "
              f"max by (device, pool) (teton_designed_buffer_pool_bytes)\n> {_ratio(m.buffer_percent)}",
              m.buffer_for_s, "warning", f"<device>: shared buffer pool <pool> above {m.buffer_percent}% of its "
              "designed size", "a shared buffer pool fuller than the spec's threshold of its designed size"),
        Alert("teton-roce", "TetonEcnMarkingHigh",
              f"(\n  sum by (device, port, queue) (rate(teton_gnmi_ecn_marked_packets_total[{_s(m.ecn_window_s)}]))"
              f"\n  / sum by (device, port, queue) (rate(teton_gnmi_queue_tx_packets_total[{_s(m.ecn_window_s)}]))\n"
              f"  > {_ratio(m.ecn_mark_percent)}\n)\n"
              '* on (device, queue) group_left () teton_designed_lossless{ecn="on"}', m.ecn_for_s, "warning",
              f"<device> <port>: more than {m.ecn_mark_percent}% of lossless queue <queue>'s packets ECN-marked",
              "where the design marks ECN, a lossless queue marking a large share of its packets for long"),
        Alert("teton-roce", "TetonEcnMarksUndesigned",
              f"(sum by (device, port, queue) (increase(teton_gnmi_ecn_marked_packets_total[{_s(m.ecn_window_s)}])) "
              '> 0)\n* on (device, queue) group_left () teton_designed_lossless{ecn="off"}', 0, "warning",
              "<device> <port>: lossless queue <queue> marks ECN, which the design has off",
              "ECN marks on a switch whose design has none: its running QoS is not the design's"),
        Alert("teton-hosts", "TetonStorageMountDown",
              "max without (job, instance) (teton_designed_mount)\nunless on (device, mountpoint) "
              "(max by (device, mountpoint) (node_filesystem_device_error) == 0)", m.mount_for_s, "critical",
              "<device>: <mountpoint> from <server_device> (<server>) is not mounted or not answering",
              "a host's designed storage mount absent or erroring: it does not reach its server over the front end"),
        Alert("teton-hosts", "TetonGpuXid", "max by (device, gpu) (DCGM_FI_DEV_XID_ERRORS) > 0", 0, "warning",
              "<device> GPU <gpu>: XID <$value>", "the GPU driver reported an XID error (its value is the XID)"),
        Alert("teton-hosts", "TetonGpuRowRemapPending", "max by (device, gpu) (DCGM_FI_DEV_ROW_REMAP_PENDING) > 0",
              m.row_remap_for_s, "warning", "<device> GPU <gpu>: a memory row remap is pending; drain and reset it",
              "a GPU memory row waits for a reset to be remapped"),
        Alert("teton-hosts", "TetonGpuRowRemapFailed", "max by (device, gpu) (DCGM_FI_DEV_ROW_REMAP_FAILURE) > 0",
              0, "critical", "<device> GPU <gpu>: memory row remapping failed; replace the GPU",
              "a GPU could not remap a memory row (its spare rows are used up)"),
        Alert("teton-hosts", "TetonGpuMissing",
              "max without (job, instance) (teton_designed_gpus) > on (device) count by (device) "
              "(DCGM_FI_DEV_GPU_TEMP)\nor\nmax without (job, instance) (teton_designed_gpus) unless on (device) "
              "count by (device) (DCGM_FI_DEV_GPU_TEMP)", m.exporter_down_for_s, "critical",
              "<device>: fewer GPUs report than the <$value> designed", "a GPU host shows fewer GPUs than designed "
              "(a GPU fell off the bus), or none (DCGM down)"),
        Alert("teton-meta", "TetonExporterDown", 'up{job=~"teton-.*"} == 0', m.exporter_down_for_s, "warning",
              "<device>: <job> at <instance> does not answer",
              "an exporter teton's scrape configuration names is down"),
        Alert("teton-meta", "TetonDesignNotLoaded", "absent(teton_designed_build_info)", m.design_missing_for_s,
              "critical", "no designed series: load monitoring/designed/ into the textfile collector",
              "without the design every join is empty and no other alert can fire"),
    ]


GROUPS = ("teton-links", "teton-bgp", "teton-roce", "teton-hosts", "teton-meta")


def rule_groups(m: MonitoringIntent) -> dict[str, Any]:
    """The rule file's data: one group per concern, its recording rules before its alerts."""
    groups = []
    for name in GROUPS:
        rules: list[dict[str, Any]] = [{"record": r.name, "expr": r.expr} for r in records() if r.group == name]
        for a in alerts(m):
            if a.group != name:
                continue
            rule: dict[str, Any] = {"alert": a.name, "expr": a.expr}
            if a.for_s:
                rule["for"] = _s(a.for_s)
            rule["labels"] = {"severity": a.severity}
            rule["annotations"] = {"summary": go_template(a.summary), "description": a.why}
            rules.append(rule)
        groups.append({"name": name, "interval": _s(m.evaluation_interval_s), "rules": rules})
    return {"groups": groups}
