"""`SplitValidator` validates each SONiC switch's per-device tables every time and each distinct shared part and port
part (the PORT rows without their descriptions) once.

The shared-part cache only pays if the shared part is the same on every switch of one class (model, plane, role): a
per-device table left out of PER_DEVICE (DEVICE_NEIGHBOR was) makes every switch's shared part distinct and every switch
is validated twice; the port part only if the rows differ by their descriptions alone.  These tests count the shared
and port parts of the lab and the 24k reference; a YANG error planted in a per-device table, a used and an unused
port's row, a port's description, a shared table and the neighbour tables is still reported, naming device, table and
key; and the split reports what one validation of the whole config_db reports."""

from __future__ import annotations

import copy

import pytest

from teton.fabric.model import Fabric
from teton.fabric.neighbours import expected
from teton.targets import get
from teton.targets.sonic.config_db import config_db, neighbour_tables
from teton.targets.sonic.validate import PER_DEVICE, SplitValidator, yang_findings


def _dbs(fabric: Fabric) -> list[tuple[str, tuple[str, str, str], dict]]:
    """(name, class, config_db) of every SONiC switch, as the target builds it before validating."""
    out = []
    for d in get("sonic").devices(fabric):
        db = config_db(d, fabric.models[d.model])
        db.update(neighbour_tables(expected(fabric, d), {i.peer: fabric.devices[i.peer].role for i in d.interfaces}))
        out.append((d.name, (d.model, d.plane, d.role), db))
    return out


@pytest.fixture(scope="module")
def split() -> SplitValidator:
    return SplitValidator()


def _counted(split: SplitValidator, dbs) -> tuple[int, int, list]:
    """(libyang validations, shared parts, issues) of validating `dbs` with a fresh cache."""
    split._shared.clear()
    split._ports.clear()
    split.calls = 0
    issues = [i for name, _, db in dbs for i in split.validate(name, db)]
    return split.calls, split.shared_parts, issues


def _port_tables(dbs) -> int:
    """The distinct PORT tables of `dbs` once the descriptions are left out (ports used alike, alike)."""
    return len({repr(sorted((k, sorted((f, v) for f, v in row.items() if f != "description"))
                            for k, row in db["PORT"].items())) for _, _, db in dbs})


def test_the_labs_switches_share_one_shared_part_per_class_and_validate_clean(lab_fabric, split):
    dbs = _dbs(lab_fabric)
    classes = {c for _, c, _ in dbs}
    assert any("DEVICE_NEIGHBOR" in db for _, _, db in dbs)
    calls, shared, issues = _counted(split, dbs)
    assert issues == []
    assert shared == len(classes)
    # one libyang validation per switch (its per-device part), one per class (the shared part) and one per distinct
    # PORT table without descriptions (the port part: the lab's front-end racks have 4 port usages among 5 switches)
    assert split.port_parts == _port_tables(dbs) == 6
    assert calls == len(dbs) + len(classes) + split.port_parts


@pytest.mark.scale24k
def test_the_24k_references_switches_share_one_shared_part_per_class(split, monkeypatch, roce24k):
    """Counted without libyang (the lab test above validates for real): the 24k reference's 3,145 switches."""
    dbs = _dbs(roce24k.fabric)
    classes = {c for _, c, _ in dbs}
    assert len(dbs) > 3000 and len(classes) <= 8
    monkeypatch.setattr(split.yang, "validate", lambda device, doc: [])
    calls, shared, _ = _counted(split, dbs)
    assert shared == len(classes)
    assert split.port_parts == _port_tables(dbs) <= 2 * len(classes)
    assert calls == len(dbs) + len(classes) + split.port_parts


@pytest.fixture(scope="module")
def lab_rtsw(lab_fabric) -> tuple[str, dict]:
    name, _, db = next(x for x in _dbs(lab_fabric) if x[1][2] == "rtsw")
    return name, db


def _planted(split: SplitValidator, lab_rtsw, table: str, key: str, field: str, value: str) -> list[str]:
    name, db = lab_rtsw
    split._shared.clear()
    assert split.validate(name, db) == []          # the shared part of the clean switch is cached ...
    broken = copy.deepcopy(db)
    broken[table][key][field] = value
    # ... and the broken one is another shared part, or the same with its per-device part broken
    return [f"{f.file} {f.path}" for f in yang_findings(f"devices/{name}/config_db.json", split.validate(name, broken))]


def test_an_error_in_a_device_neighbor_row_is_reported(split, lab_rtsw):
    name, db = lab_rtsw
    port = sorted(db["DEVICE_NEIGHBOR"])[0]
    found = _planted(split, lab_rtsw, "DEVICE_NEIGHBOR", port, "local_port", "Ethernet999")
    assert found == [f"devices/{name}/config_db.json DEVICE_NEIGHBOR|{port}/local_port"]


def test_an_error_in_a_device_neighbor_metadata_row_is_reported(split, lab_rtsw):
    name, db = lab_rtsw
    peer = sorted(db["DEVICE_NEIGHBOR_METADATA"])[0]
    found = _planted(split, lab_rtsw, "DEVICE_NEIGHBOR_METADATA", peer, "lo_addr", "not-an-address")
    assert found == [f"devices/{name}/config_db.json DEVICE_NEIGHBOR_METADATA|{peer}/lo_addr"]


def test_an_error_in_a_per_device_table_is_reported(split, lab_rtsw):
    name, db = lab_rtsw
    port = sorted(db["PORT"])[-1]        # any row: unused ports are validated with the per-device part too
    found = _planted(split, lab_rtsw, "PORT", port, "mtu", "99999")
    assert found == [f"devices/{name}/config_db.json PORT|{port}/mtu"]


def test_an_error_in_a_shared_table_is_reported_for_every_switch_that_has_it(split, lab_rtsw):
    name, db = lab_rtsw
    assert "BUFFER_PG" not in PER_DEVICE
    key = sorted(db["BUFFER_PG"])[0]
    found = _planted(split, lab_rtsw, "BUFFER_PG", key, "profile", "no_such_profile")
    assert found == [f"devices/{name}/config_db.json BUFFER_PG|{key}/profile"]
    other = copy.deepcopy(db)
    other["BUFFER_PG"][key]["profile"] = "no_such_profile"
    calls = split.calls
    again = split.validate("another-switch", other)              # the same shared part: its result is reused
    assert split.calls == calls + 1
    assert [(i.device, i.table, i.key, i.field) for i in again] == [("another-switch", "BUFFER_PG", key, "profile")]


def _ports_by_use(db: dict) -> tuple[str, str]:
    """(a used port, an unused port) of a config_db."""
    used = sorted(k for k, row in db["PORT"].items() if "description" in row)
    unused = sorted(k for k, row in db["PORT"].items() if "description" not in row)
    assert used and unused
    return used[0], unused[0]


def test_an_error_in_an_unused_ports_row_is_reported(split, lab_rtsw):
    name, db = lab_rtsw
    _, unused = _ports_by_use(db)
    found = _planted(split, lab_rtsw, "PORT", unused, "speed", "0")
    assert found == [f"devices/{name}/config_db.json PORT|{unused}/speed"]


def test_an_error_in_a_used_ports_row_and_in_its_description_is_reported(split, lab_rtsw):
    name, db = lab_rtsw
    used, _ = _ports_by_use(db)
    found = _planted(split, lab_rtsw, "PORT", used, "mtu", "99999")
    assert found == [f"devices/{name}/config_db.json PORT|{used}/mtu"]
    found = _planted(split, lab_rtsw, "PORT", used, "description", "x" * 256)     # length 0..255
    assert found == [f"devices/{name}/config_db.json PORT|{used}/description"]


def _issues(issues) -> list[tuple[str, str, str, str | None]]:
    return sorted((i.device, i.table, i.key, i.field or "") for i in issues)


def test_the_split_reports_what_one_validation_of_the_whole_config_db_reports(split, lab_rtsw):
    """The long way beside it: the whole config_db in one libyang validation, with errors planted in every part (the
    per-device tables, a port's description, a used and an unused port's row, a shared table, a reference from a
    per-device table to a port that does not exist)."""
    name, db = lab_rtsw
    used, unused = _ports_by_use(db)
    broken = copy.deepcopy(db)
    broken["PORT"][used]["description"] = "y" * 300
    broken["PORT"][used]["fec"] = "fast"
    broken["PORT"][unused]["speed"] = "0"
    broken["PORT"][unused]["lanes"] = ""
    broken["INTERFACE"]["Ethernet999"] = {}
    broken["DEVICE_METADATA"]["localhost"]["bgp_asn"] = "not-a-number"
    broken["BUFFER_PG"][sorted(broken["BUFFER_PG"])[0]]["profile"] = "no_such_profile"
    broken["DEVICE_NEIGHBOR_METADATA"][sorted(broken["DEVICE_NEIGHBOR_METADATA"])[0]]["lo_addr"] = "nowhere"
    whole = _issues(split.yang.validate(name, broken))
    assert len(whole) == 8                                          # every planted error, once
    split._shared.clear()
    split._ports.clear()
    assert _issues(split.validate(name, broken)) == whole           # each part validated ...
    assert _issues(split.validate(name, broken)) == whole           # ... and reused
    assert _issues(split.validate(name, db)) == _issues(split.yang.validate(name, db)) == []
    # an unused port is left out of the per-device part unless a per-device table names it: then it is there
    named = copy.deepcopy(db)
    named["INTERFACE"][unused] = {}
    named["DEVICE_NEIGHBOR"][unused] = {"name": "far", "port": "eth1", "local_port": unused}
    assert _issues(split.validate(name, named)) == _issues(split.yang.validate(name, named)) == []
