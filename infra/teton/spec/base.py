"""What every class of the spec shares: strict, frozen, no unknown keys; and how a field names the limit it obeys."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from teton import limits


def limit_text(name: str) -> str:
    """'at most MAX_X = n': the limit a bound comes from, for field descriptions (and so for error messages)."""
    return f"at most {name} = {getattr(limits, name):,}"


class SpecModel(BaseModel):
    # allow_inf_nan=False: inf and nan are not numbers a cluster can have, and they break strict JSON output
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)
