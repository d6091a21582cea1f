"""The cluster works as one network (issue 18): front-end reachability read from the rendered configs, management
addresses that skip the servers, rack elevation without overlaps, shares that the servers export."""

from __future__ import annotations

import csv
import ipaddress
import json
from pathlib import Path

import numpy as np

from tests.helpers import write_spec
from teton.checks import check_spec
from teton.design import design
from teton.design.roce import RACK_UNITS
from teton.fabric.serialize import load_fabric
from teton.spec.load import load_spec
from teton.targets.ansible.unsafe import unwrap
from teton.verify.model import build_model
from teton.verify.rules import Checked, frontend_reach, link_prefix
from teton.verify.run import load, read_views
from teton.verify.solve import prefix_count, solve


def _assert_one_network(build: Path) -> None:
    """The front end's routing as `teton verify` models it from the rendered configs alone."""
    source, fabric = load(build)
    views, problems = read_views(source, fabric)
    model, findings = build_model(views, fabric)
    assert problems == [] and findings == []                # every session agreed at both ends
    files = Checked.of(model, solve(model, np.arange(prefix_count(model))))
    racks = [i for i in range(model.n) if model.role[i] == "fe-rsw"]
    assert len(racks) >= 3
    widths = []
    for o in racks:                                         # every rack's prefixes reach every other rack
        for p in (*fabric.devices[model.names[o]].prefixes4, *fabric.devices[model.names[o]].prefixes6):
            row = files.row[p]
            assert (files.solution.dist[row, racks] >= 0).all(), p
            widths += [int(files.solution.width[row, i]) for i in racks if i != o]
    assert frontend_reach(fabric, files) == []
    assert link_prefix(files) == []                         # no link /31 ever leaves its switch
    default = files.dist("0.0.0.0/0")
    assert default is not None and (default[racks] > 0).all()   # every rack switch has the spines' default route
    assert min(widths) >= 2                                 # ECMP over every FSW of the rack's zone


def test_lab_front_end_is_one_network_read_from_its_configs(lab_build):
    _assert_one_network(lab_build)
    hv = {p.stem: unwrap(json.loads(p.read_text())) for p in (lab_build / "ansible/host_vars").glob("*.json")}
    db = {p.parent.name: json.loads(p.read_text()) for p in lab_build.glob("devices/*-frsw/config_db.json")}
    aggregates = {name: [ipaddress.ip_network(k.split("|")[1], strict=False)
                         for k in d.get("INTERFACE", {}) if "|" in k] for name, d in db.items()}
    kinds = {"gpu": 0, "storage": 0, "service": 0}
    for host, v in hv.items():                              # GPU hosts, storage and service hosts alike
        if v.get("teton_role") not in kinds:
            continue
        kinds[v["teton_role"]] += 1
        rsw = f"{v['teton_rack']}-frsw"
        for nic in v["teton_frontend"]:
            addr = ipaddress.ip_interface(nic["addresses"][0])
            assert any(addr.ip in n for n in aggregates[rsw]), (host, nic)     # a /31 of its own RSW's port
            assert ipaddress.ip_address(nic["gateway4"]) in addr.network
    assert all(kinds.values()), kinds


def test_lab_ib_front_end_is_one_network_read_from_its_configs(lab_ib_build):
    _assert_one_network(lab_ib_build)


def test_reference_roce_front_end_is_one_network_read_from_its_configs(roce24k_network_build):
    _assert_one_network(roce24k_network_build[1])


def test_reference_ib_front_end_is_one_network_read_from_its_configs(ib24k_network_build):
    _assert_one_network(ib24k_network_build)


def _three_by_four(tmp_path: Path, data: dict, **management: object) -> Path:
    data.update(zones=3, racks_per_zone=4)
    data["backend"]["addressing"]["ipv4"]["host_links"] = "10.64.0.0/22"    # 12 racks' NIC blocks
    data["management"].update(management)
    return write_spec(tmp_path, data)


def test_no_switch_takes_a_server_address_of_the_management_network(tmp_path, lab_data):
    spec = _three_by_four(tmp_path, lab_data)
    fabric = design(load_spec(spec))
    m = lab_data["management"]
    servers = {m["gateway"], *m["ntp_servers"], *m["syslog_servers"], *m["aaa_servers"]}
    taken = [d.mgmt.split("/")[0] for d in fabric.devices.values() if d.mgmt]
    assert len(taken) == len(set(taken)) > 49 and not servers & set(taken)
    assert "192.0.2.49" in servers and "192.0.2.51" in servers      # the TACACS and syslog servers of the lab


def test_a_management_network_too_small_for_switches_and_servers_is_refused(tmp_path, lab_data):
    switches = len([d for d in design(load_spec(_three_by_four(tmp_path, lab_data))).devices.values() if d.mgmt])
    # a /26 holds .10-.62 = 53 addresses: enough for the switches alone, not with the three servers inside it
    spec = _three_by_four(tmp_path, lab_data, network="192.0.2.0/26", reserved=[f"192.0.2.{n}" for n in (20, 21)])
    assert 53 - 5 < switches <= 53, switches
    findings = [f for f in check_spec(load_spec(spec), str(spec)) if f.rule == "pool-exhausted"]
    assert [f.path for f in findings] == ["management.network"], findings
    assert "reserved" in findings[0].message


def test_no_two_devices_of_a_rack_overlap_in_the_24k_build(roce24k_network_build):
    build = roce24k_network_build[1]
    fabric = load_fabric((build / "fabric.json").read_text())
    racks: dict[str, list[tuple[int, int, str]]] = {}
    for d in fabric.devices.values():
        racks.setdefault(d.rack, []).append((d.ru, d.ru + d.height_ru - 1, d.name))
    for rack, units in racks.items():
        units.sort()
        assert units[0][0] >= 1 and max(hi for _, hi, _ in units) <= RACK_UNITS, rack
        for (_, hi, a), (lo, _, b) in zip(units, units[1:], strict=False):
            assert lo > hi, f"{a} and {b} overlap in {rack}"
    with (build / "cabling.csv").open() as f:
        cabled = {v for row in csv.DictReader(f) for k, v in row.items() if k and "device" in k}
    assert {"slurmctl", "svc-r01-frsw", "ssw01-01"} <= cabled          # the service host and the spines are cabled


def test_a_mount_of_a_share_nobody_exports_is_refused(tmp_path, lab_data):
    lab_data["hosts"] = {"storage_client": {"hammerspace": [
        {"name": "scratch", "mount_point": "/mnt/scratch", "export": "/scratch"}]}}
    spec = write_spec(tmp_path, lab_data)
    findings = [f for f in check_spec(load_spec(spec), str(spec)) if f.rule == "storage-share"]
    assert [f.path for f in findings] == ["hosts.storage_client.hammerspace[0].export"]
    assert "/checkpoints, /datasets" in findings[0].message
