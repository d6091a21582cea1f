"""Semantic checks: small named rules over the Spec and the Fabric, each returning findings with a spec path."""

from __future__ import annotations

from teton.checks.fabric_rules import FABRIC_RULES
from teton.checks.spec_rules import SPEC_RULES
from teton.design.fabric import Fabric
from teton.findings import Finding
from teton.spec.model import Cluster


def check_spec(cluster: Cluster, file: str) -> list[Finding]:
    return [f for rule in SPEC_RULES for f in rule(cluster, file)]


def check_fabric(fabric: Fabric, file: str) -> list[Finding]:
    return [f for rule in FABRIC_RULES for f in rule(fabric, file)]


def errors(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.severity == "error"]
