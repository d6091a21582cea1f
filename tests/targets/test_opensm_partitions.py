"""partitions.conf as OpenSM reads it: every statement of a partition carries its flags, the running subnet manager
is a full member of the default partition last, and the read-back rule names the ports a file would leave wrong.

The two broken spellings are the ones lab-ib had (issue 20): continuation lines without `indx0`, and `SELF=full`
first so that the standby's port, on a tenant's host, was demoted by its later `limited`.  tests/ib/ proves the fixed
file under a real OpenSM; this checks the rule that would have caught them without one.
"""

from __future__ import annotations

import re

import pytest
import yaml

from tests.helpers import INVENTORY
from teton.design import design
from teton.spec.model import Cluster
from teton.targets.opensm.files import partitions_conf
from teton.targets.opensm.partitions import PartitionsError, check, memberships, parse

SELF_LINE = "Default=0x7fff, ipoib, mtu=5 : ALL_SWITCHES=full, SELF=full ;"


@pytest.fixture(scope="module")
def two_tenants():
    data = yaml.safe_load((INVENTORY / "lab-ib.yaml").read_text())
    data["backend"]["partitions"] = [{"name": "tenant-a", "pkey": 0x0A01, "zones": [2]},
                                     {"name": "tenant-b", "pkey": 0x0A02, "hosts": ["z01-r001-h2", "z01-r002-h2"],
                                      "mtu": 2048, "rate_gbps": 200, "sl": 2}]
    # the standby on a tenant's host, as lab-ib had it: the spec rule `subnet-manager` now refuses that, so this is
    # designed without the spec rules, to show the read-back rule still names what such a file would do
    data["services"] = [s for s in data["services"] if s["role"] != "subnet-manager"]
    data["backend"]["subnet_manager"]["hosts"] = ["z01-r001-h1", "z02-r001-h1"]
    fabric = design(Cluster.model_validate(data))
    assert fabric.subnet_manager is not None
    return fabric, fabric.subnet_manager, partitions_conf(fabric, fabric.subnet_manager)


def test_the_rendered_file_is_what_the_intent_says_with_either_sm_running(two_tenants):
    fabric, sm, text = two_tenants
    assert list(check(fabric, sm, text)) == []
    heads = {line.split(" : ")[0] for line in text.splitlines() if line and not line.startswith("#")}
    assert heads == {"Default=0x7fff, ipoib, mtu=5", "tenant-a=0x0a01, indx0, ipoib, mtu=5",
                     "tenant-b=0x0a02, indx0, ipoib, mtu=4, rate=17, sl=2"}
    assert [line for line in text.splitlines() if line.startswith("Default=")][-1] == SELF_LINE
    # the standby runs on a tenant-a host: as SELF its port is full in the default, its host's other ports limited
    standby = sm.instances[1]
    assert standby.host in next(p for p in sm.partitions if p.name == "tenant-a").members
    guids = fabric.devices[standby.host].attrs["port_guids"]
    got = memberships(parse(text), guids[standby.hca], [g for d in fabric.devices.values()
                                                        for g in d.attrs.get("port_guids", {}).values()])
    assert got[0x7FFF][guids[standby.hca].lower()] == (True, False)
    assert got[0x7FFF][guids["mlx5_1"].lower()] == (False, False)
    assert got[0x0A01][guids["mlx5_1"].lower()] == (True, True)


def test_a_continuation_without_its_flags_is_named_with_the_ports_it_misplaces(two_tenants):
    fabric, sm, text = two_tenants
    seen: set[str] = set()

    def first_only(m: re.Match[str]) -> str:       # the old spelling: flags on a partition's first statement only
        name = m[1]
        keep = m[0] if name not in seen else f"{name} :"
        seen.add(name)
        return keep

    old = re.sub(r"^([\w.-]+=0x[0-9a-f]{4})[^:\n]* :", first_only, text, flags=re.M)
    found = list(check(fabric, sm, old))
    lines = [line for line, _ in found if line is not None]
    assert lines and all("OpenSM reads every statement afresh" in p for line, p in found if line is not None)
    ports = " ".join(p for line, p in found if line is None)
    assert "z02-r002-h1 mlx5_0 ends 0x0a01 full, 0x7fff limited, the intent is 0x0a01 full at index 0" in ports


def test_self_first_is_named_for_the_standby_whose_port_it_demotes(two_tenants):
    fabric, sm, text = two_tenants
    old = text.replace(SELF_LINE + "\n", "")
    old = old.replace("Default=0x7fff, ipoib, mtu=5 :", SELF_LINE + "\nDefault=0x7fff, ipoib, mtu=5 :", 1)
    found = list(check(fabric, sm, old))
    standby = sm.instances[1]
    assert found == [(None, f"with the subnet manager on {standby.host} {standby.hca}: {standby.host} {standby.hca} "
                            "ends 0x0a01 full at index 0, 0x7fff limited, the intent is 0x0a01 full at index 0, "
                            "0x7fff full")]


def test_a_broken_statement_names_its_line():
    with pytest.raises(PartitionsError) as err:
        parse("# head\nDefault=0x7fff, ipoib :\n  ALL=full ;\nx=0x0a01 : 0xzz=full ;\n")
    assert err.value.line == 4 and "0xzz" in err.value.message
    with pytest.raises(PartitionsError, match="closing"):
        parse("Default=0x7fff : ALL=full\n")
    st = parse("Default=0x7fff, ipoib :\n  ALL=full, SELF ;\n")
    assert st[0].line == 1 and st[0].members == (("ALL", "full"), ("SELF", "limited"))
