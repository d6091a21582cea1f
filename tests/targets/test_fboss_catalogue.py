"""The catalogue's FBOSS port table says what FBOSS's platform mappings say, and the FBOSS namings of Minipack2 and
Wedge400 name the ports that run the catalogue's speeds."""

from __future__ import annotations

import pytest

import teton.targets  # noqa: F401  (registers the NOS packages' port namings)
from teton.catalogue import builtin_models
from teton.catalogue.ports import port_map
from teton.findings import TetonError
from teton.targets.fboss.catalogue import TABLE, port_table, table_yaml
from teton.targets.fboss.data import find_fboss_dir


def test_the_committed_table_is_what_the_platform_mappings_say():
    try:
        root = find_fboss_dir()
    except TetonError as exc:
        pytest.fail(f"FBOSS's reference files are needed (scripts/setup provides them): {exc}")
    assert TABLE.read_text() == table_yaml(root), "regenerate: python -m teton.targets.fboss.catalogue"


@pytest.mark.parametrize("model, platform, first, last, count", [
    ("minipack2", "fuji", "eth2/1/1", "eth9/15/1", 64),
    ("wedge400", "wedge400", "eth1/1/1", "eth1/48/1", 48)])
def test_the_fboss_naming_of_a_model_names_ports_fboss_runs_at_the_catalogues_speed(model, platform, first, last,
                                                                                    count):
    m = builtin_models()[model]
    ports = port_map(m, "fboss")
    table = port_table()[platform]
    assert (ports[0].name, ports[-1].name, len(ports)) == (first, last, count)
    assert all(p.name in table and p.speed_gbps in table[p.name].gbps for p in ports)
    # the SONiC spelling of the same model names the same cages by their first SerDes lane (from the same mapping)
    sonic = port_map(m, "sonic")
    assert all(s.name == f"Ethernet{p.lanes[0]}" and (s.cage, s.lanes) == (p.cage, p.lanes)
               for s, p in zip(sonic, ports, strict=True))
    assert port_map(m)[1].name == sonic[1].name


def test_which_ports_run_400g():
    fuji, wedge = port_table()["fuji"], port_table()["wedge400"]
    assert sorted(int(n.split("/")[1]) for n, p in fuji.items() if n.startswith("eth2/") and 400 in p.gbps) == \
        [1, 3, 5, 7, 9, 11, 13, 15]                  # a 16Q PIM: the odd cages, each taking the next one's lanes
    assert sorted(int(n.split("/")[1]) for n, p in wedge.items() if 400 in p.gbps) == list(range(1, 17))


def test_the_table_reads_the_same_through_libyaml_as_through_the_python_loader():
    import yaml

    from teton.catalogue import boxes
    text = boxes.TABLE.read_text(encoding="utf-8")
    fast = yaml.load(text, Loader=boxes.TABLE_LOADER)
    slow = yaml.load(text, Loader=yaml.SafeLoader)
    assert fast == slow and repr(fast) == repr(slow)        # repr: the same types too (1 == True == 1.0)
    assert boxes.fboss_table() == {p: dict(ports) for p, ports in slow["platforms"].items()}
