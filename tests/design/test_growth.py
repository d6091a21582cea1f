"""Growth without renumbering: within its room, a cluster grows (and shrinks) by its new devices and the ports where
they attach; every device that existed keeps its addresses, ASN, sessions, port map and routing intent."""

from __future__ import annotations

import copy
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import LAB, REF24K, write_spec
from teton.checks import check_spec
from teton.design import design
from teton.fabric.hostplan import GpuHostPlan, ServicePlan
from teton.fabric.intent import Routing
from teton.fabric.model import Device, Fabric
from teton.spec.load import load_spec

ROOM = {"zones": 4, "racks_per_zone": 4, "storage_racks": 3, "atsw": 3, "ssw_per_plane": 2}


def lab_with_room() -> dict[str, Any]:
    """The lab with room to grow: 4 zones of 4 racks, 3 racks per storage group, a third ATSW, a second spine per
    plane; its pools widened to hold that room."""
    data = yaml.safe_load(LAB.read_text())
    data["room"] = dict(ROOM)
    data["backend"]["addressing"]["ipv4"]["host_links"] = "10.64.0.0/23"
    return data


def fabric_of(data: dict[str, Any], folder: Path, name: str = "spec.yaml") -> Fabric:
    path = write_spec(folder, data, name)
    cluster = load_spec(path)
    errors = [f for f in check_spec(cluster, str(path)) if f.severity == "error"]
    assert not errors, errors
    return design(cluster)


def imports_kept(a: Routing, b: Routing, ports: set[str]) -> bool:
    """Every import policy of `a` for a neighbour still there (on `ports`) accepts the same in `b`, for at least those
    neighbours (new neighbours may join a group's)."""
    live = {n.address for n in a.neighbors if n.interface in ports}
    grown = {i.name: i for i in b.imports}
    for i in a.imports:
        mine = set(i.neighbors) & live
        g = grown.get(i.name)
        if mine and (g is None or g.accept != i.accept or not mine <= set(g.neighbors)):
            return False
    return True


def _nfs_respread(a: Device, b: Device, old: Fabric, new: Fabric) -> bool:
    """`a` and `b` differ in their hosts' NFS servers only, and only where the group serving a mount changed its
    servers: (k + i) mod n re-spreads a group's clients over its servers when n changes (some move to the new
    servers, some between the old ones; `teton.design.hostplan.assign_nfs`), and nothing else of a host moves."""
    pa, pb = a.host, b.host
    if not isinstance(pa, GpuHostPlan | ServicePlan) or not isinstance(pb, GpuHostPlan | ServicePlan):
        return False
    if replace(pa, nfs=()) != replace(pb, nfs=()):
        return False

    def storage(f: Fabric) -> set[str]:
        return {n for n, d in f.devices.items() if d.role == "storage"}

    regrouped = storage(old) != storage(new)
    return all(x == y or (regrouped and x.mount_point == y.mount_point) for x, y in zip(pa.nfs, pb.nfs, strict=True))


def moved(old: Fabric, new: Fabric, nfs_growth: bool = False) -> dict[str, list[str]]:
    """{existing device: what of its own changed}: gaining interfaces (and their sessions), or losing those to
    devices that are gone, is not a change; with `nfs_growth`, nor a host's NFS mount moving when its group's
    servers changed (the only change growing an NFS group makes to a host)."""
    out: dict[str, list[str]] = {}
    for name, a in old.devices.items():
        b = new.devices.get(name)
        if b is None or a == b:
            continue
        what = [f for f in ("asn", "loopback4", "loopback6", "router_id", "mgmt", "prefixes4", "prefixes6", "rack",
                            "ru", "zone", "host", "qos", "buffers", "policy", "management")
                if getattr(a, f) != getattr(b, f)
                and not (f == "host" and nfs_growth and _nfs_respread(a, b, old, new))]
        kept = {i.name: i for i in b.interfaces}
        # a port kept must be the same; a port may go only with the device at its far end (a decommission)
        what += [f"port {i.name}" for i in a.interfaces
                 if kept.get(i.name, i if i.peer not in new.devices else None) != i]
        if a.routing != b.routing:
            assert a.routing is not None and b.routing is not None
            if not {x for x in a.routing.neighbors if x.interface in kept} <= set(b.routing.neighbors):
                what.append("sessions")
            if replace(a.routing, neighbors=(), groups=(), imports=()) != \
                    replace(b.routing, neighbors=(), groups=(), imports=()):
                what.append("routing intent")
            if not set(a.routing.groups) <= set(b.routing.groups):
                what.append("peer groups")
            if not imports_kept(a.routing, b.routing, set(kept)):
                what.append("import policies")
        if what:
            out[name] = what
    return out


def attached(old: Fabric, new: Fabric) -> set[str]:
    """Existing devices that gained (or lost) interfaces only."""
    return {n for n, a in old.devices.items() if n in new.devices and a != new.devices[n]}


def grown(tmp_path: Path, **counts: int) -> tuple[Fabric, Fabric]:
    """(the lab with room, the same with `counts` changed), designed."""
    data = lab_with_room()
    old = fabric_of(data, tmp_path, "old.yaml")
    data.update(counts)
    return old, fabric_of(data, tmp_path, "new.yaml")


def test_a_zone_added_changes_only_the_aggregation_and_the_front_end_spines(tmp_path):
    old, new = grown(tmp_path, zones=3)
    assert moved(old, new) == {}
    assert attached(old, new) == {"atsw01", "atsw02", "ssw01-01", "ssw02-01"}
    added = set(new.devices) - set(old.devices)
    assert {"z03-ctsw01", "z03-r002-rtsw", "z03-r001-frsw", "z03-fsw02", "z03-r002-h2"} <= added
    assert new.devices["atsw01"].routing.maximum_prefixes == old.devices["atsw01"].routing.maximum_prefixes


def test_a_rack_added_changes_only_its_zones_spines(tmp_path):
    old, new = grown(tmp_path, racks_per_zone=3)
    assert moved(old, new) == {}
    assert attached(old, new) == {f"z0{z}-ctsw0{c}" for z in (1, 2) for c in range(1, 5)} | {
        f"z0{z}-fsw0{f}" for z in (1, 2) for f in (1, 2)}
    for ctsw in ("z01-ctsw01", "z02-ctsw04"):      # one downlink more each, nothing else
        assert len(new.devices[ctsw].interfaces) == len(old.devices[ctsw].interfaces) + 1


def test_a_storage_rack_added_and_a_rack_removed(tmp_path):
    data = lab_with_room()
    old = fabric_of(data, tmp_path, "old.yaml")
    grown = copy.deepcopy(data)
    grown["storage"][0]["racks"] = 2
    new = fabric_of(grown, tmp_path, "grown.yaml")
    assert moved(old, new) == {} and attached(old, new) == {"st-fsw01", "st-fsw02"}
    assert {"s1-r02-frsw", "s1-r02-sp01"} <= set(new.devices) - set(old.devices)
    bigger = copy.deepcopy(data)
    bigger["racks_per_zone"] = 3
    three = fabric_of(bigger, tmp_path, "three.yaml")
    two = fabric_of(data, tmp_path, "two.yaml")
    assert moved(three, two) == {}                 # decommissioning rack 3 of each zone: only its attachments go
    assert set(three.devices) - set(two.devices) >= {"z01-r003-rtsw", "z02-r003-frsw", "z01-r003-h1"}


def test_an_aggregator_and_a_spine_added_within_the_room(tmp_path):
    data = lab_with_room()
    old = fabric_of(data, tmp_path, "old.yaml")
    data["backend"]["atsw"]["count"] = 3
    data["frontend"]["ssw"]["per_plane"] = 2
    new = fabric_of(data, tmp_path, "new.yaml")
    assert moved(old, new) == {}
    assert {"atsw03", "ssw01-02", "ssw02-02"} <= set(new.devices) - set(old.devices)
    assert attached(old, new) == {d.name for d in old.devices.values() if d.role in ("ctsw", "fsw")}


STEPS = st.sampled_from(["zone", "rack", "storage", "atsw", "ssw"])


def _grow(data: dict[str, Any], step: str) -> bool:
    """Apply one expansion within the room; False when that dimension is full."""
    if step == "zone" and data["zones"] < ROOM["zones"]:
        data["zones"] += 1
    elif step == "rack" and data["racks_per_zone"] < ROOM["racks_per_zone"]:
        data["racks_per_zone"] += 1
    elif step == "storage" and data["storage"][1]["racks"] < ROOM["storage_racks"]:
        data["storage"][1]["racks"] += 1
    elif step == "atsw" and data["backend"]["atsw"]["count"] < ROOM["atsw"]:
        data["backend"]["atsw"]["count"] += 1
    elif step == "ssw" and data["frontend"]["ssw"]["per_plane"] < ROOM["ssw_per_plane"]:
        data["frontend"]["ssw"]["per_plane"] += 1
    else:
        return False
    data["backend"]["ctsw"]["oversubscription"] = data["racks_per_zone"] / data["backend"]["atsw"]["count"]
    return True


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEPS, min_size=1, max_size=4))
def test_any_expansions_within_the_room_leave_every_existing_device_as_it_was(tmp_path, steps):
    data = lab_with_room()
    data["backend"]["ctsw"]["oversubscription"] = data["racks_per_zone"] / data["backend"]["atsw"]["count"]
    first = fabric_of(data, tmp_path, "first.yaml")
    previous = first
    for n, step in enumerate(steps):
        if not _grow(data, step):
            continue
        current = fabric_of(data, tmp_path, f"step{n}.yaml")
        nfs = step == "storage"                  # the NFS group grew: its new server takes some clients
        assert moved(previous, current, nfs) == {}, (steps[: n + 1], moved(previous, current, nfs))
        previous = current
    grew_nfs = "storage" in steps
    assert moved(first, previous, grew_nfs) == {}    # and the whole sequence at once (shrinking back: the reverse,
    assert moved(previous, first, grew_nfs) == {}    # a removed server's clients back on the others)


def test_a_room_below_the_spec_is_refused_with_its_path(tmp_path):
    data = lab_with_room()
    data["room"]["zones"] = 1
    path = write_spec(tmp_path, data)
    found = [f for f in check_spec(load_spec(path), str(path)) if f.rule == "room"]
    assert [(f.path, f.severity) for f in found] == [("room.zones", "error")]
    assert "room 1 is less than the spec's 2" in found[0].message


def test_a_room_too_big_for_a_pool_is_refused_naming_the_pool_and_the_room(tmp_path):
    data = lab_with_room()
    data["backend"]["addressing"]["ipv4"]["host_links"] = "10.64.0.0/24"      # 8 /27s for 4 x 4 racks
    path = write_spec(tmp_path, data)
    found = [f for f in check_spec(load_spec(path), str(path)) if f.rule == "pool-exhausted"]
    assert [f.path for f in found] == ["backend.addressing.ipv4.host_links"]
    assert "holds 8 /27 blocks but the fabric needs 16 at its room (room: 4 zones x 4 racks" in found[0].message


def test_an_undeclared_room_is_what_the_ports_hold(tmp_path):
    from teton.catalogue import catalogue_for
    from teton.design.room import room_of

    data = yaml.safe_load(LAB.read_text())
    data["room"] = {}
    cluster = load_spec(write_spec(tmp_path, data))
    room = room_of(cluster, catalogue_for(cluster))
    # a 7804R3 ATSW: 144 ports for 4 CTSWs a zone; a 7804R3 CTSW: 144 ports, 2 kept for the ATSWs
    assert (room.zones, room.racks_per_zone, room.atsw) == (36, 142, 2)
    assert room.why["zones"] == "arista-7804r3 ATSW ports" and room.why["atsw"] == "the spec's count"
    path = write_spec(tmp_path, data)                                  # the lab's /24 pools cannot hold that
    assert "pool-exhausted" in {f.rule for f in check_spec(load_spec(path), str(path))}


def test_a_spec_without_a_room_is_laid_out_for_what_it_has(tmp_path):
    from teton.catalogue import catalogue_for
    from teton.design.room import NO_ROOM, room_of

    cluster = load_spec(LAB)
    room = room_of(cluster, catalogue_for(cluster))
    assert (room.zones, room.racks_per_zone, room.atsw, room.storage_racks) == (2, 2, 2, 1)
    assert set(room.why.values()) == {NO_ROOM}
    data = yaml.safe_load(LAB.read_text())
    old = fabric_of(data, tmp_path, "old.yaml")
    data["zones"] = 3
    new = fabric_of(data, tmp_path, "new.yaml")
    assert moved(old, new)            # no room: growing renumbers (as teton always did), and the diff says so


@pytest.mark.scale24k
def test_the_24k_reference_grows_a_zone_touching_only_the_atsws_and_the_spines(tmp_path):
    data = yaml.safe_load(REF24K.read_text())
    old = fabric_of(data, tmp_path, "old.yaml")
    data["zones"] = 9
    new = fabric_of(data, tmp_path, "new.yaml")
    assert moved(old, new) == {}
    touched = attached(old, new)
    assert {old.devices[n].role for n in touched} == {"atsw", "ssw"}
    assert len(touched) == 28 + 16
    assert len(set(new.devices) - set(old.devices)) == 16 + 192 * 2 + 4 + 192 * 2       # CTSW, RTSW+RSW, FSW, hosts


# files that list every host or every link of the cluster: they gain the new ones' lines
CLUSTER_LISTS = {"fabric.json", "cabling.csv", "manifest.json", "ansible/inventory.yml", "hosts/backend.json",
                 "slurm/topology.conf", "slurm/topology.yaml", "slurm/gres.conf", "slurm/slurm.conf",
                 "kubernetes/node-labels.yaml", "cabling/bom.csv", "cabling/rack-power.csv", "cabling/neighbours.json",
                 "cabling/topology.dot",
                 "anta/inventory.yml",             # every EOS switch by its management address
                 # monitoring: the designed series, the scrape targets, the subscriptions and the tests' sample (the
                 # rules, prometheus.yml and dcgm-counters.csv stay the same whatever the cluster's size)
                 *(f"monitoring/designed/{x}.prom" for x in ("devices", "links", "sessions", "qos", "buffers", "gpus",
                                                             "mounts")),
                 *(f"monitoring/tests/{x}.test.yml" for x in ("links", "bgp", "roce", "hosts", "meta")),
                 *(f"monitoring/targets/{x}.json" for x in ("node", "frr", "dcgm")),
                 "monitoring/gnmi.yaml", "monitoring/exporters.yaml"}


def _render(data: dict[str, Any], folder: Path) -> dict[str, bytes]:
    from teton.pipeline import build

    folder.mkdir(parents=True)
    return _files(build(str(write_spec(folder, data, "spec.yaml")), folder / "build").path)


def _files(build: Path) -> dict[str, bytes]:
    return {p.relative_to(build).as_posix(): p.read_bytes() for p in sorted(build.rglob("*")) if p.is_file()}


def _owner(path: str) -> str | None:
    """The device a file belongs to: its folder's, or the switch an ANTA catalog tests (`anta/<switch>.yml`)."""
    if path.startswith("devices/"):
        return path.split("/")[1]
    if path.startswith("anta/") and path != "anta/inventory.yml":
        return path.split("/")[1].removesuffix(".yml")
    return None


def _changed_devices(old: dict[str, bytes], new: dict[str, bytes]) -> tuple[set[str], set[str]]:
    """(devices whose existing files changed, other existing files that changed)."""
    changed = {p for p in old if p in new and old[p] != new[p]}
    devices = {d for p in changed if (d := _owner(p)) is not None}
    return devices, {p for p in changed if _owner(p) is None}


def test_a_zone_added_rewrites_no_file_of_an_existing_rack_or_spine(tmp_path):
    """Rendered: the ATSWs' and front-end spines' configs gain the new zone's ports; every other existing device's
    files, every existing host's variables, stay byte-identical."""
    data = lab_with_room()
    old = _render(data, tmp_path / "old")
    data["zones"] = 3
    new = _render(data, tmp_path / "new")
    devices, others = _changed_devices(old, new)
    assert devices == {"atsw01", "atsw02", "ssw01-01", "ssw02-01"}
    assert others <= CLUSTER_LISTS, others - CLUSTER_LISTS


@pytest.mark.scale24k
def test_the_24k_reference_zone_added_rewrites_only_the_atsws_and_spines_files(tmp_path, roce24k_network_build):
    data = yaml.safe_load(REF24K.read_text())
    old = _files(roce24k_network_build[1])        # the session's build of the reference as it is (8 zones)
    data["zones"] = 9
    new = _render(data, tmp_path / "new")
    devices, others = _changed_devices(old, new)
    assert devices == {f"atsw{a:02d}" for a in range(1, 29)} | {f"ssw{j:02d}-{k:02d}" for j in range(1, 5)
                                                                  for k in range(1, 5)}
    assert others <= CLUSTER_LISTS, others - CLUSTER_LISTS
