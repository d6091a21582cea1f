"""Shared test helpers: paths of the bundled specs and writing a spec to a temporary file."""

from __future__ import annotations

from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
INVENTORY = ROOT / "inventory"
LAB = INVENTORY / "lab.yaml"
REF24K = INVENTORY / "reference-roce-24k.yaml"


def write_spec(tmp_path: Path, data: dict | str, name: str = "spec.yaml") -> Path:
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else yaml.safe_dump(data, sort_keys=False))
    return p


def dcqcn(data: dict) -> dict:
    """The DCQCN variant of a RoCE spec (as plain data): ECN marking on the lossless queue, the NICs' congestion
    control on; the lab itself runs PFC only, as the 24k reference (docs/qos.md)."""
    data["backend"]["qos"]["ecn"] = True
    return data


def fboss(data: dict) -> dict:
    """The FBOSS variant of a RoCE spec with a front end (as plain data): RTSWs on Minipack2 and front-end RSWs on
    Wedge400 run FBOSS.  BGP++ has no session password: the design protects both planes' sessions with GTSM instead
    (`teton.design.routing.session_protection`)."""
    data["backend"]["rtsw"].update(model="minipack2", nos="fboss")
    data["frontend"]["rsw"].update(model="wedge400", nos="fboss")
    return data


def fabric_of(spec: Path):
    """The spec's designed Fabric (loaded and designed as `teton diff` does)."""
    from teton.pipeline import design_spec
    from teton.spec.load import load_spec

    return design_spec(spec, load_spec(spec)).fabric


def changed_devices(a, b) -> set[str]:
    """The oracle of `teton diff`'s tests: devices whose designed record differs, or that are on one side only."""
    both = a.devices.keys() & b.devices.keys()
    return {n for n in both if a.devices[n] != b.devices[n]} | (a.devices.keys() ^ b.devices.keys())
