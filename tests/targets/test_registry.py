"""Adding a target is adding one package (or registering one): the spec rules, the CLI, the build, validate and the
manifest pick it up, and nothing else changes.  A whole NOS added from outside (its port naming, templates and
transports, on the twin): tests/targets/test_outside_nos.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import write_spec
from teton import targets
from teton.cli import main
from teton.fabric import Device, Fabric
from teton.findings import Finding
from teton.pipeline import build
from teton.targets import BuildFiles, DeviceTarget, DeviceView, Files, PortView, RenderContext
from teton.targets.frr import render_frr
from teton.validate.rendered import validate_rendered

WHITEBOX = {"name": "whitebox-32x400", "vendor": "any", "asic": "any", "asic_tbps": 12.8,
            "port_groups": [{"count": 32, "speed_gbps": 400, "lanes": 4, "form_factor": "QSFP-DD"}],
            "port_naming": "sonic", "nos": ["frr"], "mtu_max": 9216}


class FrrTarget(DeviceTarget):
    """A new NOS in a few lines: plain FRR on a Linux router, one integrated frr.conf per switch."""

    name = "frr"
    summary = "plain FRR routers: frr.conf per switch"
    nos = "frr"
    files = ("frr.conf",)

    def render_device(self, fabric: Fabric, device: Device, ctx: RenderContext,
                      state: Any) -> tuple[Files, list[Finding]]:
        assert device.routing is not None
        return {self.path(device.name, "frr.conf"): render_frr(device.name, device.routing)}, []

    def read_device(self, source: BuildFiles, device: Device,
                    state: Any) -> tuple[DeviceView | None, list[Finding]]:
        path = self.path(device.name, "frr.conf")
        text = source.text(path)
        interfaces = {i.name: PortView(i.mtu, tuple(a for a in (i.ipv4, i.ipv6) if a), f"{i.name}/mtu")
                      for i in device.interfaces}   # a real NOS would read its interface config back
        return DeviceView(device.name, "switch", path, interfaces=interfaces,
                          frr_conf=text), []


@pytest.fixture
def frr_spec(tmp_path, lab_data):
    """The lab with its CTSWs on a white box that runs plain FRR (a NOS teton has no built-in target for)."""
    lab_data["switch_models"] = [WHITEBOX]
    lab_data["backend"]["ctsw"].update(model="whitebox-32x400", nos="frr")
    return write_spec(tmp_path, lab_data)


@pytest.fixture
def frr_target():
    target = targets.register(FrrTarget())
    yield target
    targets.unregister(target.name)


def test_the_builtin_registry_lists_every_target_package():
    assert targets.names() == ["ansible", "cabling", "eos", "fabric", "fboss", "hosts", "kubernetes", "monitoring",
                              "opensm", "slurm", "sonic"]
    assert targets.nos_target("sonic").name == "sonic" and targets.nos_target("fboss").name == "fboss"
    assert targets.nos_target("frr") is None


def test_without_its_target_a_new_nos_is_refused(frr_spec, tmp_path):
    result = CliRunner().invoke(main, ["render", str(frr_spec), "-o", str(tmp_path / "b")])
    assert result.exit_code == 2 and "backend.ctsw.nos" in result.output and "no target renders 'frr'" in result.output


def test_a_registered_nos_target_renders_the_lab_validates_and_lands_in_the_manifest(frr_target, frr_spec, tmp_path):
    out = build(frr_spec, tmp_path / "lab").path
    text = (out / "devices/z01-ctsw01/frr.conf").read_text()
    assert "router bgp 4200000101" in text and " neighbor RTSW_V4 passive" in text
    assert not (out / "devices/z01-ctsw01/startup-config").exists()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"]["devices/z01-ctsw01/frr.conf"]["target"] == "frr"
    assert manifest["targets"]["frr"] == "1"
    # its read-back joins the cross-device checks: both ends of every session, MTU, router-ids
    assert validate_rendered(out) == []


def test_only_renders_the_named_target_and_keeps_the_others(frr_target, frr_spec, tmp_path):
    out = build(frr_spec, tmp_path / "lab").path
    before = (out / "devices/atsw01/startup-config").read_bytes()
    (out / "devices/z01-ctsw01/frr.conf").unlink()
    result = build(frr_spec, out, only=("frr",))
    assert result.rendered == ("frr",)
    assert set(result.kept) == {"ansible", "cabling", "eos", "fabric", "hosts", "kubernetes", "monitoring", "slurm",
                                "sonic"}
    assert (out / "devices/z01-ctsw01/frr.conf").is_file()
    assert (out / "devices/atsw01/startup-config").read_bytes() == before
    assert validate_rendered(out) == []


def test_the_cli_offers_registered_targets(frr_target):
    """Registered after teton.cli was imported: `--only` reads the registry when the command runs."""
    assert "frr" in CliRunner().invoke(main, ["render", "--help"]).output
    listing = json.loads(CliRunner().invoke(main, ["targets", "--json"]).output)
    assert {"name": "frr", "nos": "frr", "summary": FrrTarget.summary, "version": "1"} in listing
