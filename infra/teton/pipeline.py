"""The one flow: spec file -> Cluster -> checks -> Fabric -> checks.  The CLI and the Pulumi program both use it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from teton.checks import check_fabric, check_spec, errors
from teton.design import design
from teton.design.fabric import Fabric
from teton.findings import Finding, SpecError
from teton.spec.load import load_spec, spec_lines, with_lines
from teton.spec.model import Cluster


@dataclass
class Designed:
    spec_file: str
    cluster: Cluster
    fabric: Fabric
    warnings: list[Finding]


def load_and_design(path: str | Path) -> Designed:
    """Load, check and design the spec at `path`; raises SpecError with every error found."""
    file = str(path)
    cluster = load_spec(path)
    findings = check_spec(cluster, file)
    if errors(findings):
        raise SpecError(with_lines(findings, spec_lines(path)))
    fabric = design(cluster)
    findings += check_fabric(fabric, file)
    findings = with_lines(findings, spec_lines(path)) if findings else findings
    if errors(findings):
        raise SpecError(findings)
    return Designed(file, cluster, fabric, findings)
