"""What the twin's lldpd daemons announce comes from each device's files, read back by its target, and is data: a
value outside lldpd's grammar is refused before it reaches an lldpcli command line."""

from __future__ import annotations

import pytest

from teton.findings import SpecError
from teton.targets import DeviceView, LldpView, RenderContext
from teton.twin.artifacts import _lldp, twin_plan
from teton.twin.lldp import _renamed, lldpd_conf
from teton.twin.plan import linux_ifname, plan_from_dict, plan_to_dict
from teton.validate.rendered import read_views


@pytest.fixture(scope="module")
def views(lab_build, lab_fabric):
    from teton.buildfolder import BuildFolder

    found, problems = read_views(BuildFolder(lab_build), lab_fabric, RenderContext(validate=False), vendor=False)
    assert problems == []
    return {(v.name, v.file): v for v in found}


def _lldp_of(views, device):
    return next(v.lldp for (name, _), v in views.items() if name == device and v.lldp is not None)


def test_each_target_reads_back_what_its_device_announces(views, lab_build):
    import json

    db = json.loads((lab_build / "devices" / "z01-r001-rtsw" / "config_db.json").read_text())
    sonic = _lldp_of(views, "z01-r001-rtsw")           # lldpmgrd: the hostname, each PORT's alias
    assert sonic.system == db["DEVICE_METADATA"]["localhost"]["hostname"] == "z01-r001-rtsw"
    assert sonic.ports["Ethernet128"] == db["PORT"]["Ethernet128"]["alias"] != "Ethernet128"
    assert "config_db.json" in sonic.where
    eos = _lldp_of(views, "z01-ctsw01")                 # EOS: the interface names
    assert eos.system == "z01-ctsw01" and eos.ports["Ethernet3/1/1"] == "Ethernet3/1/1"
    host = _lldp_of(views, "z01-r001-h1")               # the lldpd role: teton_lldp in the host variables
    assert host.system == "z01-r001-h1" and host.ports["be0"] == "be0" and "teton_lldp" in host.where


def test_the_plan_carries_the_announcements_and_round_trips(lab_build):
    source = twin_plan(lab_build)
    nodes = {n.name: n for n in source.plan.nodes}
    rtsw = dict(nodes["z01-r001-rtsw"].lldp_ports)
    assert nodes["z01-r001-rtsw"].lldp_system == "z01-r001-rtsw" and rtsw["Ethernet128"].startswith("eth")
    # only the twin's interfaces: a SONiC box's unused ports are not listened on
    assert set(rtsw) <= {i.name for i in nodes["z01-r001-rtsw"].interfaces}
    assert all(n.lldp_system == n.name for n in source.plan.nodes)
    assert plan_from_dict(plan_to_dict(source.plan)) == source.plan


def test_lldpd_conf_names_the_port_ids_that_differ_from_the_kernels(lab_build):
    nodes = {n.name: n for n in twin_plan(lab_build).plan.nodes}
    conf = lldpd_conf(nodes["z01-r001-rtsw"]).splitlines()
    assert conf[:3] == ["configure system hostname z01-r001-rtsw", "configure lldp tx-interval 1",
                        "configure lldp portidsubtype ifname"]
    alias = dict(nodes["z01-r001-rtsw"].lldp_ports)["Ethernet128"]
    assert f"configure ports Ethernet128 lldp portidsubtype local {alias}" in conf
    eos = lldpd_conf(nodes["z01-ctsw01"])           # an EOS name is hashed in the kernel: announced as EOS names it
    assert f"configure ports {linux_ifname('Ethernet3/1/1')} lldp portidsubtype local Ethernet3/1/1" in eos
    assert lldpd_conf(nodes["z01-r001-h1"]).count("configure ports") == 0     # a server: its NIC names as they are


@pytest.mark.parametrize("bad", ["eth1/1\nconfigure system hostname evil", "eth 1", "", "x" * 65, "-eth1"])
def test_a_port_id_outside_lldpds_grammar_is_refused_naming_its_file(bad):
    view = DeviceView("sw1", "switch", "devices/sw1/config_db.json",
                      lldp=LldpView("sw1", {"Ethernet0": bad}, "devices/sw1/config_db.json PORT/*/alias"))
    with pytest.raises(SpecError) as err:
        _lldp([view], {"Ethernet0"})
    assert err.value.findings[0].file == "devices/sw1/config_db.json PORT/*/alias"
    assert "cannot be announced over LLDP" in err.value.findings[0].message
    # a port the twin does not run is not announced, so not checked
    assert _lldp([view], {"Ethernet8"}) == {"lldp_system": "sw1", "lldp_ports": ()}


def test_kernel_names_are_turned_back_into_the_devices_port_names():
    names = {linux_ifname("Ethernet3/1/1"): "Ethernet3/1/1"}
    one = {"lldp": {"interface": {linux_ifname("Ethernet3/1/1"): {"port": {"id": {"value": "x"}}}}}}
    many = {"lldp": {"interface": [{linux_ifname("Ethernet3/1/1"): {}}, {"be0": {}}]}}
    assert list(_renamed(one, names)["lldp"]["interface"]) == ["Ethernet3/1/1"]
    assert [next(iter(e)) for e in _renamed(many, names)["lldp"]["interface"]] == ["Ethernet3/1/1", "be0"]
    assert _renamed({"lldp": {}}, names) == {"lldp": {}}
