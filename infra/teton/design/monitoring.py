"""The monitoring intent: the spec's `monitoring:` (thresholds, durations, where the exporters listen) as the Fabric
carries it, so the rules teton renders (`teton.targets.monitoring`) come from the design like every other file."""

from __future__ import annotations

from teton.fabric.intent import MonitoringIntent
from teton.spec.monitoring import Monitoring


def monitoring(spec: Monitoring | None = None) -> MonitoringIntent:
    """The intent of `spec` (None: the defaults, docs/monitoring.md)."""
    return MonitoringIntent(**(spec if spec is not None else Monitoring()).model_dump())
