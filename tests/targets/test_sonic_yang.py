"""SONiC config_db.json validation against SONiC's YANG models (libyang)."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from teton.findings import TetonError
from teton.secrets import secret_ref
from teton.targets.sonic import yang
from teton.targets.sonic.yang import ENV_VAR, SonicYangValidator, YangIssue
from teton.targets.sonic.yang import SHARED_YANG_DIR as DEFAULT_YANG_DIR

FIXTURE = Path(__file__).parent / "data" / "sonic_rtsw.json"


@pytest.fixture(scope="module")
def validator() -> SonicYangValidator:
    return SonicYangValidator()


@pytest.fixture
def config_db() -> dict:
    return json.loads(FIXTURE.read_text())


def _issues_for(issues: list[YangIssue], table: str) -> list[YangIssue]:
    return [i for i in issues if i.table == table]


def test_rtsw_fixture_validates_without_issues(validator, config_db):
    assert validator.validate("rtsw001", config_db) == []
    assert validator.unmodelled_tables(config_db) == []


def test_rtsw_fixture_is_a_roce_t0_with_lossless_priority_3(config_db):
    assert config_db["DEVICE_METADATA"]["localhost"]["type"] == "LeafRouter"
    for qos in config_db["PORT_QOS_MAP"].values():
        assert qos["pfc_enable"] == "3" and qos["pfcwd_sw_enable"] == "3"
    assert config_db["BUFFER_PG"]["Ethernet0|3"]["profile"] == "pg_lossless_400000_5m_profile"
    assert config_db["QUEUE"]["Ethernet0|3"]["wred_profile"] == "AZURE_LOSSLESS"
    assert config_db["WRED_PROFILE"]["AZURE_LOSSLESS"]["ecn"] == "ecn_all"


def test_rtsw_fixture_has_no_snmp_communities_and_only_secret_references(config_db):
    assert not {"SNMP", "SNMP_COMMUNITY"} & set(config_db)
    token = secret_ref("TACACS_KEY")
    assert config_db["TACPLUS"]["global"]["passkey"] == token
    assert all(server["passkey"] == token for server in config_db["TACPLUS_SERVER"].values())


def test_port_mtu_out_of_range_is_an_issue_on_port_mtu(validator, config_db):
    config_db["PORT"]["Ethernet0"]["mtu"] = "9300"

    issues = validator.validate("rtsw001", config_db)

    assert len(issues) == 1
    issue = issues[0]
    assert (issue.device, issue.table, issue.key, issue.field) == ("rtsw001", "PORT", "Ethernet0", "mtu")
    assert "9300" in issue.message and "range" in issue.message
    assert str(issue).startswith("rtsw001: PORT|Ethernet0/mtu: ")


def test_interface_on_missing_port_is_a_leafref_issue_on_the_interface(validator, config_db):
    config_db["INTERFACE"]["Ethernet99"] = {}
    config_db["INTERFACE"]["Ethernet99|10.99.0.0/31"] = {}

    issues = validator.validate("rtsw001", config_db)

    assert {(i.table, i.key) for i in issues} == {("INTERFACE", "Ethernet99"), ("INTERFACE", "Ethernet99|10.99.0.0/31")}
    assert all("leafref" in i.message and "Ethernet99" in i.message for i in issues)


def test_non_numeric_value_is_an_issue_not_an_exception(validator, config_db):
    config_db["PORT"]["Ethernet0"]["mtu"] = "abc"

    issues = validator.validate("rtsw001", config_db)

    assert [(i.table, i.key, i.field) for i in issues] == [("PORT", "Ethernet0", "mtu")]
    assert '"abc"' in issues[0].message


def test_every_issue_is_reported_not_only_the_first(validator, config_db):
    config_db["PORT"]["Ethernet8"]["fec"] = "bogus"
    config_db["PFC_WD"]["Ethernet16"]["detection_time"] = "50"
    config_db["GNMI"]["gnmi"]["client_auth"] = "yes"

    issues = validator.validate("rtsw001", config_db)

    assert {(i.table, i.key, i.field) for i in issues} == {
        ("PORT", "Ethernet8", "fec"),
        ("PFC_WD", "Ethernet16", "detection_time"),
        ("GNMI", "gnmi", "client_auth"),
    }


def test_references_to_an_entry_dropped_for_its_own_issue_are_not_reported_again(validator, config_db):
    config_db["PORT"]["Ethernet0"]["speed"] = "fast"  # the port is invalid; everything refers to it

    issues = validator.validate("rtsw001", config_db)

    assert [(i.table, i.key, i.field) for i in issues] == [("PORT", "Ethernet0", "speed")]


def test_map_table_issue_names_the_map_field(validator, config_db):
    config_db["DSCP_TO_TC_MAP"]["AZURE"]["26"] = "16"  # traffic classes are 0..15

    issues = validator.validate("rtsw001", config_db)

    assert [(i.table, i.key, i.field) for i in issues] == [("DSCP_TO_TC_MAP", "AZURE", "26")]


def test_comma_separated_leaf_list_is_typed_from_the_model(validator, config_db):
    config_db["SSH_SERVER"]["POLICIES"]["ciphers"] = "aes256-gcm@openssh.com,rc4"

    issues = validator.validate("rtsw001", config_db)

    assert [(i.table, i.key, i.field) for i in issues] == [("SSH_SERVER", "POLICIES", "ciphers")]
    assert "rc4" in issues[0].message


def test_key_matching_no_list_of_the_table_is_an_issue(validator, config_db):
    config_db["PORT"]["Ethernet0|extra"] = {"lanes": "1", "speed": "400000"}

    issues = validator.validate("rtsw001", config_db)

    assert [(i.table, i.key, i.field) for i in issues] == [("PORT", "Ethernet0|extra", None)]


def test_malformed_documents_give_issues_not_exceptions(validator, config_db):
    config_db["PORT_QOS_MAP"] = ["not", "an", "object"]
    config_db["PORT"]["Ethernet0"]["mtu"] = ["9100"]

    issues = validator.validate("rtsw001", config_db)

    assert {(i.table, i.key, i.field) for i in issues} >= {("PORT_QOS_MAP", "", None), ("PORT", "Ethernet0", "mtu")}
    assert validator.validate("rtsw001", "not a dict") == [  # type: ignore[arg-type]
        YangIssue("rtsw001", "", "", None, "config_db is not a JSON object")
    ]


def test_table_unknown_to_the_models_is_listed_as_unmodelled(validator, config_db):
    config_db["TETON_FABRIC_TAGS"] = {"global": {"pod": "c01"}}

    assert validator.unmodelled_tables(config_db) == ["TETON_FABRIC_TAGS"]
    assert validator.validate("rtsw001", config_db) == []


def test_models_folder_comes_from_env_var_when_set(tmp_path, monkeypatch, config_db):
    models = tmp_path / "yang"
    shutil.copytree(DEFAULT_YANG_DIR, models)
    (models / "sonic-ssh-server.yang").unlink()  # nothing imports it
    monkeypatch.setenv(ENV_VAR, str(models))

    validator = SonicYangValidator()

    assert validator.yang_dir == models
    assert validator.unmodelled_tables(config_db) == ["SSH_SERVER"]
    assert validator.validate("rtsw001", config_db) == []


def test_constructor_argument_wins_over_env_var(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "nowhere"))

    validator = SonicYangValidator(DEFAULT_YANG_DIR)

    assert validator.yang_dir == DEFAULT_YANG_DIR
    assert "PORT" in validator.tables


def test_missing_or_empty_models_folder_is_a_one_line_error_naming_it(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-models"
    with pytest.raises(TetonError, match="no-such-models.*is not a folder"):
        SonicYangValidator(missing)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(TetonError, match="empty holds no .yang files"):
        SonicYangValidator(empty)
    monkeypatch.setenv(ENV_VAR, str(missing))
    with pytest.raises(TetonError, match=f"no-such-models.*{ENV_VAR}"):
        SonicYangValidator()


def test_without_a_folder_the_lookup_falls_back_to_the_fetched_copy_then_says_the_three_ways(tmp_path, monkeypatch):
    monkeypatch.delenv(ENV_VAR, raising=False)
    cached = tmp_path / "cache" / "yang"
    monkeypatch.setattr(yang, "SHARED_YANG_DIR", tmp_path / "no-shared")
    monkeypatch.setattr(yang, "CACHED_YANG_DIR", cached)
    with pytest.raises(TetonError) as info:
        yang.find_yang_dir()
    message = str(info.value)
    assert "--yang-dir" in message and "no-shared" in message and "scripts/setup" in message
    assert "\n" not in message
    shutil.copytree(DEFAULT_YANG_DIR, cached)
    assert yang.find_yang_dir() == cached


def test_validator_is_reusable_across_devices(validator, config_db):
    bad = copy.deepcopy(config_db)
    bad["PORT"]["Ethernet0"]["mtu"] = "9300"

    assert validator.validate("rtsw002", bad)[0].device == "rtsw002"
    assert validator.validate("rtsw001", config_db) == []
