"""`teton ib verify` without a simulator: the rendered topology.net, edited the way cabling goes wrong."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.helpers import INVENTORY
from teton.cli import main
from teton.design import design
from teton.spec.load import load_spec
from teton.targets.opensm.topology import topology_net
from teton.targets.opensm.verify import compare

LAB_IB = INVENTORY / "lab-ib.yaml"


@pytest.fixture(scope="module")
def fabric():
    return design(load_spec(LAB_IB))


@pytest.fixture(scope="module")
def topology(fabric) -> str:
    return topology_net(fabric)


def test_the_rendered_topology_is_what_the_design_says(fabric, topology):
    r = compare(fabric, topology)
    assert r.ok and r.links == r.found == 130 and r.unknown_nodes == []   # 64 HCA + 64 up + 2 SM links


def test_two_hosts_swapped_on_a_leaf_are_miswired_both_ways(fabric, topology):
    r = compare(fabric, _cross(topology))
    assert not r.ok and r.missing == [] and r.extra == []
    assert r.miswired == [
        {"expected": "z01-r001-h1 mlx5_0 <-> z01-leaf0 1/1/1",
         "found": "z01-r001-h1 mlx5_0 <-> z01-leaf0 1/1/2; z01-leaf0 1/1/1 <-> z01-r001-h2 mlx5_0"},
        {"expected": "z01-r001-h2 mlx5_0 <-> z01-leaf0 1/1/2",
         "found": "z01-r001-h2 mlx5_0 <-> z01-leaf0 1/1/1; z01-leaf0 1/1/2 <-> z01-r001-h1 mlx5_0"}]


def _cross(topology: str) -> str:
    """The cables of z01-r001-h1 and z01-r001-h2 mlx5_0 crossed at z01-leaf0, written as both ends see it."""
    lines = topology.splitlines()
    out = []
    record = None
    for line in lines:
        if line.startswith(("Switch", "Hca")):
            record = line.split('"')[1]
        if record == "z01-leaf0" and line == '[1]\t"z01-r001-h1 mlx5_0"[1]':
            line = '[1]\t"z01-r001-h2 mlx5_0"[1]'
        elif record == "z01-leaf0" and line == '[2]\t"z01-r001-h2 mlx5_0"[1]':
            line = '[2]\t"z01-r001-h1 mlx5_0"[1]'
        elif record == "z01-r001-h1 mlx5_0" and line.startswith("[1]"):
            line = '[1]\t"z01-leaf0"[2]'
        elif record == "z01-r001-h2 mlx5_0" and line.startswith("[1]"):
            line = '[1]\t"z01-leaf0"[1]'
        out.append(line)
    return "\n".join(out) + "\n"


def test_a_cable_on_ports_the_design_leaves_free_is_extra(fabric, topology):
    text = topology.replace('Switch\t64 "z01-leaf0"\n', 'Switch\t64 "z01-leaf0"\n[64]\t"z01-leaf1"[64]\n')
    text = text.replace('Switch\t64 "z01-leaf1"\n', 'Switch\t64 "z01-leaf1"\n[64]\t"z01-leaf0"[64]\n')
    r = compare(fabric, text)
    assert r.extra == [("z01-leaf0 1/32/2", "z01-leaf1 1/32/2")] and r.missing == [] and r.miswired == []


def test_a_switch_the_design_does_not_know(fabric, topology):
    foreign = 'switchguid=0x0c42a10300001234\nSwitch\t64 "S-0c42a10300001234"\t# "MF0;lab:MQM9700/U1"\n' \
              '[3]\t"z02-leaf7"[64]\n\n'
    text = topology.replace('Switch\t64 "z02-leaf7"\n', 'Switch\t64 "z02-leaf7"\n[64]\t"S-0c42a10300001234"[3]\n')
    r = compare(fabric, text + foreign)
    assert r.extra == [("z02-leaf7 1/32/2", "0x0c42a10300001234 (S-0c42a10300001234) port 3")]
    assert r.unknown_nodes == ["S-0c42a10300001234"]


def test_a_missing_switch_reports_every_link_of_it(fabric, topology):
    lines, keep, record = topology.splitlines(), [], None
    for line in lines:
        if line.startswith(("Switch", "Hca")):
            record = line.split('"')[1]
        elif not line:
            record = None
        if record == "spine02" or line.endswith('"spine02"[1]') or '"spine02"[' in line:
            continue
        keep.append(line)
    r = compare(fabric, "\n".join(keep) + "\n")
    assert len(r.missing) == 16 and r.missing[0] == ("z01-leaf0 1/3/2", "spine02 1/1/1")


def test_the_cli_prints_json(fabric, topology, tmp_path):
    dump = tmp_path / "dump.txt"
    dump.write_text(_cross(topology))
    result = CliRunner().invoke(main, ["ib", "verify", str(LAB_IB), "--discovered", str(dump), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["ok"] is False and report["found"] == 128 and len(report["miswired"]) == 2
