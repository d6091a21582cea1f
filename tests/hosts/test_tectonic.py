"""Tectonic said for what it is: a FUSE client Meta has not published.  Without a client named in the spec, no mount
is rendered and `validate` warns (rule tectonic-client); with one, storage_client installs its package (reported
when it cannot) and writes the namespace's endpoints and its mount unit."""

from __future__ import annotations

import json

import pytest

from tests.helpers import write_spec
from tests.hosts import harness as h
from teton.pipeline import build

CLIENT = {"package": "tectonic-fuse-client", "endpoints": ["tectonic-meta.example:9000", "[fd00:5::1]:9000"]}


@pytest.fixture(scope="module")
def with_client(tmp_path_factory):
    import yaml

    data = yaml.safe_load((h.ROOT / "inventory/lab.yaml").read_text())
    data["storage"][0]["client"] = CLIENT
    data["storage"][0]["shares"][0]["mounted_by"] = ["gpu"]     # the lab mounts it nowhere: no client
    folder = tmp_path_factory.mktemp("tectonic")
    return build(write_spec(folder, data), folder / "build").path


def test_a_named_client_is_mounted_with_its_endpoints(with_client, tmp_path):
    host = "z01-r001-h1"
    own = h.variables(with_client / f"ansible/host_vars/{host}.json")    # its NFS server is its own: host_vars
    assert own["teton_storage_mounts"]["tectonic"] == [
        {"mount_point": "/mnt/tectonic", "namespace": "checkpoints", "options": ["allow_other", "default_permissions"],
         **CLIENT}]
    roots = tmp_path / "roots"
    root = h.make_root(roots / host)
    h.chroot_exe(roots, root, None)
    play = tmp_path / "play.yml"
    play.write_text(f"- hosts: {host}\n  gather_facts: true\n  gather_subset: [min]\n  roles: [storage_client]\n")
    kw = {"limit": host, "roots": roots, "extravars": {"storage_client_install": False}}
    first = h.play(play, [str(with_client / "ansible/inventory.yml")], tmp_path / "run", **kw)
    assert first.rc == 0, first.stdout[-4000:]
    unit = (root / "etc/systemd/system/mnt-tectonic.mount").read_text().splitlines()
    assert "What=tectonic:checkpoints" in unit and "Type=fuse.tectonic" in unit
    assert "Options=allow_other,default_permissions,config=/etc/tectonic/checkpoints.json" in unit
    assert json.loads((root / "etc/tectonic/checkpoints.json").read_text()) == {
        "endpoints": CLIENT["endpoints"], "namespace": "checkpoints"}
    assert ("Tectonic client packages not installed (storage_client_install is false): tectonic-fuse-client"
            in "\n".join(first.warnings()))
    second = h.play(play, [str(with_client / "ansible/inventory.yml")], tmp_path / "run", **kw)
    assert second.rc == 0 and second.total("changed") == 0, second.changed_tasks()


def test_no_client_no_mount_and_a_warning(lab_build, lab_data):
    from teton.checks.frontend_rules import tectonic_client
    from teton.spec.model import Cluster

    own = h.variables(lab_build / "ansible/host_vars/z01-r001-h1.json")
    assert own["teton_storage_mounts"]["tectonic"] == []
    assert list(tectonic_client(Cluster.model_validate(lab_data), "lab.yaml")) == []    # the lab mounts it nowhere
    lab_data["storage"][0]["shares"][0]["mounted_by"] = ["gpu"]
    found = list(tectonic_client(Cluster.model_validate(lab_data), "lab.yaml"))
    assert [(f.path, f.severity) for f in found] == [("storage[0].client", "warning")]
    assert "Meta has not published" in found[0].message
