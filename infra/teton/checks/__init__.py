"""Semantic checks: small named rules over the Spec and the Fabric, each returning findings with a spec path."""

from __future__ import annotations

from teton.checks.fabric_rules import DESIGN_RULES, FABRIC_RULES
from teton.checks.spec_rules import GUARD_RULES, SPEC_RULES
from teton.fabric.model import Fabric
from teton.findings import Finding
from teton.spec.model import Cluster


def check_spec(cluster: Cluster, file: str) -> list[Finding]:
    """Every spec rule in order.  A guard rule (the size limit, first) that finds an error stops the rest: they may
    cost per device or per port, and a spec asking for 10^9 devices must fail fast."""
    findings: list[Finding] = []
    for rule in SPEC_RULES:
        findings += rule(cluster, file)
        if rule in GUARD_RULES and errors(findings):
            break
    return findings


def check_fabric(fabric: Fabric, file: str, cluster: Cluster | None = None) -> list[Finding]:
    """The fabric rules, and with the spec at hand the rules that compare the two (names the spec gives)."""
    found = [f for rule in FABRIC_RULES for f in rule(fabric, file)]
    if cluster is not None:
        found += [f for rule in DESIGN_RULES for f in rule(cluster, fabric, file)]
    return found


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]
