"""The switch catalogue: built-in models (switches.yaml) extended or overridden by a spec's `switch_models`."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import yaml

from teton.spec.model import Cluster, SwitchModel

_BUILTIN = Path(__file__).with_name("switches.yaml")


@cache
def builtin_models() -> dict[str, SwitchModel]:
    entries = yaml.safe_load(_BUILTIN.read_text(encoding="utf-8"))
    return {e["name"]: SwitchModel.model_validate(e) for e in entries}


def catalogue_for(cluster: Cluster) -> dict[str, SwitchModel]:
    """Built-in models, then the spec's own (a spec entry with a built-in name replaces it)."""
    models = dict(builtin_models())
    for m in cluster.switch_models:
        models[m.name] = m
    return models
