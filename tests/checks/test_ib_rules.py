"""Bad InfiniBand input gets what bad RoCE input gets: a finding with file, line and spec path, exit 2, no traceback."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import INVENTORY
from teton.checks import check_spec
from teton.cli import main
from teton.spec.model import Cluster

LAB_IB = INVENTORY / "lab-ib.yaml"
REF_IB = INVENTORY / "reference-ib-24k.yaml"


@pytest.fixture
def data() -> dict:
    return yaml.safe_load(LAB_IB.read_text())


def _write(tmp_path, data: dict, name: str = "spec.yaml"):
    p = tmp_path / name
    p.write_text(yaml.safe_dump(data, sort_keys=False))
    return p


def _validate(spec) -> tuple[int, str, list[dict]]:
    result = CliRunner().invoke(main, ["validate", str(spec), "--json"])
    assert result.exit_code in (0, 2) and "Traceback" not in result.output, (result.output, result.exception)
    return result.exit_code, result.output, json.loads(result.stdout)["findings"]


def _line_of(spec, key: str) -> int:
    for n, line in enumerate(spec.read_text().splitlines(), start=1):
        if re.match(rf"^\s*{key}:", line):
            return n
    raise AssertionError(key)


@pytest.mark.scale24k
def test_the_bundled_specs_are_clean():
    for spec in (LAB_IB, REF_IB):
        code, _, findings = _validate(spec)
        assert code == 0 and [f for f in findings if f["severity"] == "error"] == []


def test_an_su_larger_than_a_leafs_ports(tmp_path, data):
    data["racks_per_zone"] = 20                       # 40 nodes: 40 down + 40 up > the QM9700's 64 ports
    spec = _write(tmp_path, data)
    code, _, (f,) = _validate(spec)
    assert code == 2 and (f["rule"], f["path"], f["file"]) == ("fat-tree", "racks_per_zone", str(spec))
    assert f["line"] == _line_of(spec, "racks_per_zone")
    assert "an SU of 40 nodes" in f["message"] and "nvidia-qm9700 has 64 ports" in f["message"]
    assert "at most 32 nodes" in f["message"]


def test_the_cli_says_file_line_path_and_problem(tmp_path, data):
    data["racks_per_zone"] = 20
    spec = _write(tmp_path, data)
    result = CliRunner().invoke(main, ["render", str(spec), "-o", str(tmp_path / "b")])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{spec}:{_line_of(spec, 'racks_per_zone')}: racks_per_zone: an SU of 40 nodes" in result.output


def test_a_routing_engine_opensm_does_not_have(tmp_path, data):
    data["backend"]["subnet_manager"]["routing_engine"] = "fattree"
    spec = _write(tmp_path, data)
    code, _, (f,) = _validate(spec)
    assert code == 2 and (f["rule"], f["path"]) == ("routing-engine", "backend.subnet_manager.routing_engine")
    assert "OpenSM has no routing engine 'fattree'" in f["message"] and "minhop" in f["message"]
    assert f["line"] == _line_of(spec, "routing_engine")


def test_an_engine_that_is_not_for_fat_trees(tmp_path, data):
    data["backend"]["subnet_manager"]["routing_engine"] = "minhop"
    code, _, (f,) = _validate(_write(tmp_path, data))
    assert code == 2 and "not one for a fat tree" in f["message"]


def test_a_guid_map_missing_devices(tmp_path, data):
    lines = ['0x0c42a10300000001 "spine01"', '0x0c42a10300000002 "z01-leaf0"',
             '0x0c42a10300000003 "z01-r001-h1 mlx5_0"  # the first HCA']
    (tmp_path / "guids.map").write_text("\n".join(lines) + "\n")
    data["backend"]["guid_map"] = "guids.map"
    spec = _write(tmp_path, data)
    code, _, findings = _validate(spec)
    (f,) = [f for f in findings if f["severity"] == "error"]
    assert code == 2 and (f["rule"], f["path"], f["file"]) == ("guid-map", "backend.guid_map", str(spec))
    assert f["line"] == _line_of(spec, "guid_map")
    assert "no GUID for 83 of the fabric's 86 nodes: 'z01-leaf1', 'z01-leaf2'" in f["message"]
    assert "and 78 more" in f["message"]


def test_a_malformed_guid_map_line_names_the_map_and_its_line(tmp_path, data):
    (tmp_path / "guids.map").write_text('0x0c42a10300000001 "spine01"\nspine02 0x12\n'
                                        '0x0c42a10300000001 "spine03"\n')
    data["backend"]["guid_map"] = "guids.map"
    code, _, findings = _validate(_write(tmp_path, data))
    by_line = {f["line"]: f for f in findings if f["file"].endswith("guids.map")}
    assert code == 2 and set(by_line) == {2, 3}
    assert "expected 0x<node GUID>" in by_line[2]["message"]
    assert "'spine03': GUID 0x0c42a10300000001 is already 'spine01' (line 1)" in by_line[3]["message"]
    assert by_line[3]["path"] == "backend.guid_map"


@pytest.mark.parametrize("target", ["a-folder", "a-folder/x/y", "missing.map"])
def test_an_unreadable_guid_map(tmp_path, data, target):
    (tmp_path / "a-folder").mkdir()
    data["backend"]["guid_map"] = target
    code, _, findings = _validate(_write(tmp_path, data))
    assert code == 2 and any(f["rule"] == "guid-map" and "cannot be read" in f["message"] for f in findings)


def test_more_lids_than_a_subnet_has(tmp_path):
    data = yaml.safe_load(REF_IB.read_text())
    data["backend"]["subnet_manager"]["lmc"] = 1       # 24,576 ports x 2 + 1,920 switches > 49,151
    code, _, (f,) = _validate(_write(tmp_path, data))
    assert code == 2 and (f["rule"], f["path"]) == ("lid-space", "backend.subnet_manager.lmc")
    assert "51,072 LIDs" in f["message"]


def test_uplinks_that_are_not_whole(tmp_path, data):
    data["backend"]["leaf"]["blocking_factor"] = 3.0   # 4 nodes / 3
    code, _, (f,) = _validate(_write(tmp_path, data))
    assert code == 2 and (f["rule"], f["path"]) == ("fat-tree", "backend.leaf.blocking_factor")


def test_a_blocking_factor_halves_the_uplinks(tmp_path, data):
    data["backend"]["leaf"]["blocking_factor"] = 2.0
    result = CliRunner().invoke(main, ["plan", str(_write(tmp_path, data)), "--json"])
    p = json.loads(result.output)
    assert result.exit_code == 0 and p["oversubscription"] == {"leaf": 2.0}
    assert p["fat_tree"] == {"levels": 2, "full_bisection": False} and p["links"]["leaf-spine"] == 32


def test_too_many_sus_for_three_levels():
    ref = yaml.safe_load(REF_IB.read_text())
    c = Cluster.model_validate({**ref, "zones": 99, "room": {**ref["room"], "zones": 99}})
    c = c.model_copy(update={"host": c.host.model_copy(update={"backend_nics": 24})})
    (f,) = [f for f in check_spec(c, "s.yaml") if f.severity == "error"]
    assert (f.rule, f.path) == ("fat-tree", "zones") and "beyond a three-level fat tree" in f.message


def test_a_model_that_is_no_infiniband_switch(tmp_path, data):
    data["backend"]["spine"]["model"] = "minipack2"
    code, _, findings = _validate(_write(tmp_path, data))
    assert code == 2 and [(f["rule"], f["path"]) for f in findings] == [("unknown-model", "backend.spine.model")]


def test_subnet_manager_hosts_and_partitions_must_exist(tmp_path, data):
    data["backend"]["subnet_manager"]["hosts"] = ["z01-r001-h1", "z09-r001-h1"]
    data["backend"]["partitions"] += [{"name": "tenant-b", "pkey": 0x0A01, "zones": [3], "hosts": ["z01-r001-h9"]},
                                      {"name": "tenant-c", "pkey": 0x0A02, "zones": [2]}]
    code, _, findings = _validate(_write(tmp_path, data))
    assert code == 2
    assert sorted((f["rule"], f["path"], f["severity"]) for f in findings) == [
        ("partition", "backend.partitions[1]", "warning"),              # tenant-b: none of its members exist
        ("partition", "backend.partitions[1].hosts[0]", "error"), ("partition", "backend.partitions[1].pkey", "error"),
        ("partition", "backend.partitions[1].zones[0]", "error"),
        ("partition", "backend.partitions[2]", "error"),                # SU 2's hosts are tenant-a's already
        ("subnet-manager", "backend.subnet_manager.hosts[1]", "error")]


def test_hca_names_and_speeds_match_the_hosts(tmp_path, data):
    data["backend"]["hca_names"] = ["mlx5_0", "mlx5_0"]
    data["host"]["backend_nic_gbps"] = 200
    code, _, findings = _validate(_write(tmp_path, data))
    assert code == 2 and sorted((f["rule"], f["path"]) for f in findings) == [
        ("ib-hca", "backend.hca_names"), ("ib-hca", "backend.hca_names[1]"),
        ("speed-mismatch", "host.backend_nic_gbps")]


def test_a_schema_error_in_the_infiniband_section(tmp_path, data):
    data["backend"]["partitions"][0]["pkey"] = 0x7FFF
    data["backend"]["qos"]["data_vls"] = 3
    code, _, findings = _validate(_write(tmp_path, data))
    assert code == 2 and {f["path"] for f in findings} == {"backend.partitions[0].pkey", "backend.qos.data_vls"}
    assert all(f["line"] for f in findings)


def test_ib_verify_refuses_a_dump_that_is_no_topology(tmp_path):
    dump = tmp_path / "dump.txt"
    dump.write_text("#\nSwitch 64 \"S-0000000000000001\"\n[1] \"x\"[1]\nthis is not a topology\n")
    result = CliRunner().invoke(main, ["ib", "verify", str(LAB_IB), "--discovered", str(dump)])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{dump}:4: --discovered: not a topology line" in result.output
    dump.write_bytes(b"\xff\xfe\x00binary")
    result = CliRunner().invoke(main, ["ib", "verify", str(LAB_IB), "--discovered", str(dump)])
    assert result.exit_code == 2 and "not UTF-8" in result.output


def test_ib_verify_needs_an_infiniband_spec(tmp_path):
    result = CliRunner().invoke(main, ["ib", "verify", str(INVENTORY / "lab.yaml"), "--discovered", "x"])
    assert result.exit_code == 2 and "backend.kind" in result.output and "no InfiniBand topology" in result.output


def test_a_subnet_manager_on_a_tenants_host_is_refused_with_its_path(tmp_path, data):
    data["backend"]["subnet_manager"]["hosts"] = ["ib-sm1", "z02-r001-h1"]       # z02: tenant-a's SU
    spec = _write(tmp_path, data)
    code, _, findings = _validate(spec)
    (f,) = [f for f in findings if f["severity"] == "error"]
    assert code == 2 and (f["rule"], f["path"], f["file"]) == ("subnet-manager", "backend.subnet_manager.hosts[1]",
                                                                str(spec))
    assert "'z02-r001-h1' is a host of tenant 'tenant-a'" in f["message"] and "SM_Key" in f["message"]


def test_without_service_hosts_the_subnet_managers_avoid_the_tenants(tmp_path, data):
    data["services"] = [s for s in data["services"] if s["role"] != "subnet-manager"]
    data["backend"]["partitions"][0]["zones"] = [1]            # SU 1 a tenant's: both SMs go to SU 2's first hosts
    spec = _write(tmp_path, data)
    code, _, findings = _validate(spec)
    assert code == 0, findings
    from teton.design.subnet import sm_hosts

    assert sm_hosts(Cluster.model_validate(data)) == ["z02-r001-h1", "z02-r001-h2"]
    data["backend"]["partitions"][0]["zones"] = [1, 2]         # every host a tenant's: nowhere to run
    code, _, findings = _validate(_write(tmp_path, data))
    (f,) = [f for f in findings if f["severity"] == "error"]
    assert code == 2 and (f["rule"], f["path"]) == ("subnet-manager", "backend.subnet_manager.standby")
    assert "declare 2 services of role subnet-manager" in f["message"]


def test_subnet_manager_services_count_ports_and_backend(tmp_path, data):
    data["services"].append({"name": "ib-sm3", "role": "subnet-manager"})
    code, _, findings = _validate(_write(tmp_path, data))
    assert code == 2 and [(f["rule"], f["path"]) for f in findings if f["severity"] == "error"] == [
        ("subnet-manager", "services")]
    data["services"].pop()
    data["backend"]["subnet_manager"]["hosts"] = ["slurmctl", "ib-sm2"]
    code, _, findings = _validate(_write(tmp_path, data))
    (f,) = [f for f in findings if f["severity"] == "error"]
    assert (f["path"], code) == ("backend.subnet_manager.hosts[0]", 2) and "front end only" in f["message"]
    # an SU of 32 nodes at 1:1 fills every port of a QM9700 leaf: no port for the SM's HCA
    del data["backend"]["subnet_manager"]["hosts"]
    data.update(racks_per_zone=16)
    code, _, findings = _validate(_write(tmp_path, data))
    errors = [f for f in findings if f["severity"] == "error" and f["rule"] == "subnet-manager"]
    assert code == 2 and [f["path"] for f in errors] == ["services[1]", "services[2]"]
    assert "leaf z01-leaf0, which has none free: its 64 ports are 32 down to the SU's nodes and 32 up" in (
        errors[0]["message"])


def test_a_subnet_manager_service_on_a_roce_cluster_is_refused(tmp_path):
    data = yaml.safe_load((INVENTORY / "lab.yaml").read_text())
    data.setdefault("services", []).append({"name": "sm1", "role": "subnet-manager"})
    code, _, findings = _validate(_write(tmp_path, data))
    (f,) = [f for f in findings if f["severity"] == "error"]
    assert code == 2 and f["path"] == f"services[{len(data['services']) - 1}].role"
    assert "only an InfiniBand fabric has one" in f["message"]
