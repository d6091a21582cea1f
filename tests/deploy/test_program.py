"""The Pulumi program's resources under Pulumi's mocks (no engine): one Switch per switch with its files as inputs,
one HostRack per rack of hosts, gates chaining the waves, components Cluster -> Zone -> Rack."""

from __future__ import annotations

import asyncio
import shutil

import pytest
from pulumi.runtime.mocks import MockMonitor, Mocks

from teton.deploy.program import Settings, deploy, plan_stack
from teton.deploy.registrar import Registrar
from teton.findings import TetonError
from teton.secrets import PREFIX

STACK = "urn:pulumi:test::teton::pulumi:pulumi:Stack::teton-test"


class Recording(MockMonitor):
    def __init__(self) -> None:
        class M(Mocks):
            def new_resource(self, args):
                return f"{args.name}-id", {}

            def call(self, args):
                return {}

        super().__init__(M())
        self.requests = []

    def RegisterResource(self, request):  # noqa: N802
        self.requests.append(request)
        return super().RegisterResource(request)


def register(build, mode="twin"):
    monitor = Recording()
    registrar = Registrar(monitor)
    try:
        summary = asyncio.run(deploy(plan_stack(Settings(build, mode=mode)), registrar, STACK))
    finally:
        registrar.close()
    return summary, {(r.type, r.name): r for r in monitor.requests}


def test_one_switch_resource_per_twin_switch_with_its_files_as_inputs(lab_build, lab_fabric):
    summary, reqs = register(lab_build)
    switches = {n for t, n in reqs if t == "teton:index:Switch"}
    assert switches == {d.name for d in lab_fabric.switches()}        # the backend and the front end
    assert summary["switches"] == 29 and summary["not_on_twin"] == []
    r = reqs[("teton:index:Switch", "z01-ctsw01")]
    files = {k: v for k, v in r.object.fields["files"].struct_value.items()}
    assert set(files) == {"startup-config", "structured-config.json"}
    assert files["startup-config"] == (lab_build / "devices/z01-ctsw01/startup-config").read_text()
    assert PREFIX + "bgp_backend" in files["startup-config"]      # references, never values
    assert r.parent.endswith("teton:index:Rack::z01-n01") and "teton:index:Zone" in r.parent
    racks = {n for t, n in reqs if t == "teton:index:HostRack"}
    assert racks == {"z01-r001-hosts", "z01-r002-hosts", "z02-r001-hosts", "z02-r002-hosts",
                     "s1-r01-hosts", "s2-r01-hosts", "svc-r01-hosts"}      # storage and service racks too


def test_waves_chain_through_gates(lab_build):
    summary, reqs = register(lab_build)
    gates = sorted(n for t, n in reqs if t == "teton:index:Gate")
    assert len(gates) == len(summary["waves"]) and gates[0] == "gate-00-canary"
    canary = reqs[("teton:index:Gate", "gate-00-canary")]
    wave0 = sorted(name for (kind, name), r in reqs.items()
                   if kind == "teton:index:Switch" and r.object.fields["wave"].number_value == 0)
    assert sorted(u.split("::")[-1] for u in canary.dependencies) == wave0
    later = reqs[("teton:index:Switch", "z02-r002-rtsw")]
    assert [u.split("::")[-1] for u in later.dependencies] == [_gate_before(gates, later)]
    host = reqs[("teton:index:HostRack", "z01-r001-hosts")]
    assert [u.split("::")[-1] for u in host.dependencies] == [gates[-1]]


def _gate_before(gates, switch_request):
    wave = int(switch_request.object.fields["wave"].number_value)
    return next(g for g in gates if g.startswith(f"gate-{wave - 1:02d}-"))


def test_live_target_covers_every_switch_and_every_rack_of_hosts(lab_build, lab_fabric):
    summary, reqs = register(lab_build, mode="live")
    assert summary["switches"] == len(lab_fabric.switches()) and summary["not_on_twin"] == []
    assert ("teton:index:HostRack", "s1-r01-hosts") in reqs
    r = reqs[("teton:index:Switch", "z01-r001-frsw")]
    assert r.object.fields["transport"].string_value == "live" and r.object.fields["mgmt"].string_value


def test_a_folder_that_is_no_build_is_refused(tmp_path, lab_build):
    shutil.copytree(lab_build, tmp_path / "b")
    (tmp_path / "b" / "manifest.json").unlink()
    with pytest.raises(TetonError, match="is not a teton build folder"):
        plan_stack(Settings(tmp_path / "b"))
    with pytest.raises(TetonError, match="use 'twin' or 'live'"):
        plan_stack(Settings(lab_build, mode="both"))


@pytest.fixture(scope="module")
def ib_build(tmp_path_factory):
    """lab-ib with hardware GUIDs (a GUID map of every switch and HCA): a build a live deploy takes."""
    import yaml

    from tests.helpers import INVENTORY
    from teton.pipeline import build, load_and_design

    tmp = tmp_path_factory.mktemp("ib")
    fabric = load_and_design(INVENTORY / "lab-ib.yaml").fabric
    names = sorted([d.name for d in fabric.devices.values() if d.nos == "opensm"]
                   + [f"{d.name} {hca}" for d in fabric.devices.values() for hca in d.attrs.get("hca_guids", {})])
    (tmp / "guids.map").write_text("".join(f'0x0c42a103{n:08x} "{name}"\n' for n, name in enumerate(names, 1)))
    data = yaml.safe_load((INVENTORY / "lab-ib.yaml").read_text())
    data["backend"]["guid_map"] = "guids.map"
    (tmp / "lab-ib.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return build(tmp / "lab-ib.yaml", tmp / "lab-ib", live=True).path


def test_a_live_deploy_refuses_a_build_of_synthetic_guids(tmp_path):
    from tests.helpers import INVENTORY
    from teton.pipeline import build

    sim = build(INVENTORY / "lab-ib.yaml", tmp_path / "lab-ib").path
    with pytest.raises(TetonError, match="GUIDs are synthetic .* backend.guid_map"):
        plan_stack(Settings(sim, mode="live"))
    assert plan_stack(Settings(sim)).subnet_manager is None       # the twin runs its front end, as before


def test_an_infiniband_backend_is_one_subnet_manager_resource_before_the_waves(ib_build):
    summary, reqs = register(ib_build, mode="live")
    sm = reqs[("teton:index:SubnetManager", "opensm")]
    files = {k: v for k, v in sm.object.fields["files"].struct_value.items()}
    assert "ib/opensm.conf" in files and "ib/partitions.conf" in files
    assert [h.string_value for h in sm.object.fields["hosts"].list_value.values] == ["ib-sm1", "ib-sm2"]
    assert not any(kind == "teton:index:Switch" and name.startswith(("z01-leaf", "spine")) for kind, name in reqs)
    canary = reqs[("teton:index:Gate", "gate-00-canary")]
    first = next(r for (kind, _), r in reqs.items()
                 if kind == "teton:index:Switch" and r.object.fields["wave"].number_value == 0)
    assert [u.split("::")[-1] for u in first.dependencies] == ["opensm"] and canary.dependencies
    twin_summary, twin_reqs = register(ib_build)
    assert not any(kind == "teton:index:SubnetManager" for kind, _ in twin_reqs)
    assert "spine01" in twin_summary["not_on_twin"]
