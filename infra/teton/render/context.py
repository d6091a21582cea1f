"""What every render target gets besides the Fabric."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class RenderContext:
    figures: dict[str, Any] = field(default_factory=dict)   # the plan
    sonic_yang_dir: Path | None = None                      # SONiC YANG models (None: the default folder)
    validate: bool = True                                   # validate structured configs before writing text
