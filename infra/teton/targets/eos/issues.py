"""Problems found in an EOS structured config, with a readable path inside it."""

from __future__ import annotations

from dataclasses import dataclass

from teton.findings import TetonError

ROOT = "<root>"


@dataclass(frozen=True)
class AvdIssue:
    """One problem in a device's structured config."""

    device: str
    path: str  # dotted/indexed path inside the structured config, e.g. "ethernet_interfaces[3].mtu"
    message: str

    def __str__(self) -> str:
        return f"{self.device}: {self.path}: {self.message}"


class AvdValidationError(ValueError, TetonError):
    """Raised by `render_eos_config` when the structured config does not validate."""

    def __init__(self, issues: list[AvdIssue]) -> None:
        self.issues = tuple(issues)
        super().__init__("\n".join(str(i) for i in self.issues))
