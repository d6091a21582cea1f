"""A per-device target renders each device from its slice of the Fabric only (`teton.fabric.slice`): the incremental
render and `teton diff` take a device's files from the cache, or skip them, when its slice is unchanged.  If this test
fails, a target started reading something outside the slice (another device's fields, the links, a fabric-wide field):
add that input to `DeviceSlice` (and so to the digest), or read it from the device's own intents."""

from __future__ import annotations

import dataclasses

import pytest

from teton import targets
from teton.fabric.slice import DigestMemo, device_digest, device_slice, fabric_digests, slice_digest, slice_fabric
from teton.targets import DeviceTarget, RenderContext

DEVICE_TARGETS = [t for t in targets.targets() if isinstance(t, DeviceTarget)]


@pytest.fixture(scope="module")
def fboss_lab_fabric(tmp_path_factory):
    """The lab with FBOSS rack switches: the lab itself has none."""
    import yaml

    from tests.helpers import LAB, fboss, write_spec
    from teton.design import design
    from teton.spec.load import load_spec

    return design(load_spec(write_spec(tmp_path_factory.mktemp("spec"), fboss(yaml.safe_load(LAB.read_text())))))


@pytest.mark.parametrize("target", DEVICE_TARGETS, ids=lambda t: t.name)
def test_every_device_renders_the_same_from_its_slice_alone(lab_fabric, fboss_lab_fabric, target):
    lab_fabric = fboss_lab_fabric if target.nos == "fboss" else lab_fabric
    ctx = RenderContext()
    state = target.chunk_state(ctx)
    devices = target.devices(lab_fabric)
    assert devices, f"the lab has no {target.nos} switch"
    for d in devices:
        full, problems = target.render_device(lab_fabric, d, ctx, state)
        alone = slice_fabric(device_slice(lab_fabric, d.name))
        sliced, _ = target.render_device(alone, alone.devices[d.name], ctx, state)
        assert not problems
        assert sliced == full, f"{target.name} renders {d.name} differently from its slice alone"


def test_the_slice_holds_the_device_its_model_and_its_neighbours_roles(lab_fabric):
    rtsw = next(d for d in lab_fabric.devices.values() if d.role == "rtsw")
    s = device_slice(lab_fabric, rtsw.name)
    assert s.device is rtsw and s.model is lab_fabric.models[rtsw.model]
    assert {p for p, _ in s.peers} == {i.peer for i in rtsw.interfaces}
    assert all(role == lab_fabric.devices[p].role for p, role in s.peers)


def test_equal_slices_give_equal_digests_and_any_field_changes_the_digest(lab_fabric):
    digests = fabric_digests(lab_fabric)
    assert len(set(digests.values())) == len(digests), "two devices share a digest"
    rtsw = next(d for d in lab_fabric.devices.values() if d.role == "rtsw")
    s = device_slice(lab_fabric, rtsw.name)
    assert slice_digest(s) == digests[rtsw.name] == device_digest(lab_fabric, rtsw.name, DigestMemo())
    for change in ({"mgmt": "10.250.0.99/19"}, {"asn": (rtsw.asn or 0) + 1}, {"interfaces": rtsw.interfaces[1:]},
                   {"qos": None}, {"attrs": {"x": 1}}):
        other = s._replace(device=dataclasses.replace(rtsw, **change))
        assert slice_digest(other) != digests[rtsw.name], change
    assert slice_digest(s._replace(peers=s.peers[:1])) != digests[rtsw.name]


def test_a_fabric_wide_field_is_not_in_a_device_slice(lab_fabric):
    """The shared intents reach a device as its own fields; the fabric's copies are compared by `head_digests`."""
    renamed = dataclasses.replace(lab_fabric, name="other", site="elsewhere")
    assert fabric_digests(renamed) == fabric_digests(lab_fabric)
