"""storage-load and tectonic-client: a storage group's servers hold their clients' share of the load the spec
states, and a Tectonic client belongs to a Tectonic group."""

from __future__ import annotations

import pytest

from teton.checks.frontend_rules import storage_load, tectonic_client
from teton.spec.model import Cluster


def _cluster(data: dict) -> Cluster:
    return Cluster.model_validate(data)


def test_the_bundled_lab_states_a_load_its_servers_hold(lab_cluster):
    assert list(storage_load(lab_cluster, "lab.yaml")) == []


def test_a_group_too_small_for_its_clients_is_refused_with_what_would_hold_them(lab_data):
    lab_data["storage"][1]["client_gbps"] = 80       # 8 GPU hosts over 2 servers: 4 x 80 = 320 > 1 x 200G
    found = list(storage_load(_cluster(lab_data), "lab.yaml"))
    assert [(f.path, f.severity, f.rule) for f in found] == [("storage[1].client_gbps", "error", "storage-load")]
    assert "4 x 80 Gb/s = 320 Gb/s" in found[0].message and "4 servers" in found[0].message
    lab_data["storage"][1]["nics_per_server"] = 2    # 2 x 200G per server holds 320
    assert list(storage_load(_cluster(lab_data), "lab.yaml")) == []


def test_no_load_stated_is_a_warning(lab_data):
    del lab_data["storage"][1]["client_gbps"]
    found = list(storage_load(_cluster(lab_data), "lab.yaml"))
    assert [(f.path, f.severity) for f in found] == [("storage[1].client_gbps", "warning")]


def test_a_tectonic_client_on_a_hammerspace_group_is_refused(lab_data):
    lab_data["storage"][1]["client"] = {"package": "tectonic-fuse", "endpoints": ["meta.example:9000"]}
    found = [f for f in tectonic_client(_cluster(lab_data), "lab.yaml") if f.severity == "error"]
    assert [f.path for f in found] == ["storage[1].client"]


@pytest.mark.parametrize("endpoint", ["meta.example", "a b:1", "meta.example:0", "meta.example:70000",
                                      "x;reboot:1", "[fd00::1:9000"])
def test_an_endpoint_outside_its_grammar_is_refused(lab_data, endpoint):
    lab_data["storage"][0]["client"] = {"package": "tectonic-fuse", "endpoints": [endpoint]}
    with pytest.raises(ValueError):
        _cluster(lab_data)
