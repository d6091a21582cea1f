"""What the rendered unit tests (`monitoring/tests/*.test.yml`, `promtool test rules`) are made of: a fixed sample of
the design, the input series an exporter would give for each device (under the names and labels it really uses,
after the scrape configuration's relabelling), and the alerts expected from them, labels and summary included.

Each test group holds series that must fire an alert and series that must not (just under its threshold, or healthy),
and an alert with a duration is checked one evaluation before it (nothing yet) and at it (firing): so a threshold or a
`for:` changed in the rules file, and not in the design, fails the test.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, TypeVar

from teton.fabric.intent import MonitoringIntent
from teton.fabric.model import Device, Fabric
from teton.targets.monitoring.designed import Series
from teton.targets.monitoring.rules import Alert, alerts, expand
from teton.targets.monitoring.scrape import address
from teton.targets.monitoring.text import labels_of, number, series

T = TypeVar("T")
JOB = {"node": "teton-node", "frr": "teton-frr", "dcgm": "teton-dcgm", "gnmi": "teton-gnmi"}


def pick(items: Sequence[T], n: int) -> list[T]:
    """At most `n` of `items`, evenly spread from the first to the last (the same every render)."""
    if len(items) <= n:
        return list(items)
    if n == 1:
        return [items[0]]
    return [items[round(k * (len(items) - 1) / (n - 1))] for k in range(n)]


def port_source(d: Device) -> str | None:
    """Where a device's port state, carrier changes and errors come from: node-exporter or the gNMI collector."""
    return "node" if d.nos in (None, "sonic") else "gnmi" if d.nos == "eos" else None


def bgp_source(d: Device) -> str | None:
    return "frr" if d.nos == "sonic" else "gnmi" if d.nos == "eos" else None


def end_labels(link: Series, end: str) -> dict[str, str]:
    """An end of a designed cable as `teton:designed_link_end` labels it."""
    x = dict(link.labels)
    if end == "b":
        x["device"], x["peer_device"] = x["peer_device"], x["device"]
        x["port"], x["peer_port"] = x["peer_port"], x["port"]
    return {**x, "end": end}


class Group:
    """One test group of a promtool test file: input series, and the alerts and expressions expected of them."""

    def __init__(self, fabric: Fabric, m: MonitoringIntent, what: str) -> None:
        self.fabric, self.m, self.what = fabric, m, what
        self.step = m.evaluation_interval_s
        self.inputs: dict[str, str] = {}
        self.tests: list[dict[str, Any]] = []
        self.exprs: list[dict[str, Any]] = []
        self._alerts = {a.name: a for a in alerts(m)}

    def add(self, name: str, labels: Mapping[str, str | int | None], values: str) -> None:
        self.inputs.setdefault(series(name, labels_of(labels)), values)

    def designed(self, found: Iterable[Series], steps: int) -> None:
        for s in found:
            self.add(s.name, {**dict(s.labels), "job": "teton-designed", "instance": self.m.designed_at},
                     f"{number(s.value)}x{steps}")

    def instance(self, d: Device, source: str) -> dict[str, str]:
        if source == "gnmi":
            return {"job": JOB[source], "instance": self.m.gnmi_collector_at}
        port = {"node": self.m.node_exporter_port, "frr": self.m.frr_exporter_port,
                "dcgm": self.m.dcgm_exporter_port}[source]
        return {"job": JOB[source], "instance": f"{address(d) or d.name}:{port}"}

    def observed(self, d: Device, source: str, name: str, labels: Mapping[str, str | int | None], values: str) -> None:
        """A series of `d`'s exporter: its own labels, the scrape's `device`, `job` and `instance`."""
        self.add(name, {**labels, "device": d.name, **self.instance(d, source)}, values)

    def expect(self, alert: str, at: int, fired: Sequence[tuple[dict[str, str], str]], before: bool = True) -> None:
        """`alert` fires exactly for `fired` ((labels, value) of each) at `at` seconds; with a duration and `before`,
        one evaluation earlier it has not fired yet."""
        a = self._alerts[alert]
        if before and a.for_s and at - self.step >= 0:
            self.tests.append({"eval_time": f"{at - self.step}s", "alertname": alert, "exp_alerts": []})
        self.tests.append({"eval_time": f"{at}s", "alertname": alert,
                           "exp_alerts": [self._one(a, labels, value) for labels, value in
                                          sorted(fired, key=lambda x: sorted(x[0].items()))]})

    def _one(self, a: Alert, labels: dict[str, str], value: str) -> dict[str, Any]:
        return {"exp_labels": {**dict(sorted(labels.items())), "severity": a.severity},
                "exp_annotations": {"summary": expand(a.summary, labels, value), "description": a.why}}

    def count(self, expr: str, at: int, n: int) -> None:
        if not n:
            return            # count() of nothing is no sample, not 0
        self.exprs.append({"expr": f"count({expr})", "eval_time": f"{at}s",
                           "exp_samples": [{"labels": "{}", "value": n}]})

    def data(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.what, "interval": f"{self.step}s",
                               "input_series": [{"series": k, "values": v} for k, v in self.inputs.items()]}
        if self.tests:
            out["alert_rule_test"] = self.tests
        if self.exprs:
            out["promql_expr_test"] = self.exprs
        return out
