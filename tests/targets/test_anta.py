"""The EOS target's ANTA catalogs (`anta/<switch>.yml`): one per EOS switch, each loaded by ANTA's own loader
(`AntaCatalog.parse`), with a BGP test of every designed peer and its remote AS, the LLDP neighbour of every port by
cable, each port's speed and MTU and PFC on its lossless ports; ANTA's own tests pass on what the build's files say
(the startup-config, the peers' LLDP) and fail on a planted fault; pyavd's part needs no other switch's data."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from functools import cache
from ipaddress import ip_address
from pathlib import Path
from typing import Any

import pytest
import yaml
from anta.catalog import AntaCatalog
from anta.device import AsyncEOSDevice
from anta.inventory import AntaInventory
from anta.models import AntaTest
from anta.tests.configuration import VerifyRunningConfig
from anta.tests.connectivity import VerifyLLDPNeighbors

from teton.buildfolder import ANTA_DIR, ANTA_INVENTORY, BuildFolder, anta_catalog_path
from teton.fabric.model import Device, Fabric
from teton.fabric.neighbours import NEIGHBOURS_FILE, load_neighbours
from teton.targets import RenderContext
from teton.targets.eos.anta_catalog import REPLACED, catalog_yaml, device_catalog
from teton.targets.eos.avd import validated_structured_config
from teton.targets.eos.catalogs import render_catalogs
from teton.targets.eos.structured import structured_config
from teton.validate.rendered import read_views

NEIGHBOR = re.compile(r"neighbor (?P<address>\S+) remote-as (?P<asn>\d+)")
ROUTER = re.compile(r"router bgp (?P<asn>\d+)")


# ------------------------------------------------------------------------------------------------------ helpers

def eos(fabric: Fabric) -> list[Device]:
    return fabric.switches("eos")


@cache
def _parsed(path: str) -> AntaCatalog:
    return AntaCatalog.parse(path)


def catalog(build: Path, name: str) -> AntaCatalog:
    return _parsed(str(build / anta_catalog_path(name)))


def inputs(c: AntaCatalog, test: str) -> Any:
    """The inputs of the one `test` in catalog `c`."""
    found = [t.inputs for t in c.tests if t.test.name == test]
    assert len(found) == 1, f"{len(found)} {test} tests"
    return found[0]


def remote_asns(c: AntaCatalog) -> tuple[int | None, dict[str, int]]:
    """(the switch's own AS, {neighbour address: remote AS}) as the catalog's running-config rule states them: the
    `neighbor <address> remote-as <AS>` lines it expects in section `router bgp <AS>`."""
    local, peers = None, {}
    for rule in inputs(c, "VerifyRunningConfig").rules:
        assert rule.section is not None and len(rule.section) == 1 and (m := ROUTER.fullmatch(rule.section[0]))
        local = int(m["asn"])
        for entry in rule.entries:
            assert entry.mode == "exact" and not entry.absent and (n := NEIGHBOR.fullmatch(entry.match))
            peers[n["address"]] = int(n["asn"])
    return local, peers


def peer_problems(c: AntaCatalog, d: Device) -> list[str]:
    """How the catalog's BGP tests differ from the design's routing of `d` ([]: a session test of each designed peer
    and no other, each with the designed remote AS, and the switch's own AS)."""
    assert d.routing is not None
    design = {ip_address(n.address).compressed: n.remote_as for n in d.routing.neighbors}
    sessions = {ip_address(p.peer_address).compressed: p.description
                for p in inputs(c, "VerifyBGPPeerSession").bgp_peers}
    local, asns = remote_asns(c)
    problems = [f"{a}: no session test" for a in sorted(design.keys() - sessions.keys())]
    problems += [f"{a}: a session test of no designed peer" for a in sorted(sessions.keys() - design.keys())]
    problems += [f"{a}: remote AS {asns.get(a)} where the design has {asn}" for a, asn in sorted(design.items())
                 if asns.get(a) != asn]
    problems += [f"{a}: a remote AS of no designed peer" for a in sorted(asns.keys() - design.keys())]
    problems += [f"{a}: described {text!r}" for a, text in sorted(sessions.items())
                 if a in design and not str(text).endswith(f" AS{design[a]}")]
    if local != d.routing.asn:
        problems.append(f"router bgp {local} where the design has {d.routing.asn}")
    return problems


def run(test: type[AntaTest], inputs_: AntaTest.Input, name: str, output: Any) -> Any:
    """ANTA's own test logic on a command output (what the switch would answer), no switch needed."""
    device = AsyncEOSDevice(host="192.0.2.1", username="anta", password="anta", name=name)
    return asyncio.run(test(device, inputs=inputs_).test(eos_data=[output]))


def _break(build: Path, name: str, edit: Any) -> AntaCatalog:
    """The catalog of `name` with `edit` applied to its data, loaded again by ANTA's loader."""
    data = yaml.safe_load((build / anta_catalog_path(name)).read_text())
    edit(data)
    return AntaCatalog.from_dict(data)


def _test_inputs(data: dict[str, Any], module: str, test: str) -> dict[str, Any]:
    return next(t[test] for t in data[module] if test in t)


# ------------------------------------------------------------------------------------------------------ the lab

def test_one_catalog_per_eos_switch_loads_in_antas_loader_each_test_tagged_with_its_switch(lab_build, lab_fabric):
    names = [d.name for d in eos(lab_fabric)]
    files = sorted(p.name for p in (lab_build / ANTA_DIR).iterdir())
    assert files == sorted([*(f"{n}.yml" for n in names), Path(ANTA_INVENTORY).name]) and len(names) == 16
    manifest = json.loads((lab_build / "manifest.json").read_text())["files"]
    for n in names:
        c = catalog(lab_build, n)
        assert len(c.tests) > 20
        assert all(t.inputs.filters is not None and t.inputs.filters.tags == {n} for t in c.tests)
        assert manifest[anta_catalog_path(n)]["target"] == "eos"
        # pyavd's own tests are there, less the ones teton writes from the design
        assert {"VerifyInterfacesStatus", "VerifyRoutingProtocolModel", "VerifyNTP"} <= {t.test.name for t in c.tests}
        by = {t.test.name: t.inputs.result_overwrite.custom_field for t in c.tests}
        assert {by[name] for name in REPLACED} == {"Generated by teton"}


def test_anta_nrfu_loads_a_catalog_and_schedules_each_of_its_tests_on_its_switch_alone(lab_build):
    """The documented command, up to the connection (`--dry-run`): 16 switches in the inventory, each test once."""
    tests = len(catalog(lab_build, "z01-ctsw01").tests)
    files = ["-i", str(lab_build / ANTA_INVENTORY), "-c", str(lab_build / anta_catalog_path("z01-ctsw01"))]
    run_ = subprocess.run([sys.executable, "-c", "from anta.cli import cli; cli()", "nrfu", "-u", "anta", "-p", "anta",
                           *files, "--dry-run", "text"], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "COLUMNS": "250"})
    out = run_.stdout + run_.stderr
    assert run_.returncode == 0, out
    assert "Inventory contains 16 devices" in out and f"catalog contains {tests} tests" in out
    assert f"{tests} total tests scheduled across all selected devices" in out


def test_the_anta_inventory_names_every_eos_switch_by_its_management_address(lab_build, lab_fabric):
    inventory = AntaInventory.parse(lab_build / ANTA_INVENTORY, username="anta", password="anta")
    assert sorted(inventory) == sorted(d.name for d in eos(lab_fabric))
    for d in eos(lab_fabric):
        device = inventory[d.name]
        assert d.mgmt and dict(device.__rich_repr__())["host"] == d.mgmt.split("/")[0] and d.role in device.tags


def test_each_catalog_tests_every_designed_bgp_peer_with_its_remote_as(lab_build, lab_fabric):
    for d in eos(lab_fabric):
        assert d.routing is not None and d.routing.neighbors
        assert peer_problems(catalog(lab_build, d.name), d) == [], d.name


def test_the_remote_as_of_each_peer_is_the_as_the_peers_own_files_configure(lab_build, lab_fabric):
    views, _ = read_views(BuildFolder(lab_build), lab_fabric, RenderContext(validate=False), vendor=False)
    asn_at = {ip_address(a.split("/")[0]).compressed: v.asn for v in views if v.bgp is not None
              for p in v.interfaces.values() for a in p.addresses}
    for d in eos(lab_fabric):
        _, asns = remote_asns(catalog(lab_build, d.name))
        assert asns and all(asn_at[a] == asn for a, asn in asns.items()), d.name


def test_a_catalog_missing_a_peer_or_with_a_wrong_asn_is_told_apart(lab_build, lab_fabric):
    d = lab_fabric.devices["atsw01"]
    assert d.routing is not None
    first = d.routing.neighbors[0]

    def drop_peer(data: dict[str, Any]) -> None:
        _test_inputs(data, "anta.tests.routing.bgp", "VerifyBGPPeerSession")["bgp_peers"].pop(0)

    def wrong_asn(data: dict[str, Any]) -> None:
        entry = _test_inputs(data, "anta.tests.configuration", "VerifyRunningConfig")["rules"][0]["entries"][0]
        entry["match"] = entry["match"].replace(f"remote-as {first.remote_as}", f"remote-as {first.remote_as + 1}")

    assert peer_problems(_break(lab_build, d.name, drop_peer), d) == [f"{first.address}: no session test"]
    assert peer_problems(_break(lab_build, d.name, wrong_asn), d) == [
        f"{first.address}: remote AS {first.remote_as + 1} where the design has {first.remote_as}"]


def _startup(build: Path, name: str) -> str:
    return (build / "devices" / name / "startup-config").read_text()


def running_config_json(text: str) -> dict[str, Any]:
    """EOS's `show running-config | json` of a config in EOS's CLI: each line a key of its section's `cmds` (a line
    with lines indented under it, a section of its own)."""
    root: dict[str, Any] = {"cmds": {}}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, root)]
    for line in text.splitlines():
        if not line.strip() or line.strip() in ("!", "end") or line.lstrip().startswith("!"):
            continue
        depth = len(line) - len(line.lstrip())
        while stack[-1][0] >= depth:
            stack.pop()
        parent = stack[-1][1]
        if parent["cmds"] is None:
            parent["cmds"] = {}
        node: dict[str, Any] = {"cmds": None}
        parent.setdefault("cmds", {})[line.strip()] = node
        stack.append((depth, node))

    def shape(node: dict[str, Any]) -> Any:
        return None if node["cmds"] is None else {"cmds": {k: shape(v) for k, v in node["cmds"].items()}}
    return {"cmds": {k: shape(v) for k, v in root["cmds"].items()}}


def test_antas_running_config_test_passes_on_the_startup_config_and_fails_on_a_wrong_remote_as(lab_build, lab_fabric):
    for sw in eos(lab_fabric):
        rules = inputs(catalog(lab_build, sw.name), "VerifyRunningConfig")
        output = running_config_json(_startup(lab_build, sw.name))
        assert run(VerifyRunningConfig, rules, sw.name, output).result == "success", sw.name
    d = lab_fabric.devices["z01-ctsw01"]
    startup, rules = _startup(lab_build, d.name), inputs(catalog(lab_build, d.name), "VerifyRunningConfig")
    assert d.routing is not None
    n = d.routing.neighbors[-1]
    wrong = startup.replace(f"neighbor {n.address} remote-as {n.remote_as}\n",
                            f"neighbor {n.address} remote-as 65535\n")
    assert wrong != startup
    result = run(VerifyRunningConfig, rules, d.name, running_config_json(wrong))
    failed = [r.description for r in result.atomic_results if r.result == "failure"]
    assert result.result == "failure" and len(failed) == 1 and f"neighbor {n.address} remote-as" in failed[0]
    other_as = startup.replace(f"router bgp {d.routing.asn}\n", "router bgp 65535\n")
    assert run(VerifyRunningConfig, rules, d.name, running_config_json(other_as)).result == "failure"


def test_lldp_neighbours_are_the_expected_neighbour_of_each_port_by_cable(lab_build, lab_fabric):
    by_cable = load_neighbours((lab_build / NEIGHBOURS_FILE).read_text())
    for d in eos(lab_fabric):
        got = {str(n.port): (n.neighbor_device, n.neighbor_port)
               for n in inputs(catalog(lab_build, d.name), "VerifyLLDPNeighbors").neighbors}
        assert got == {p: (n.system, n.port_id) for p, n in by_cable[d.name].items()}, d.name
        assert len(got) == len(d.interfaces)
    # a SONiC peer is expected as it announces its port (its alias), not by the port's name
    fsw = {str(n.port): n for n in inputs(catalog(lab_build, "z01-ctsw01"), "VerifyLLDPNeighbors").neighbors}
    assert fsw["Ethernet3/1/1"].neighbor_device == "z01-r001-rtsw" and fsw["Ethernet3/1/1"].neighbor_port == "eth4/1/1"


def _lldp_output(d: Device, announced: dict[str, tuple[str, dict[str, str]]]) -> dict[str, Any]:
    """`show lldp neighbors detail` of `d` cabled as designed, each peer announcing what its own files configure."""
    out = {}
    for i in d.interfaces:
        system, ports = announced[i.peer]
        out[i.name] = {"lldpNeighborInfo": [{"systemName": system, "neighborInterfaceInfo": {
            "interfaceId_v2": ports.get(i.peer_port, i.peer_port)}}]}
    return {"lldpNeighbors": out}


def test_antas_lldp_test_passes_on_what_the_peers_files_announce_and_fails_on_two_crossed_cables(lab_build,
                                                                                               lab_fabric):
    views, _ = read_views(BuildFolder(lab_build), lab_fabric, RenderContext(validate=False), vendor=False)
    announced = {v.name: (v.lldp.system, dict(v.lldp.ports)) for v in views if v.lldp is not None}
    for d in eos(lab_fabric):
        neighbours = inputs(catalog(lab_build, d.name), "VerifyLLDPNeighbors")
        output = _lldp_output(d, announced)
        assert run(VerifyLLDPNeighbors, neighbours, d.name, output).result == "success", d.name
    a, b = sorted(output["lldpNeighbors"])[:2]
    crossed = {"lldpNeighbors": {**output["lldpNeighbors"], a: output["lldpNeighbors"][b],
                                 b: output["lldpNeighbors"][a]}}
    result = run(VerifyLLDPNeighbors, neighbours, d.name, crossed)
    assert result.result == "failure" and {r.description.split()[1] for r in result.atomic_results
                                           if r.result == "failure"} == {a, b}


def test_speed_mtu_pfc_and_reachability_inputs_are_the_fabrics(lab_build, lab_fabric):
    for d in eos(lab_fabric):
        c = catalog(lab_build, d.name)
        cfg = json.loads((lab_build / "devices" / d.name / "structured-config.json").read_text())
        speed = {str(i.name): i.speed for i in inputs(c, "VerifyInterfacesSpeed").interfaces}
        assert speed == {i.name: i.speed_gbps for i in d.interfaces}
        mtu = inputs(c, "VerifyL3MTU")
        specific = {str(k): v for m in mtu.specific_mtu for k, v in m.items()}
        assert specific == {i.name: i.mtu for i in d.interfaces} == {e["name"]: e["mtu"]
                                                                     for e in cfg["ethernet_interfaces"]}
        assert mtu.mtu in specific.values()
        hosts = {(str(h.source), str(h.destination)) for h in inputs(c, "VerifyReachability").hosts}
        assert hosts == {(own.split("/")[0], peer) for i in d.interfaces
                         for own, peer in ((i.ipv4, i.peer_ipv4), (i.ipv6, i.peer_ipv6)) if own and peer}
        pfc = [t.inputs for t in c.tests if t.test.name == "VerifyInterfacesPFCCounters"]
        lossless = [e["name"] for e in cfg["ethernet_interfaces"] if e.get("priority_flow_control", {}).get("enabled")]
        if d.qos is None:
            assert pfc == [] and lossless == []
        else:
            assert [[str(i) for i in p.interfaces] for p in pfc] == [lossless] and pfc[0].counters_threshold == 0
    assert any(d.qos is not None for d in eos(lab_fabric)) and any(d.qos is None for d in eos(lab_fabric))


def test_catalogs_are_the_same_bytes_when_rendered_again_from_the_fabric_alone(lab_build, lab_fabric):
    again = render_catalogs(lab_fabric, RenderContext(), {})   # no cache, structured configs made again
    on_disk = {p.relative_to(lab_build).as_posix(): p.read_text() for p in (lab_build / ANTA_DIR).iterdir()}
    assert again == on_disk and list(again) == sorted(again)


def test_pyavds_part_needs_no_other_switchs_data(lab_fabric, monkeypatch):
    """The catalog made with an AVDFabricData of the switch alone is the one made with every EOS switch's, all
    deployed (where pyavd's LLDP, reachability and BGP tests would find their EOS peers)."""
    from pyavd.api.anta import AVDFabricData

    import teton.targets.eos.anta_catalog as anta_catalog

    validated = {}
    for d in eos(lab_fabric):
        issues, validated[d.name] = validated_structured_config(d.name, structured_config(lab_fabric, d))
        assert not issues
    alone = {d.name: catalog_yaml(d.name, device_catalog(lab_fabric, d, validated[d.name])) for d in eos(lab_fabric)}
    everyone = {n: {**cfg, "metadata": {**cfg.get("metadata", {}), "is_deployed": True}}
                for n, cfg in validated.items()}
    fabric_data = AVDFabricData.from_structured_configs(everyone)
    assert len(fabric_data.loopback0_mapping) == len(everyone)

    class Everyone:
        @staticmethod
        def from_structured_configs(_: object) -> AVDFabricData:
            return fabric_data

    monkeypatch.setattr(anta_catalog, "AVDFabricData", Everyone)
    for d in eos(lab_fabric):
        assert catalog_yaml(d.name, device_catalog(lab_fabric, d, everyone[d.name])) == alone[d.name], d.name


# ------------------------------------------------------------------------------------------------------ 24k

@pytest.mark.scale24k
def test_the_24k_reference_renders_a_catalog_per_eos_switch_with_its_designed_peers(roce24k_network_build):
    fabric, build = roce24k_network_build
    switches = eos(fabric)
    assert len(switches) == 192
    assert sorted(p.relative_to(build).as_posix() for p in (build / ANTA_DIR).iterdir()) == sorted(
        [ANTA_INVENTORY, *(anta_catalog_path(d.name) for d in switches)])
    for d in switches:
        text = (build / anta_catalog_path(d.name)).read_text()
        c = AntaCatalog.from_dict(yaml.load(text, Loader=yaml.CSafeLoader))
        assert peer_problems(c, d) == [], d.name
