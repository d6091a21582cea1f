"""What collects the metrics: Prometheus's scrape configuration (`monitoring/prometheus.yml`, its targets in
`monitoring/targets/*.json` for `file_sd_configs`), the gNMI subscriptions of every switch (`monitoring/gnmi.yaml`,
gnmic's configuration format), dcgm-exporter's counters (`monitoring/dcgm-counters.csv`) and which exporter gives
each metric (`monitoring/exporters.yaml`).

Every target carries the label `device`, the device's name in the design: that is what the rules join on.  An
exporter's own `device` label (node-exporter's interface, DCGM's `nvidiaN`) is renamed `exported_device` by
Prometheus, and moved here to `port`, `fs_device` or `gpu_device`.
"""

from __future__ import annotations

import ipaddress
import json
from typing import Any

from teton.fabric.intent import MonitoringIntent
from teton.fabric.model import Device, Fabric
from teton.targets.monitoring.metrics import DCGM_FIELDS, METRICS, WATCHED_NOS, Source, monitored
from teton.targets.monitoring.text import dump_yaml

FRONTEND_NICS = ("host-fersw", "storage-fersw", "service-fersw")


def address(d: Device) -> str | None:
    """Where a device's exporters answer: a switch's management address, a server's first front-end address."""
    if d.nos is not None:
        return d.mgmt.split("/", 1)[0] if d.mgmt else None
    for family in ("ipv4", "ipv6"):
        for i in d.interfaces:
            value = getattr(i, family)
            if i.kind in FRONTEND_NICS and value:
                return str(value).split("/", 1)[0]
    return d.mgmt.split("/", 1)[0] if d.mgmt else None


def _host_port(addr: str, port: int) -> str:
    return f"[{addr}]:{port}" if ipaddress.ip_address(addr).version == 6 else f"{addr}:{port}"


def scrape_targets(fabric: Fabric, m: MonitoringIntent) -> tuple[dict[str, list[tuple[str, str]]], list[str]]:
    """{job: [(device, host:port)]} for the jobs whose targets are devices, and the devices with no address."""
    jobs: dict[str, list[tuple[str, str]]] = {"node": [], "frr": [], "dcgm": []}
    unreachable = []
    for d in fabric.devices.values():
        if d.nos is not None and d.nos != "sonic":
            continue                      # EOS: the gNMI collector; others: no source (exporters.yaml)
        a = address(d)
        if a is None:
            unreachable.append(d.name)
            continue
        jobs["node"].append((d.name, _host_port(a, m.node_exporter_port)))
        if d.nos == "sonic" and d.routing is not None:
            jobs["frr"].append((d.name, _host_port(a, m.frr_exporter_port)))
        if d.role == "host" and int(d.attrs.get("gpus", 0)):
            jobs["dcgm"].append((d.name, _host_port(a, m.dcgm_exporter_port)))
    return jobs, unreachable


def file_sd(entries: list[tuple[str, str]]) -> str:
    """A file_sd_configs file: one target per line, with its `device` label."""
    lines = [json.dumps({"labels": {"device": name}, "targets": [where]}, sort_keys=True) for name, where in entries]
    return "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n"


def _move(name_regex: str, to: str) -> dict[str, Any]:
    return {"source_labels": ["__name__", "exported_device"], "regex": f"{name_regex};(.+)", "target_label": to,
            "replacement": "$1"}


def prometheus_yml(fabric: Fabric, m: MonitoringIntent) -> str:
    node_relabel = [{"source_labels": ["__name__"], "regex": "teton_designed_.+", "action": "drop"},
                    _move("node_network_.+", "port"), _move("node_filesystem_.+", "fs_device"),
                    {"source_labels": ["__name__"], "regex": "node_(network|filesystem)_.+",
                     "target_label": "exported_device", "replacement": ""}]
    config = {
        "global": {"scrape_interval": f"{m.scrape_interval_s}s", "evaluation_interval": f"{m.evaluation_interval_s}s",
                   "external_labels": {"cluster": fabric.name}},
        "rule_files": ["rules/*.yml"],
        "scrape_configs": [
            {"job_name": "teton-designed", "static_configs": [{"targets": [m.designed_at]}],
             "metric_relabel_configs": [{"source_labels": ["__name__"], "regex": "teton_designed_.+",
                                         "action": "keep"}]},
            {"job_name": "teton-node", "file_sd_configs": [{"files": ["targets/node.json"]}],
             "metric_relabel_configs": node_relabel},
            {"job_name": "teton-frr", "file_sd_configs": [{"files": ["targets/frr.json"]}]},
            {"job_name": "teton-dcgm", "file_sd_configs": [{"files": ["targets/dcgm.json"]}],
             "metric_relabel_configs": [
                 {"source_labels": ["exported_device"], "regex": "(.+)", "target_label": "gpu_device",
                  "replacement": "$1"},
                 {"regex": "exported_device", "action": "labeldrop"}]},
            {"job_name": "teton-gnmi", "honor_labels": True, "static_configs": [{"targets": [m.gnmi_collector_at]}]},
        ]}
    head = (f"Prometheus's configuration for cluster {fabric.name}, rendered by teton from the design.\n"
            "Run it from monitoring/ (its paths are relative); see docs/monitoring.md.")
    return dump_yaml(config, head)


def _paths(source: Source, priority: int | None) -> str:
    return source.path.replace("{p}", str(priority)) if priority is not None else source.path


def subscriptions(fabric: Fabric, m: MonitoringIntent) -> str:
    """gnmic's configuration: the subscriptions (by NOS, origin and the design's lossless priority) and, per switch,
    the ones it takes."""
    subs: dict[str, dict[str, Any]] = {}
    targets: dict[str, dict[str, Any]] = {}
    for d in fabric.devices.values():
        if d.nos not in WATCHED_NOS or not d.mgmt or d.management is None:
            continue
        priorities = d.qos.pfc_priorities if d.qos is not None else ()
        needs = {"ports": (None,), "lossless": priorities, "buffers": (None,) if d.buffers is not None else ()}
        names = []
        for metric in METRICS:
            for source in metric.sources:
                if source.platform != d.nos or not source.path:
                    continue
                for p in needs.get(metric.need, ()):
                    name = f"{d.nos}-{source.origin.lower().replace('_', '-')}-{metric.need}"
                    name += f"-p{p}" if p is not None else ""
                    sub = subs.setdefault(name, {"paths": [], "mode": "stream", "stream-mode": "sample",
                                                 "sample-interval": f"{m.scrape_interval_s}s"})
                    if source.origin != "openconfig":
                        sub["target"] = source.origin
                    path = _paths(source, p)
                    if path not in sub["paths"]:
                        sub["paths"].append(path)
                    if name not in names:
                        names.append(name)
        where = f"{d.mgmt.split('/', 1)[0]}:{d.management.gnmi_port}"
        targets[where] = {"name": d.name, "subscriptions": sorted(names)}
    for sub in subs.values():
        sub["paths"].sort()
    head = (f"gNMI subscriptions of cluster {fabric.name} (gnmic's configuration format), rendered by teton.\n"
            "Each switch subscribes by its NOS and design (its lossless priority, its buffer pools). The collector\n"
            "exports them as teton_gnmi_* with labels device (the target's name) and port (exporters.yaml);\n"
            "credentials and TLS are the site's. Not exercised here: gnmic is not in Debian.")
    return dump_yaml({"subscriptions": dict(sorted(subs.items())), "targets": dict(sorted(targets.items()))}, head)


def dcgm_counters() -> str:
    head = "# dcgm-exporter's counters for teton's rules (DCGM FIELD, Prometheus metric type, help message)\n"
    return head + "".join(f"{field}, {kind}, {text}\n" for field, kind, text in DCGM_FIELDS)


def exporters_yaml(fabric: Fabric, m: MonitoringIntent, unreachable: list[str]) -> str:
    unwatched: dict[str, int] = {}
    for d in fabric.devices.values():
        if not monitored(d.nos):
            unwatched[str(d.nos)] = unwatched.get(str(d.nos), 0) + 1
    data = {
        "exporters": {
            "prometheus-node-exporter": {"on": "every server and SONiC switch, port "
                                         f"{m.node_exporter_port}; on the Prometheus host with "
                                         "--collector.textfile.directory=<a copy of monitoring/designed>, at "
                                         f"{m.designed_at}"},
            "prometheus-frr-exporter": {"on": f"every SONiC switch that runs BGP, port {m.frr_exporter_port}, with "
                                        "--collector.bgp6 (IPv6 sessions)"},
            "dcgm-exporter": {"on": f"every GPU host, port {m.dcgm_exporter_port}, with -f dcgm-counters.csv"},
            "gnmi-collector": {"on": f"{m.gnmi_collector_at}, subscribed as gnmi.yaml says, exporting teton_gnmi_* "
                               "with honor_labels"},
        },
        "metrics": [{"name": x.name, "alerts": list(x.alerts), "labels": x.labels, "sources": [
            {k: v for k, v in s._asdict().items() if v} for s in x.sources]} for x in METRICS],
        "not_watched": {"devices by NOS": dict(sorted(unwatched.items())),
                        "why": "teton names no exporter for their ports and sessions (FBOSS's fb303, InfiniBand's "
                               "subnet manager): teton_designed_device marks them monitored=false"},
        "unreachable": sorted(unreachable),
    }
    return dump_yaml(data, f"Where each metric of teton's rules comes from, for cluster {fabric.name}.")
