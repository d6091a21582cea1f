"""Monitoring: `monitoring/`, what a healthy cluster shows, as Prometheus can check it (docs/monitoring.md).

- `designed/*.prom`: the design as info series (every device, cable, session, lossless priority, buffer pool, GPU
  count and storage mount), for node-exporter's textfile collector (`teton.targets.monitoring.designed`);
- `rules/teton.rules.yml`: a few generic rules joining what the exporters observe with the design, their thresholds
  and durations from the spec's `monitoring:` (`teton.targets.monitoring.rules`);
- `tests/*.test.yml`: their unit tests for `promtool test rules`, from a fixed sample of the design;
- `prometheus.yml` and `targets/*.json`: the scrape configuration, every target labelled with its device;
- `gnmi.yaml`: each switch's gNMI subscriptions (gnmic's format); `dcgm-counters.csv`: dcgm-exporter's fields;
  `exporters.yaml`: where each metric comes from, per NOS and for servers.

Prometheus's own tools are the validator: tests/targets/test_monitoring.py runs `promtool check rules`, `promtool
test rules` and `promtool check config` on the lab's and the 24k reference's files.
"""

from __future__ import annotations

from teton.design.monitoring import monitoring as default_monitoring
from teton.fabric.model import Fabric
from teton.targets.base import Files, RenderContext, Target
from teton.targets.monitoring.designed import designed, textfiles
from teton.targets.monitoring.rules import rule_groups
from teton.targets.monitoring.scrape import (
    dcgm_counters,
    exporters_yaml,
    file_sd,
    prometheus_yml,
    scrape_targets,
    subscriptions,
)
from teton.targets.monitoring.text import dump_yaml
from teton.targets.monitoring.unittests_hosts import test_files

DIR = "monitoring"


class MonitoringTarget(Target):
    name = "monitoring"
    cost_per_device = 0.0003         # the 24k references: ~2.2-2.6 s
    summary = ("monitoring/: Prometheus rules and their promtool tests from the design, the designed series, the "
               "scrape configuration and each switch's gNMI subscriptions")

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        m = fabric.monitoring or default_monitoring()
        found = designed(fabric)
        files = {f"{DIR}/designed/{name}": text for name, text in textfiles(found).items()}
        head = (f"Prometheus rules of cluster {fabric.name}, rendered by teton from the design: they join the\n"
                "exporters' metrics with the designed series (monitoring/designed/). See docs/monitoring.md.")
        files[f"{DIR}/rules/teton.rules.yml"] = dump_yaml(rule_groups(m), head)
        files.update({f"{DIR}/tests/{name}": text for name, text in test_files(fabric, m, found).items()})
        jobs, unreachable = scrape_targets(fabric, m)
        files[f"{DIR}/prometheus.yml"] = prometheus_yml(fabric, m)
        files.update({f"{DIR}/targets/{job}.json": file_sd(entries) for job, entries in jobs.items()})
        files[f"{DIR}/gnmi.yaml"] = subscriptions(fabric, m)
        files[f"{DIR}/dcgm-counters.csv"] = dcgm_counters()
        files[f"{DIR}/exporters.yaml"] = exporters_yaml(fabric, m, unreachable)
        return dict(sorted(files.items()))


TARGET = MonitoringTarget()
