"""Attacks through the spec's free strings: each must be refused by validate at its spec path (exit 2), and the
targets refuse (or defuse) what their text format cannot hold even when a value gets past the grammar."""

from __future__ import annotations

import copy
import json

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import LAB, write_spec
from teton.cli import main
from teton.findings import SpecError
from teton.targets.tokens import csv_cell, token

BASE = yaml.safe_load(LAB.read_text())
MINIPACK2 = {"name": "minipack2", "vendor": "Meta (Celestica)", "asic": "Broadcom Tomahawk4", "asic_tbps": 25.6,
             "port_naming": "sonic", "nos": ["sonic"],
             "port_groups": [{"count": 64, "speed_gbps": 400, "lanes": 8, "form_factor": "QSFP-DD"}],
             "platform": {"sonic": "x86_64-facebook_minipack2-r0"}, "hwsku": {"sonic": "Facebook-Minipack2-64x400G"}}


def _validate(tmp_path, data) -> tuple[int, list[dict]]:
    r = CliRunner().invoke(main, ["validate", str(write_spec(tmp_path, data)), "--json"])
    return r.exit_code, json.loads(r.stdout)["findings"] if r.stdout.startswith("{") else []


def _refused_at(tmp_path, data, path: str) -> dict:
    code, findings = _validate(tmp_path, data)
    assert code == 2, findings
    (f,) = [f for f in findings if f["path"] == path]
    return f


def _with_model(**hwsku_or_platform: dict) -> dict:
    d = copy.deepcopy(BASE)
    d["switch_models"] = [{**MINIPACK2, **hwsku_or_platform}]
    return d


def test_hwsku_path_traversal_is_refused_at_validate(tmp_path):
    d = _with_model(hwsku={"sonic": "../../../../../srv/other/victim"})
    f = _refused_at(tmp_path, d, "switch_models[0].hwsku.sonic")
    assert "no '..', no '/'" in f["message"]
    assert not (tmp_path / "srv").exists()


def test_newline_in_a_folder_name_is_refused(tmp_path):
    d = _with_model(hwsku={"sonic": "Facebook\nMinipack2"})
    _refused_at(tmp_path, d, "switch_models[0].hwsku.sonic")
    d = _with_model(platform={"sonic": "x86_64\nr0"})
    _refused_at(tmp_path, d, "switch_models[0].platform.sonic")


def test_gpu_model_cannot_add_lines_to_slurm_conf(tmp_path):
    d = copy.deepcopy(BASE)
    d["host"]["gpu_model"] = "H100\nprolog=/srv/other/pwn"
    f = _refused_at(tmp_path, d, "host.gpu_model")
    assert "'H100\\nprolog=/srv/other/pwn'" in f["message"]    # shown escaped, on one line


def test_snmpv3_user_cannot_splice_tokens_into_the_eos_snmp_server_line(tmp_path):
    d = copy.deepcopy(BASE)
    for tier in ("rtsw",):
        d["backend"][tier]["nos"] = "eos"
        d["backend"][tier]["model"] = "arista-7060dx5-64s"
    d["management"].update(telemetry="snmpv3", snmpv3_user="nms auth md5 x priv des y")
    f = _refused_at(tmp_path, d, "management.snmpv3_user")
    assert "user name" in f["message"]


def test_an_ip_zone_index_cannot_smuggle_text(tmp_path):
    d = copy.deepcopy(BASE)
    d["management"]["ntp_servers"] = ["fe80::1%eth0\nntp server 203.0.113.9"]   # ipaddress accepts a scope id
    _refused_at(tmp_path, d, "management.ntp_servers[0]")


def test_guid_map_outside_the_spec_folder_is_refused_by_the_schema(tmp_path):
    d = yaml.safe_load((LAB.parent / "lab-ib.yaml").read_text())
    for bad in ("/proc/self/environ", "../etc/shadow", "a/../../x"):
        d["backend"]["guid_map"] = bad
        _refused_at(tmp_path, d, "backend.guid_map")


def test_render_refuses_a_value_a_line_config_cannot_hold():
    with pytest.raises(SpecError) as exc:
        token("h100\nprolog=/srv/other/pwn", "z01-r001-h01", "gpu_model", "slurm.conf/gres.conf")
    (f,) = exc.value.findings
    assert f.path == "z01-r001-h01.gpu_model" and "slurm.conf/gres.conf" in f.message and "\n" not in f.message
    for bad in ("a b", "a!", 'a"', "a=b", "{{ x }}", "-x", "a#b"):
        with pytest.raises(SpecError):
            token(bad, "d", "f", "frr.conf")
    assert token("z01-r001-rtsw", "d", "f", "frr.conf") == "z01-r001-rtsw"


def test_cabling_csv_defuses_formula_prefixes():
    assert [csv_cell(v) for v in ("=cmd|'/c calc'!A1", "+1", "-1", "@SUM(A1)", "z01-r001", 4)] == [
        "'=cmd|'/c calc'!A1", "'+1", "'-1", "'@SUM(A1)", "z01-r001", 4]
