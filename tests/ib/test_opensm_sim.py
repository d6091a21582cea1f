"""A real subnet manager routes the lab's rendered InfiniBand fabric: OpenSM (Debian's opensm) over ibsim.

The rendered files are deployed as a deploy would (the `ib/` folder copied to the subnet manager's config folder, the
SM_Key secret resolved) and used unchanged; the topology the simulator runs is the rendered `ib/topology.net`.
OpenSM falls back silently (an unknown engine routes with minhop, a bad root GUID is an error it survives), so every
assertion reads OpenSM's log and the fabric itself, never an exit code.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import INVENTORY
from tests.ib.simulator import Simulator, lids, opensm_log_problems
from teton.cli import main
from teton.pipeline import build
from teton.secrets import resolve

LAB_IB = INVENTORY / "lab-ib.yaml"
SM_KEY = "0x00000000000000ab"
M_KEY = "0x000000000000c0de"
MASTER, STANDBY = "ib-sm1 mlx5_0", "ib-sm2 mlx5_0"     # the subnet managers' service hosts (inventory/lab-ib.yaml)
SECRETS = {"ib_sm_key": SM_KEY, "ib_m_key": M_KEY}


def _deployed(tmp: Path, data: dict, name: str = "spec.yaml") -> tuple[Path, Path, Path]:
    """(spec, build folder, config folder): the spec pointed at folders of the test, rendered, its ib/ deployed."""
    etc, log = tmp / "etc-opensm", tmp / "log"
    data["backend"]["subnet_manager"].update(config_dir=str(etc), log_dir=str(log))
    spec = tmp / name
    spec.write_text(yaml.safe_dump(data, sort_keys=False))
    out = build(spec, tmp / "build").path
    etc.mkdir()
    log.mkdir()
    for f in (out / "ib").iterdir():
        (etc / f.name).write_text(resolve(f.read_text(), SECRETS))
    return spec, out, etc


def _sweep(sim: Simulator, conf: Path, node: str, log: Path) -> tuple[float, str]:
    """One OpenSM sweep (`-o`: discover, route, configure, exit) from HCA `node`; (seconds, its log)."""
    if log.exists():
        log.unlink()
    start = time.monotonic()
    run = sim.client(["opensm", "-F", str(conf), "-o"], node, env={"OSM_CACHE_DIR": str(sim.workdir),
                                                                    "OSM_TMP_DIR": str(sim.workdir)})
    took = time.monotonic() - start
    assert log.is_file(), f"OpenSM wrote no log: {run.stdout[-2000:]} {run.stderr[-2000:]}"
    return took, log.read_text()


def _assert_routed(text: str, engine: str, port_guid: str) -> None:
    assert f"binding to port GUID 0x{int(port_guid, 16):x}" in text      # the HCA port the config names
    assert f"{engine} tables configured on all switches" in text          # the engine asked for, not a fallback
    assert "SUBNET UP" in text
    assert opensm_log_problems(text) == []


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab-ib")
    spec, out, etc = _deployed(tmp, yaml.safe_load(LAB_IB.read_text()))
    with Simulator(out / "ib" / "topology.net", tmp / "sim") as sim:
        took, text = _sweep(sim, etc / "opensm.conf", MASTER, tmp / "log" / "opensm.log")
        yield {"spec": spec, "out": out, "etc": etc, "log": tmp / "log" / "opensm.log", "sim": sim, "sweep_s": took,
               "sweep_log": text, "tmp": tmp}


def _discover(sim: Simulator, tmp: Path, name: str, node: str = "z01-r002-h2 mlx5_3") -> Path:
    run = sim.client(["ibnetdiscover"], node)
    assert run.returncode == 0, run.stderr
    dump = tmp / name
    dump.write_text(run.stdout)
    return dump


def test_opensm_routes_the_lab_with_ftree_from_the_rendered_files(lab, capsys):
    fabric_json = (lab["out"] / "fabric.json").read_text()
    master_guid = next(line.split()[1] for line in (lab["etc"] / "opensm.conf").read_text().splitlines()
                       if line.startswith("guid "))
    text = lab["sweep_log"]
    _assert_routed(text, "ftree", master_guid)
    # ftree ranked the fabric from the rendered root GUID file: 4 spines on top, 16 leaves; the 64 GPU HCAs and the two
    # subnet managers' service HCAs (on leaf ports of their own) are its end ports
    assert "Fabric has 66 CAs, 66 CA ports (66 of them CNs), 20 switches" in text
    assert "Fabric has 4 switches at rank 0 (roots)" in text and "16 switches at rank 1 (16 of them leafs)" in text
    assert '"backend":"infiniband"' in fabric_json
    with capsys.disabled():
        print(f"\n[lab-ib] one OpenSM sweep (discover, ftree, partitions, QoS, SUBNET UP): {lab['sweep_s']:.2f} s")


def test_partitions_and_qos_reach_the_fabric(lab):
    sim = lab["sim"]
    table = lids(_discover(sim, lab["tmp"], "after-sm.txt").read_text())
    node = "z01-r002-h2 mlx5_3"

    def pkeys(hca: str) -> list[str]:
        run = sim.client(["smpquery", "pkeys", str(table[hca]), "1"], node)
        assert run.returncode == 0, run.stderr
        return run.stdout.split()[1:3]

    assert pkeys("z02-r001-h1 mlx5_0") == ["0x8a01", "0x7fff"]     # tenant-a (SU 2): its P_Key first, default limited
    assert pkeys("z01-r002-h1 mlx5_3") == ["0xffff", "0x0000"]     # SU 1: a full member of the default partition
    run = sim.client(["smpquery", "sl2vl", str(table["z01-leaf0"]), "1"], node)
    row = next(line for line in run.stdout.splitlines() if line.startswith("ports: in  1,"))
    assert row.split("|")[1:4] == [" 0", " 1", " 0"]                  # SL 1 (high priority) on VL 1, the rest on VL 0


def test_the_standby_subnet_manager_routes_alone(lab):
    """The standby's own file, on its own host's HCA, routes the fabric the same way when no master answers."""
    conf = lab["etc"] / "opensm-standby1.conf"
    guid = next(line.split()[1] for line in conf.read_text().splitlines() if line.startswith("guid "))
    assert "sm_priority 14" in conf.read_text()
    _, text = _sweep(lab["sim"], conf, STANDBY, lab["log"])
    _assert_routed(text, "ftree", guid)


def test_ibnetdiscover_matches_the_design_then_a_cut_link_is_named(lab):
    sim, spec = lab["sim"], str(lab["spec"])
    clean = _discover(sim, lab["tmp"], "clean.txt")
    result = CliRunner().invoke(main, ["ib", "verify", spec, "--discovered", str(clean)])
    assert result.exit_code == 0, result.output
    assert "130 of 130 links of the design found; as designed" in result.output
    # the first leaf-spine link of the design: z01-leaf0's first uplink (port 5, named 1/3/1) to spine01 port 1
    sim.console('Unlink "z01-leaf0"[5]')
    cut = _discover(sim, lab["tmp"], "cut.txt")
    result = CliRunner().invoke(main, ["ib", "verify", spec, "--discovered", str(cut)])
    assert result.exit_code == 1
    assert "missing   z01-leaf0 1/3/1 <-> spine01 1/1/1" in result.output
    assert "129 of 130 links of the design found; 1 missing, 0 miswired, 0 extra" in result.output
    # and OpenSM still routes the fabric with ftree around the missing link
    master = lab["etc"] / "opensm.conf"
    guid = next(line.split()[1] for line in master.read_text().splitlines() if line.startswith("guid "))
    _, text = _sweep(sim, master, MASTER, lab["log"])
    _assert_routed(text, "ftree", guid)


def test_three_levels_with_uneven_core_links_route_with_ftree(tmp_path):
    """A three-level tree of a small radix-8 IB switch: 6 SUs in 2 pods, 8 spines, 4 cores; each spine's 3 uplinks
    reach its plane's 2 cores 2 + 1 (the 24k reference's 32 uplinks over 12 cores are 3 + 2)."""
    data = yaml.safe_load(LAB_IB.read_text())
    data.update(zones=6, racks_per_zone=1, hosts_per_rack=2, frontend=None, storage=[], services=[])
    data["host"].update(gpus=2, backend_nics=2)
    data["switch_models"] = [{"name": "ib-8", "vendor": "test", "asic": "radix 8", "asic_tbps": 6.4,
                              "port_naming": "ib", "nos": [],
                              "port_groups": [{"count": 8, "speed_gbps": 400, "lanes": 4, "form_factor": "OSFP"}]}]
    be = data["backend"]
    be.update(leaf={"model": "ib-8"}, spine={"model": "ib-8"}, core={"model": "ib-8"}, partitions=[])
    be["qos"] = {"enabled": False}
    spec, out, etc = _deployed(tmp_path, data)
    plan = json.loads((out / "manifest.json").read_text())["plan"]
    assert plan["switches"] == {"leaf": 12, "spine": 8, "core": 4} and plan["fat_tree"]["levels"] == 3
    with Simulator(out / "ib" / "topology.net", tmp_path / "sim") as sim:
        guid = next(line.split()[1] for line in (etc / "opensm.conf").read_text().splitlines()
                    if line.startswith("guid "))
        # no service hosts: the subnet manager falls back to the first HCA of the first host of no tenant
        _, text = _sweep(sim, etc / "opensm.conf", "z01-r001-h1 mlx5_0", tmp_path / "log" / "opensm.log")
        _assert_routed(text, "ftree", guid)
        assert "FatTree rank (roots to leaf switches): 3" in text
        assert "Fabric has 4 switches at rank 0 (roots)" in text
        dump = _discover(sim, tmp_path, "dump.txt", "z06-r001-h2 mlx5_1")
    result = CliRunner().invoke(main, ["ib", "verify", str(spec), "--discovered", str(dump)])
    assert result.exit_code == 0, result.output


def test_the_build_folder_reads_back_clean(lab):
    from teton.validate.rendered import validate_rendered

    assert [f for f in validate_rendered(lab["out"]) if f.severity == "error"] == []
    shutil.copytree(lab["out"], lab["tmp"] / "edited")
    topo = lab["tmp"] / "edited" / "ib" / "topology.net"
    text = topo.read_text()
    assert '[5]\t"spine01"[1]\n' in text and '[1]\t"z01-leaf0"[5]\n' in text
    topo.write_text(text.replace('[5]\t"spine01"[1]\n', "", 1).replace('[1]\t"z01-leaf0"[5]\n', "", 1))
    found = {(f.file, f.rule) for f in validate_rendered(lab["tmp"] / "edited")}
    assert ("ib/topology.net", "manifest") in found and ("ib/topology.net", "ib-topology") in found
