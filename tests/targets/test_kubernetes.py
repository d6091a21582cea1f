"""The Kubernetes target: node labels per GPU host (cluster, zone/block, rack, rail switches; Kueue's keys and
Topograph's tiers) and Kueue's Topology and ResourceFlavor, validated against Kueue's own CRD schemas (v0.19.2, every
served version) found as the SONiC YANG models are, and against Kubernetes' label syntax."""

from __future__ import annotations

import shutil

import pytest
import yaml

from teton.fabric.model import Fabric
from teton.findings import SpecError
from teton.targets.base import RenderContext
from teton.targets.kubernetes import KUEUE, NODE_LABELS, TARGET, object_name
from teton.targets.kubernetes import kueue as kq
from teton.targets.kubernetes.labels import (
    CLUSTER,
    CORE,
    HOSTNAME,
    KUEUE_BLOCK,
    KUEUE_RACK,
    LEAF,
    SPINE,
    label_key_problem,
    label_value_problem,
    name_problem,
    rail_key,
)

CRDS = kq.find_kueue_dir()
needs_crds = pytest.mark.skipif(CRDS is None, reason="Kueue's CRDs: a kueue/crd folder in the shared folder beside "
                                "the repository, or $TETON_KUEUE_DIR")


def _render(fabric: Fabric) -> tuple[dict[str, dict[str, str]], list[dict]]:
    files = TARGET.render(fabric, RenderContext())
    nodes = [d for d in yaml.safe_load_all(files[NODE_LABELS]) if d]
    assert all(n["apiVersion"] == "v1" and n["kind"] == "Node" and set(n["metadata"]) == {"name", "labels"}
               for n in nodes)
    labels = {n["metadata"]["name"]: n["metadata"]["labels"] for n in nodes}
    return labels, [d for d in yaml.safe_load_all(files[KUEUE]) if d]


def _nested(labels: dict[str, dict[str, str]], keys: list[str]) -> None:
    """Each level's domain lies in one domain of the level above (Kueue's tree)."""
    keys = [k for k in keys if k != HOSTNAME]
    for upper, lower in zip(keys, keys[1:], strict=False):
        parents: dict[str, set[str]] = {}
        for own in labels.values():
            parents.setdefault(own[lower], set()).add(own[upper])
        assert all(len(p) == 1 for p in parents.values()), (upper, lower)


def _check(fabric: Fabric) -> tuple[dict[str, dict[str, str]], list[str]]:
    labels, docs = _render(fabric)
    hosts = fabric.by_role("host")
    assert sorted(labels) == sorted(d.name for d in hosts)                          # every GPU host, once
    topo, flavor = docs
    assert (topo["kind"], flavor["kind"]) == ("Topology", "ResourceFlavor")
    keys = [lv["nodeLabel"] for lv in topo["spec"]["levels"]]
    assert keys[-1] == HOSTNAME and keys[-3:-1] == [KUEUE_BLOCK, KUEUE_RACK]
    assert flavor["spec"] == {"nodeLabels": {CLUSTER: fabric.name}, "topologyName": topo["metadata"]["name"]}
    for d in hosts:
        own = labels[d.name]
        assert all(label_key_problem(k) is None and label_value_problem(v) is None for k, v in own.items())
        assert name_problem(d.name) is None
        assert all(k in own for k in keys if k != HOSTNAME)                           # the labels match the levels
        assert own[CLUSTER] == fabric.name and own[KUEUE_BLOCK] == f"z{d.zone:02d}" and own[KUEUE_RACK] == d.rack
        rails = {i.ordinal: i.peer for i in d.interfaces if i.kind in ("host-rtsw", "host-leaf")}
        assert {k: v for k, v in own.items() if k.startswith("teton.dev/rail")} == {
            rail_key(n): peer for n, peer in rails.items()}
    _nested(labels, keys)
    return labels, keys


def test_roce_lab_labels_zone_rack_and_the_rack_switch(lab_fabric):
    labels, keys = _check(lab_fabric)
    assert keys == [KUEUE_BLOCK, KUEUE_RACK, HOSTNAME]
    own = labels["z02-r001-h2"]
    assert (own[LEAF], own[SPINE], own[CORE]) == ("z02-r001-rtsw", "z02", "lab")
    assert {own[rail_key(n)] for n in range(8)} == {"z02-r001-rtsw"}                  # every rail on the rack's RTSW


def test_infiniband_lab_labels_its_scalable_units_and_each_rails_leaf(lab_ib_fabric):
    labels, keys = _check(lab_ib_fabric)
    own = labels["z02-r001-h1"]
    assert (own[LEAF], own[SPINE]) == ("z02", "lab-ib") and CORE not in own
    assert [own[rail_key(n)] for n in range(8)] == [f"z02-leaf{n}" for n in range(8)]   # rail n on leaf n of its SU


def test_three_level_infiniband_puts_the_pod_above_the_scalable_unit():
    from tests.design.test_infiniband import _three_levels
    from teton.design import design

    fabric = design(_three_levels())
    labels, keys = _check(fabric)
    assert keys == [SPINE, KUEUE_BLOCK, KUEUE_RACK, HOSTNAME]
    pods = {own[SPINE] for own in labels.values()}
    assert len(pods) > 1 and all(p.startswith("p") for p in pods)
    assert {own[CORE] for own in labels.values()} == {fabric.name}


@needs_crds
@pytest.mark.parametrize("version", ["v1beta1", "v1beta2"])
def test_the_manifests_validate_against_kueues_own_crd_schemas(lab_fabric, lab_ib_fabric, version):
    served = {v for _, v in kq.schemas(CRDS)}
    assert served == {"kueue.x-k8s.io/v1beta1", "kueue.x-k8s.io/v1beta2"}          # Kueue v0.19.2 serves both
    for fabric in (lab_fabric, lab_ib_fabric):
        for doc in _render(fabric)[1]:
            doc = {**doc, "apiVersion": f"kueue.x-k8s.io/{version}"}
            assert kq.validate(doc, CRDS) == [], doc


@needs_crds
def test_the_crd_schemas_refuse_what_kueue_refuses():
    topo = kq.topology("lab", [KUEUE_BLOCK, HOSTNAME])
    assert kq.validate(topo, CRDS) == []
    bad_label = kq.topology("lab", ["no/such/label!"])
    assert any("spec.levels.0.nodeLabel" in p for p in kq.validate(bad_label, CRDS))
    assert any("at least" in p or "non-empty" in p or "should be non-empty" in p
               for p in kq.validate(kq.topology("lab", []), CRDS))                     # minItems: 1
    assert any("at most" in p or "too long" in p or "16" in p
               for p in kq.validate(kq.topology("lab", [f"a/l{i}" for i in range(17)]), CRDS))
    assert "spec.levels: must be unique" in kq.validate(kq.topology("lab", [KUEUE_BLOCK, KUEUE_BLOCK]), CRDS)
    assert any("lowest level" in p for p in kq.validate(kq.topology("lab", [HOSTNAME, KUEUE_RACK]), CRDS))
    flavor = kq.resource_flavor("lab-gpu", "Not_A_Name", {CLUSTER: "lab"})
    assert any(p.startswith("spec.topologyName") for p in kq.validate(flavor, CRDS))
    assert any("at least one nodeLabel" in p for p in kq.validate(kq.resource_flavor("f", "lab", {}), CRDS))
    too_many = kq.resource_flavor("f", "lab", {f"k{i}": "v" for i in range(9)})
    assert any(p.startswith("spec.nodeLabels") for p in kq.validate(too_many, CRDS))     # maxProperties: 8
    assert any("metadata.name" in p for p in kq.validate(kq.topology("Lab_1", [HOSTNAME]), CRDS))
    assert "not served" in kq.validate({**topo, "apiVersion": "kueue.x-k8s.io/v1alpha1"}, CRDS)[0]


def test_kueue_crds_are_found_as_the_yang_models_are(tmp_path, monkeypatch):
    monkeypatch.delenv(kq.ENV_VAR, raising=False)
    assert kq.find_kueue_dir(tmp_path) is None                                       # given, and empty: not found
    if CRDS is not None:
        copy = tmp_path / "kueue" / "crd"
        shutil.copytree(CRDS, copy)
        assert kq.find_kueue_dir(tmp_path / "kueue") == copy == kq.find_kueue_dir(copy)
        monkeypatch.setenv(kq.ENV_VAR, str(tmp_path / "kueue"))
        assert kq.find_kueue_dir() == copy
        assert kq.SHARED_KUEUE_DIR.name == "kueue" and kq.SHARED_KUEUE_DIR.parent.name == "shared"


def test_kubernetes_label_syntax():
    assert label_key_problem("cloud.provider.com/topology-block") is None and label_key_problem("rack") is None
    for key in ("", "a/", "/rack", "Cloud.com/x", "a_b.com/x", "x/" + "r" * 64, "x/-rack", "a" * 254 + "/x"):
        assert label_key_problem(key) is not None, key
    assert label_value_problem("") is None and label_value_problem("z01-r001_rtsw.a") is None
    for value in ("-z01", "z01-", "a b", "a/b", "v" * 64):
        assert label_value_problem(value) is not None, value
    assert name_problem("lab-gpu") is None and name_problem("Lab") and name_problem("a_b") and name_problem("a-")
    assert object_name("Lab_1") == "lab-1"


def test_a_host_name_kubernetes_refuses_stops_the_render(lab_fabric):
    import dataclasses

    host = lab_fabric.devices["z01-r001-h1"]
    renamed = dataclasses.replace(host, name="Z01_r001-h1")
    fabric = dataclasses.replace(lab_fabric, devices={**lab_fabric.devices, renamed.name: renamed})
    with pytest.raises(SpecError) as exc:
        TARGET.render(fabric, RenderContext())
    assert any(f.file == NODE_LABELS and f.path == "Z01_r001-h1" and "Kubernetes object name" in f.message
               for f in exc.value.findings)


def test_read_back_checks_every_host_and_the_schemas(lab_build, lab_fabric, tmp_path):
    from teton.buildfolder import BuildFolder

    views, found = TARGET.read_back(BuildFolder(lab_build), lab_fabric, RenderContext())
    assert views == [] and [f for f in found if f.severity == "error"] == []
    assert (CRDS is None) == any(f.severity == "warning" for f in found)
    files = {NODE_LABELS: (lab_build / NODE_LABELS).read_text(), KUEUE: (lab_build / KUEUE).read_text()}
    nodes = [d for d in yaml.safe_load_all(files[NODE_LABELS]) if d]
    del nodes[0]["metadata"]["labels"][KUEUE_RACK]
    nodes[1]["metadata"]["labels"]["bad key!"] = "x"
    broken = {**files, NODE_LABELS: yaml.safe_dump_all(nodes[1:] + nodes[:1])}
    _, found = TARGET.read_back(BuildFolder(files=broken), lab_fabric, RenderContext(), vendor=False)
    messages = [f"{f.path}: {f.message}" for f in found]
    assert f"z01-r001-h1: no label {KUEUE_RACK}, a level of the Kueue Topology" in messages
    assert any(m.startswith("z01-r001-h2: label key 'bad key!'") for m in messages)
    _, found = TARGET.read_back(BuildFolder(files={**files, NODE_LABELS: yaml.safe_dump_all(nodes[2:])}),
                                lab_fabric, RenderContext(), vendor=False)
    assert any("labels 6 nodes, the Fabric has 8 GPU hosts (missing: z01-r001-h1, z01-r001-h2" in f.message
               for f in found)
