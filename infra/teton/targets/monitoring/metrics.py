"""The metrics the rules read and where each comes from, per NOS and for servers (`monitoring/exporters.yaml`,
docs/monitoring.md).

Three kinds of source:

- Debian's exporters, under their own names: `prometheus-node-exporter` 1.5 (`node_network_up`,
  `node_network_carrier_changes_total`, `node_network_{receive,transmit}_errs_total`,
  `node_filesystem_device_error`), `prometheus-frr-exporter` 1.1.4 (`frr_bgp_peer_state`, with
  `--collector.bgp6` for the IPv6 sessions) and NVIDIA's `dcgm-exporter` (`DCGM_FI_DEV_*`, the fields of
  `monitoring/dcgm-counters.csv`).  The scrape configuration gives every target the label `device` (the
  device's name in the design); an exporter's own `device` label (node-exporter's interface, DCGM's `nvidiaN`) is
  then renamed by Prometheus to `exported_device`, and the scrape configuration moves it to `port` (network
  metrics), `fs_device` (file systems) or `gpu_device` (DCGM).
- A switch's counters over gNMI: a collector subscribes to the paths of `monitoring/gnmi.yaml` (per device, by its
  NOS and design) and exports them under the `teton_gnmi_*` names below with the labels `device` (the design's
  name), `port` (the NOS's port name) and `priority`, `queue`, `lane` or `pool`.  teton names the paths; the
  renaming is the collector's (gnmic's event processors, or any other), and is not exercised here.
- The design itself: `monitoring/designed/*.prom` (`teton_designed_*`), served by a node-exporter's textfile
  collector.
"""

from __future__ import annotations

from typing import NamedTuple

NODE = "prometheus-node-exporter 1.5 (Debian 12)"
FRR = "prometheus-frr-exporter 1.1.4 (Debian 12), --collector.bgp6"
DCGM = "NVIDIA dcgm-exporter, with monitoring/dcgm-counters.csv"
GNMI = "gNMI collector (monitoring/gnmi.yaml), renamed to teton's name"
SONIC_COUNTERS = "COUNTERS_DB"
SONIC_STATE = "STATE_DB"
SONIC_APPL = "APPL_DB"
OPENCONFIG = "openconfig"


class Source(NamedTuple):
    platform: str        # "servers", "sonic", "eos"
    exporter: str
    metric: str          # the name the rules read, as Prometheus stores it
    origin: str = ""     # gNMI: SONiC's target database, or "openconfig"
    path: str = ""       # gNMI: the subscribed path (`{p}`: the lossless priority)
    take: str = ""       # gNMI: what of the update becomes the metric, where the path holds more


class Metric(NamedTuple):
    name: str            # what it measures, as exporters.yaml and docs/monitoring.md title it
    need: str            # which switches subscribe: "ports" (all), "lossless" (with a lossless priority),
                         # "buffers" (with designed pools); "servers": none (node-exporter, DCGM)
    alerts: tuple[str, ...]
    labels: str
    sources: tuple[Source, ...]


_OC_IF = "/interfaces/interface[name=*]/state"
_OC_BGP = ("/network-instances/network-instance[name=default]/protocols/protocol[identifier=BGP][name=BGP]/bgp/"
           "neighbors/neighbor[neighbor-address=*]/state/session-state")
_OC_OPTIC = "/components/component[name=*]/transceiver"

METRICS: tuple[Metric, ...] = (
    Metric("port state", "ports", ("TetonLinkDown",), "device, port", (
        Source("servers", NODE, "node_network_up"),
        Source("sonic", NODE, "node_network_up"),
        Source("sonic", GNMI, "teton_gnmi_port_oper_up", SONIC_APPL, "PORT_TABLE/Ethernet*/oper_status",
               "up: 1, else 0"),
        Source("eos", GNMI, "teton_gnmi_port_oper_up", OPENCONFIG, f"{_OC_IF}/oper-status", "UP: 1, else 0"))),
    Metric("carrier changes", "ports", ("TetonLinkFlapping",), "device, port", (
        Source("servers", NODE, "node_network_carrier_changes_total"),
        Source("sonic", NODE, "node_network_carrier_changes_total"),
        Source("eos", GNMI, "teton_gnmi_port_carrier_transitions_total", OPENCONFIG,
               f"{_OC_IF}/counters/carrier-transitions"))),
    Metric("port errors", "ports", ("TetonPortErrors",), "device, port", (
        Source("servers", NODE, "node_network_receive_errs_total"),
        Source("servers", NODE, "node_network_transmit_errs_total"),
        Source("sonic", GNMI, "teton_gnmi_port_in_errors_total", SONIC_COUNTERS,
               "COUNTERS/Ethernet*/SAI_PORT_STAT_IF_IN_ERRORS"),
        Source("sonic", GNMI, "teton_gnmi_port_out_errors_total", SONIC_COUNTERS,
               "COUNTERS/Ethernet*/SAI_PORT_STAT_IF_OUT_ERRORS"),
        Source("eos", GNMI, "teton_gnmi_port_in_errors_total", OPENCONFIG, f"{_OC_IF}/counters/in-errors"),
        Source("eos", GNMI, "teton_gnmi_port_out_errors_total", OPENCONFIG, f"{_OC_IF}/counters/out-errors"))),
    Metric("BGP session state", "ports", ("TetonBgpSessionDown",), "device, peer_address, afi", (
        Source("sonic", FRR, "frr_bgp_peer_state"),
        Source("eos", GNMI, "teton_gnmi_bgp_session_established", OPENCONFIG, _OC_BGP,
               "ESTABLISHED: 1, else 0; afi by the neighbour address's family"))),
    Metric("PFC pause time received", "lossless", ("TetonPfcPauseHigh",), "device, port, priority", (
        Source("sonic", GNMI, "teton_gnmi_pfc_rx_pause_seconds_total", SONIC_COUNTERS,
               "COUNTERS/Ethernet*/SAI_PORT_STAT_PFC_{p}_RX_PAUSE_DURATION_US",
               "microseconds / 1e6"),)),
    Metric("PFC watchdog storms", "lossless", ("TetonPfcWatchdogStorm",), "device, port, priority", (
        Source("sonic", GNMI, "teton_gnmi_pfcwd_storms_total", SONIC_COUNTERS,
               "COUNTERS/Ethernet*/Pfcwd",
               "PFC_WD_QUEUE_STATS_DEADLOCK_DETECTED of <port>:{p}"),)),
    Metric("ECN-marked packets", "lossless", ("TetonEcnMarkingHigh", "TetonEcnMarksUndesigned"),
           "device, port, queue", (
        Source("sonic", GNMI, "teton_gnmi_ecn_marked_packets_total", SONIC_COUNTERS,
               "COUNTERS/Ethernet*/Queues",
               "SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS of <port>:{p}"),
        Source("sonic", GNMI, "teton_gnmi_queue_tx_packets_total", SONIC_COUNTERS,
               "COUNTERS/Ethernet*/Queues",
               "SAI_QUEUE_STAT_PACKETS of <port>:{p}"))),
    Metric("shared buffer pool occupancy", "buffers", ("TetonBufferOccupancyHigh",), "device, pool", (
        Source("sonic", GNMI, "teton_gnmi_buffer_pool_occupancy_bytes", SONIC_COUNTERS,
               "COUNTERS_BUFFER_POOL_NAME_MAP",
               "SAI_BUFFER_POOL_STAT_CURR_OCCUPANCY_BYTES of each pool's COUNTERS:<oid>"),)),
    Metric("optical receive power", "ports", ("TetonOpticRxPowerOutOfRange",), "device, port, lane", (
        Source("sonic", GNMI, "teton_gnmi_optic_rx_power_dbm", SONIC_STATE,
               "TRANSCEIVER_DOM_SENSOR/Ethernet*",
               "rx1power .. rx8power (lane 1 .. 8)"),
        Source("sonic", GNMI, "teton_gnmi_optic_rx_power_low_warning_dbm", SONIC_STATE,
               "TRANSCEIVER_DOM_THRESHOLD/Ethernet*/rxpowerlowwarning"),
        Source("sonic", GNMI, "teton_gnmi_optic_rx_power_high_warning_dbm", SONIC_STATE,
               "TRANSCEIVER_DOM_THRESHOLD/Ethernet*/rxpowerhighwarning"),
        Source("eos", GNMI, "teton_gnmi_optic_rx_power_dbm", OPENCONFIG,
               f"{_OC_OPTIC}/physical-channels/channel[index=*]/state/input-power/instant"),
        Source("eos", GNMI, "teton_gnmi_optic_rx_power_low_warning_dbm", OPENCONFIG,
               f"{_OC_OPTIC}/thresholds/threshold[severity=WARNING]/state/input-power-lower"),
        Source("eos", GNMI, "teton_gnmi_optic_rx_power_high_warning_dbm", OPENCONFIG,
               f"{_OC_OPTIC}/thresholds/threshold[severity=WARNING]/state/input-power-upper"))),
    Metric("storage mounts", "servers", ("TetonStorageMountDown",), "device, mountpoint", (
        Source("servers", NODE, "node_filesystem_device_error"),)),
    Metric("GPU XID errors", "servers", ("TetonGpuXid",), "device, gpu", (
        Source("servers", DCGM, "DCGM_FI_DEV_XID_ERRORS"),)),
    Metric("GPU row remapping", "servers", ("TetonGpuRowRemapPending", "TetonGpuRowRemapFailed"), "device, gpu", (
        Source("servers", DCGM, "DCGM_FI_DEV_ROW_REMAP_PENDING"),
        Source("servers", DCGM, "DCGM_FI_DEV_ROW_REMAP_FAILURE"))),
    Metric("GPUs present", "servers", ("TetonGpuMissing",), "device, gpu", (
        Source("servers", DCGM, "DCGM_FI_DEV_GPU_TEMP"),)),
    Metric("scrapes", "servers", ("TetonExporterDown",), "device, job, instance", (
        Source("servers", "Prometheus itself", "up"),)),
)

DCGM_FIELDS = (   # dcgm-exporter's counters CSV: field, Prometheus type, help (NVIDIA's DCGM field list)
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C)."),
    ("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered."),
    ("DCGM_FI_DEV_ROW_REMAP_PENDING", "gauge", "Whether remapping of rows is pending (a GPU reset applies it)."),
    ("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed."),
    ("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Number of remapped rows for uncorrectable errors."),
)

WATCHED_NOS = ("sonic", "eos")
"""The NOSes whose ports and sessions teton names a source for; servers (no NOS) are watched through node-exporter
and DCGM.  FBOSS (fb303 counters over thrift, BGP++) and InfiniBand switches (the subnet manager's, watched by UFM or
ibdiagnet) have none here: their devices carry `monitored="false"` and the link and session alerts skip their ends."""


def monitored(nos: str | None) -> bool:
    return nos is None or nos in WATCHED_NOS


def exporter_names() -> list[str]:
    """Every metric name the rules read from an exporter or collector, once, sorted."""
    return sorted({s.metric for m in METRICS for s in m.sources})
