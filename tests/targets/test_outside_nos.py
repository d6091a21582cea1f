"""A NOS added from outside infra/teton: a target class, its port naming, its read-back and its templates, all defined
here, registered with `teton.targets.register`; the lab renders with its CTSWs on that NOS and `validate --rendered`
passes, touching no file of the teton package."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.helpers import write_spec
from teton import targets
from teton.catalogue.naming import PortPlace, port_namings
from teton.cli import main
from teton.fabric import Device, Fabric
from teton.findings import Finding
from teton.targets import BuildFiles, DeviceTarget, DeviceView, Files, PortView, RenderContext
from teton.targets.frr import render_frr
from teton.targets.templates import Templates
from teton.targets.transports import register_transport, transport_factory, unregister_transport

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = Templates(Path(__file__).parent / "cumulus")
WHITEBOX = {"name": "whitebox-32x400", "vendor": "any", "asic": "any", "asic_tbps": 12.8,
            "port_groups": [{"count": 32, "speed_gbps": 400, "lanes": 4, "form_factor": "QSFP-DD"}],
            "port_naming": "cumulus", "nos": ["cumulus"], "mtu_max": 9216}


def swp(p: PortPlace) -> str:
    """Cumulus Linux names front-panel ports swp1, swp2 ..."""
    return f"swp{p.index + 1}"


def read_interfaces(text: str, where: str) -> dict[str, PortView]:
    """An ifupdown2 file read back: {port: MTU and addresses}."""
    ports: dict[str, PortView] = {}
    current = None
    for line in text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == "iface":
            current = ports.setdefault(rest, PortView(None, (), f"{where}:iface {rest}"))
        elif word == "mtu" and current is not None:
            current.mtu = int(rest)
        elif word == "address" and current is not None:
            current.addresses += (rest,)
    return ports


class CumulusTarget(DeviceTarget):
    """Cumulus-style switches: FRR's frr.conf and an ifupdown2 interfaces file per switch."""

    name = "cumulus"
    summary = "Cumulus-style switches: frr.conf and /etc/network/interfaces"
    nos = "cumulus"
    files = ("frr.conf", "interfaces")
    port_namings = {"cumulus": swp}

    def render_device(self, fabric: Fabric, device: Device, ctx: RenderContext,
                      state: Any) -> tuple[Files, list[Finding]]:
        assert device.routing is not None
        return {self.path(device.name, "frr.conf"): render_frr(device.name, device.routing),
                self.path(device.name, "interfaces"): TEMPLATES.render("interfaces.j2", hostname=device.name,
                                                                       interfaces=device.interfaces)}, []

    def read_device(self, source: BuildFiles, device: Device,
                    state: Any) -> tuple[DeviceView | None, list[Finding]]:
        frr, ifaces = self.path(device.name, "frr.conf"), self.path(device.name, "interfaces")
        text = source.text(frr)
        return DeviceView(device.name, "switch", frr, frr_conf=text,
                          interfaces=read_interfaces(source.text(ifaces), ifaces), qos_file=ifaces), []


@pytest.fixture
def cumulus_spec(tmp_path, lab_data):
    """The lab with its CTSWs on a white box running the outside NOS."""
    lab_data["switch_models"] = [WHITEBOX]
    lab_data["backend"]["ctsw"].update(model="whitebox-32x400", nos="cumulus")
    return write_spec(tmp_path, lab_data)


@pytest.fixture
def cumulus():
    target = targets.register(CumulusTarget())
    yield target
    targets.unregister(target.name)


def test_a_nos_from_outside_renders_the_lab_and_validate_rendered_passes(cumulus, cumulus_spec, tmp_path):
    out = tmp_path / "lab"
    result = CliRunner().invoke(main, ["render", str(cumulus_spec), "-o", str(out)])
    assert result.exit_code == 0, result.output
    # its port naming named the CTSWs' ports in the design (fabric.json) and in its own template's file
    fabric = json.loads((out / "fabric.json").read_text())
    assert next(d for d in fabric["devices"] if d["name"] == "z01-ctsw01")["nos"] == "cumulus"
    ports = {end["port"] for link in fabric["links"] for end in (link["a"], link["b"]) if end["device"] == "z01-ctsw01"}
    assert ports and ports <= {f"swp{n}" for n in range(1, 33)}
    interfaces = (out / "devices/z01-ctsw01/interfaces").read_text()
    assert interfaces.startswith("# z01-ctsw01: /etc/network/interfaces")
    assert all(f"iface {p}\n    mtu " in interfaces for p in ports)
    assert "router bgp 4200000101" in (out / "devices/z01-ctsw01/frr.conf").read_text()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["files"]["devices/z01-ctsw01/interfaces"]["target"] == "cumulus"
    # its read-back joins the cross-device checks: both ends of every session and MTU against the RTSWs and ATSWs
    result = CliRunner().invoke(main, ["validate", "--rendered", str(out)])
    assert result.exit_code == 0, result.output
    assert "cross-device checks clean" in result.output
    # the CLI offers it without a reload: `--only` reads the registry when the command runs
    (out / "devices/z01-ctsw01/interfaces").unlink()
    result = CliRunner().invoke(main, ["render", str(cumulus_spec), "-o", str(out), "--only", "cumulus"])
    assert result.exit_code == 0, result.output
    assert (out / "devices/z01-ctsw01/interfaces").read_text() == interfaces


def test_a_broken_read_back_of_the_outside_nos_is_caught_by_validate_rendered(cumulus, cumulus_spec, tmp_path):
    out = tmp_path / "lab"
    assert CliRunner().invoke(main, ["render", str(cumulus_spec), "-o", str(out)]).exit_code == 0
    path = out / "devices/z01-ctsw01/interfaces"
    path.write_text(path.read_text().replace("mtu 9100", "mtu 1500", 1))
    result = CliRunner().invoke(main, ["validate", "--rendered", str(out)])
    assert result.exit_code != 0 and "z01-ctsw01" in result.output


def test_its_port_naming_leaves_with_it(cumulus_spec, tmp_path):
    assert "cumulus" not in port_namings()
    target = targets.register(CumulusTarget())
    assert "cumulus" in port_namings()
    targets.unregister(target.name)
    assert "cumulus" not in port_namings() and "sonic" in port_namings()


def test_a_model_with_an_unregistered_port_naming_is_refused_with_its_spec_path(cumulus_spec, tmp_path):
    result = CliRunner().invoke(main, ["render", str(cumulus_spec), "-o", str(tmp_path / "b")])
    assert result.exit_code == 2
    assert "switch_models[0].port_naming" in result.output and "'cumulus'" in result.output


def test_the_provider_finds_a_nos_transport_in_the_registry():
    from teton.deploy.provider import Provider
    from teton.findings import TetonError

    with pytest.raises(TetonError, match="no live transport for NOS 'cumulus'"):
        Provider().orchestrator.transport("live", "cumulus")
    register_transport("live", "cumulus", lambda s: ("cumulus-ssh", dict(s.config)))
    try:
        provider = Provider()
        provider.config = {"sshPort": 22}
        assert provider.orchestrator.transport("live", "cumulus") == ("cumulus-ssh", {"sshPort": 22})
        assert transport_factory("twin", "cumulus") is transport_factory("twin", "sonic")   # the twin runs any NOS
    finally:
        unregister_transport("live", "cumulus")
    assert transport_factory("live", "eos") is not transport_factory("live", "sonic")


def test_the_independence_contract_covers_every_target_package():
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    independent = {m for c in contracts if c["type"] == "independence" for m in c["modules"]}
    packages = {".".join(type(t).__module__.split(".")[:3]) for t in targets.targets()}
    assert packages == independent


@pytest.mark.root
def test_the_outside_nos_runs_in_the_twin_and_the_deploy_layer_pushes_its_switches(cumulus, lab_data, tmp_path):
    """`teton twin up` of the build, then the deploy layer's twin transport (from the registry) pushes and checks
    every switch of the new NOS as `pulumi up` does."""
    from teton.deploy.provider import Provider
    from teton.fabric.serialize import load_fabric
    from teton.secrets import referenced_secrets
    from teton.targets.transports import Device
    from teton.twin import service

    twin = f"cum{os.getpid()}"   # its own twin: never one another run of the suite (another checkout) starts
    lab_data.update(name=twin)
    lab_data["switch_models"] = [WHITEBOX]
    lab_data["backend"]["ctsw"].update(model="whitebox-32x400", nos="cumulus")
    out = tmp_path / twin
    assert CliRunner().invoke(main, ["render", str(write_spec(tmp_path, lab_data)), "-o", str(out)]).exit_code == 0
    fabric = load_fabric((out / "fabric.json").read_text())
    ctsws = sorted(d.name for d in fabric.switches("cumulus"))
    secrets = {n: f"pw-{n}" for p in (out / "devices").rglob("*") if p.is_file()
               for n in referenced_secrets(p.read_text())}
    service.down(twin)
    report = service.up(str(out), secrets=secrets)   # the switches run the site's secrets, as deployed ones do
    try:
        assert report.sessions == 128 + 40 and report.ecmp_mismatches == ()     # the backend's and the front end's
        assert not set(ctsws) & set(report.eos_as_frr)   # they run their own rendered frr.conf
        provider = Provider()
        provider.config = {"secrets": secrets}
        for name in ctsws:
            files = {f: (out / "devices" / name / f).read_text() for f in CumulusTarget.files}
            device = Device(name, "cumulus", files, fabric=fabric)
            transport = provider.orchestrator.transport("twin", "cumulus", twin)
            transport.snapshot(device)
            transport.push(device)
            assert transport.check(device, 30) == [], name
            assert transport.drift(device) == [], name
        assert service.verify(str(out)).ok
    finally:
        service.down(twin)
