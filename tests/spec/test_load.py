from __future__ import annotations

import pytest

from tests.helpers import INVENTORY, LAB, write_spec
from teton.findings import SpecError
from teton.spec.load import load_spec, load_yaml_text


def _errors(path) -> list:
    with pytest.raises(SpecError) as exc:
        load_spec(path)
    return exc.value.findings


def test_lab_yaml_and_lab_py_are_the_same_model():
    assert load_spec(INVENTORY / "lab.py") == load_spec(LAB)


def test_misspelled_key_is_named_with_its_path_and_line(tmp_path):
    text = LAB.read_text().replace("  mtu: 9100\n  qos:", "  mtuu: 9100\n  qos:", 1)
    findings = _errors(write_spec(tmp_path, text))
    assert [(f.path, f.message) for f in findings] == [("backend.mtuu", "unknown key (misspelled?)")]
    assert findings[0].line == text.splitlines().index("  mtuu: 9100") + 1


def test_string_where_a_number_goes_is_an_error_not_a_coercion(tmp_path, lab_data):
    lab_data["racks_per_zone"] = "2"
    (f,) = _errors(write_spec(tmp_path, lab_data))
    assert f.path == "racks_per_zone" and "integer" in f.message and "'2'" in f.message


def test_all_schema_errors_are_reported_at_once(tmp_path, lab_data):
    lab_data["zones"] = 0
    lab_data["backend"]["rtsw"]["nos"] = "Jun OS"        # not a NOS name (a NOS without a target is a rule)
    lab_data["storage"][1]["role"] = "ceph"
    paths = {f.path for f in _errors(write_spec(tmp_path, lab_data))}
    assert paths == {"zones", "backend.rtsw.nos", "storage[1].role"}


def test_yaml_that_does_not_parse_names_the_line(tmp_path):
    findings = _errors(write_spec(tmp_path, "name: lab\nzones: [1, 2\nsite: x\n"))
    assert len(findings) == 1 and findings[0].rule == "yaml" and findings[0].line == 3


def test_a_key_given_twice_is_an_error(tmp_path):
    text = LAB.read_text().replace("zones: 2\n", "zones: 2\nzones: 3\n", 1)
    (f,) = _errors(write_spec(tmp_path, text))
    assert f.path == "zones" and "twice" in f.message


def test_bad_ip_network_names_the_pool(tmp_path, lab_data):
    lab_data["backend"]["addressing"]["ipv4"]["loopbacks"] = "10.0.0.1/24"
    (f,) = _errors(write_spec(tmp_path, lab_data))
    assert f.path == "backend.addressing.ipv4.loopbacks" and "host bits" in f.message


def test_missing_required_key(tmp_path, lab_data):
    del lab_data["backend"]["ctsw"]["per_zone"]
    (f,) = _errors(write_spec(tmp_path, lab_data))
    assert (f.path, f.message) == ("backend.ctsw.per_zone", "required key is missing")


def test_python_spec_without_cluster_is_reported(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("x = 1\n")
    (f,) = _errors(p)
    assert f.path == "cluster" and f.rule == "python"


def test_empty_yaml_is_reported():
    with pytest.raises(SpecError) as exc:
        load_yaml_text("", "empty.yaml")
    assert exc.value.findings[0].message == "the spec is empty"
