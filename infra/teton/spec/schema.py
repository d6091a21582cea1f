"""The spec's JSON Schema (draft 2020-12), generated from the typed model."""

from __future__ import annotations

from typing import Any

from teton.spec.model import Cluster

DIALECT = "https://json-schema.org/draft/2020-12/schema"


def spec_schema() -> dict[str, Any]:
    schema = Cluster.model_json_schema(mode="validation")
    return {"$schema": DIALECT, "$id": "https://teton.dev/schemas/cluster.json", **schema}
