"""Tenants' partitions as a real OpenSM programs them: two tenants in lab-ib, OpenSM (Debian's 3.3.23) over ibsim.

The master runs as a daemon (so its SA answers path queries) on a service host of its own; every HCA port's P_Key table
is read with smpquery and compared with what the spec says, port by port, not a sample.  Then the master is stopped
and the standby, from its own rendered file on its own service host, takes the subnet over: every port again.  The
expected tables are worked out here from the spec's own words (zones, hosts), not from the design's code.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import yaml

from tests.ib.simulator import Simulator, lids, opensm_log_problems, stop_daemon
from tests.ib.test_opensm_sim import LAB_IB, M_KEY, MASTER, SM_KEY, STANDBY, _deployed

FULL = 0x8000
DEFAULT_FULL, DEFAULT_LIMITED = 0xFFFF, 0x7FFF
TENANTS = [{"name": "tenant-a", "pkey": 0x0A01, "zones": [2]},
           {"name": "tenant-b", "pkey": 0x0A02, "hosts": ["z01-r001-h2", "z01-r002-h2"], "rate_gbps": 100, "sl": 1}]
READER = "z01-r002-h1 mlx5_7"     # a host of no tenant, from which the tables are read


def _conf_value(conf: Path, key: str) -> str:
    return next(line.split()[1] for line in conf.read_text().splitlines() if line.startswith(f"{key} "))


def _pkeys(sim: Simulator, lid: int) -> list[int]:
    """The P_Key table of port 1 of the HCA at `lid`, in index order, without the empty entries at its end."""
    run = sim.client(["smpquery", "pkeys", str(lid), "1"], READER)
    assert run.returncode == 0, run.stderr
    table = [int(v, 16) for line in run.stdout.splitlines() if ":" in line for v in line.split(":", 1)[1].split()]
    while table and table[-1] == 0:
        table.pop()
    return table


def _master_up(sim: Simulator, conf: Path, node: str, log: Path):
    """Start the subnet manager of `conf` on `node` as a daemon; return it once its log says SUBNET UP."""
    if log.exists():
        log.unlink()
    sm = sim.daemon(["opensm", "-F", str(conf), "-d2"], node,       # -d2: flush the log after every message
                    env={"OSM_CACHE_DIR": str(sim.workdir), "OSM_TMP_DIR": str(sim.workdir)})
    deadline = time.monotonic() + 60
    while not (log.is_file() and "SUBNET UP" in log.read_text()):
        assert sm.poll() is None, f"OpenSM exited: {log.read_text()[-2000:] if log.is_file() else ''}"
        assert time.monotonic() < deadline, "no SUBNET UP within 60 s"
        time.sleep(0.2)
    text = log.read_text()
    assert f"binding to port GUID 0x{int(_conf_value(conf, 'guid'), 16):x}" in text
    assert "ftree tables configured on all switches" in text and opensm_log_problems(text) == []
    return sm


@pytest.fixture(scope="module")
def tenants(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lab-ib-tenants")
    data = yaml.safe_load(LAB_IB.read_text())
    data["backend"]["partitions"] = TENANTS
    spec, out, etc = _deployed(tmp, data)
    hosts = [f"z{z:02d}-r{r:03d}-h{h}" for z in (1, 2) for r in (1, 2) for h in (1, 2)]
    member = {h: t["pkey"] for t in TENANTS for h in hosts
              if h in t.get("hosts", []) or int(h[1:3]) in t.get("zones", [])}
    with Simulator(out / "ib" / "topology.net", tmp / "sim") as sim:
        yield {"sim": sim, "etc": etc, "log": tmp / "log" / "opensm.log", "hosts": hosts, "member": member,
               "partitions": (etc / "partitions.conf").read_text()}


def _lids(sim: Simulator) -> dict[str, int]:
    run = sim.client(["ibnetdiscover"], READER)
    assert run.returncode == 0, run.stderr
    return lids(run.stdout)


def _assert_every_port(t: dict, table: dict[str, int]) -> int:
    """Every HCA port's table: a tenant's member has its P_Key, full, at index 0 and is a limited member of the default
    partition; a host of no tenant and both subnet managers' service hosts are full members of the default at index
    0.  Returns the number of ports checked."""
    wrong, checked = [], 0
    ports = [f"{h} mlx5_{i}" for h in t["hosts"] for i in range(8)] + [MASTER, STANDBY]
    assert set(ports) == {name for name in table if " mlx5_" in name}       # every HCA port the fabric has
    for port in ports:
        h = port.split()[0]
        pkey = t["member"].get(h)
        default = DEFAULT_FULL if pkey is None else DEFAULT_LIMITED
        expected = [default] if pkey is None else [pkey | FULL, default]
        found = _pkeys(t["sim"], table[port])
        checked += 1
        if found != expected:
            wrong.append(f"{port}: {[hex(k) for k in found]}, expected {[hex(k) for k in expected]}")
    assert wrong == [], "\n".join(wrong)
    return checked


def _path(sim: Simulator, table: dict[str, int], src: str, dst: str) -> bool:
    """An SA path record query from `src` to `dst`, asked by `src` (OpenSM answers only if they share a P_Key that one
    of them is a full member of)."""
    run = sim.client(["saquery", "--src-to-dst", f"{table[src]}:{table[dst]}"], src, timeout=20)
    found = "PathRecord dump" in run.stdout
    if found:
        assert f"dlid....................{table[dst]}\n" in run.stdout, run.stdout
    return found


def _assert_reach(sim: Simulator, table: dict[str, int]) -> None:
    # a tenant's two racks reach each other, on every rail
    for rail in range(8):
        assert _path(sim, table, f"z02-r001-h2 mlx5_{rail}", f"z02-r002-h1 mlx5_{rail}")
        assert _path(sim, table, f"z01-r001-h2 mlx5_{rail}", f"z01-r002-h2 mlx5_{rail}")
    # and never the other tenant's ports, either way
    assert not _path(sim, table, "z02-r001-h2 mlx5_0", "z01-r001-h2 mlx5_0")
    assert not _path(sim, table, "z01-r002-h2 mlx5_3", "z02-r002-h1 mlx5_3")
    # a limited member of the default partition still reaches its full members: the hosts of no tenant are shared
    assert _path(sim, table, "z02-r002-h1 mlx5_4", "z01-r002-h1 mlx5_4")


def test_every_statement_of_a_partition_carries_its_flags(tenants):
    statements = [line for line in tenants["partitions"].splitlines() if line and not line.startswith("#")]
    heads = {line.split(":", 1)[0].strip() for line in statements}
    assert heads == {"Default=0x7fff, ipoib, mtu=5", "tenant-a=0x0a01, indx0, ipoib, mtu=5",
                     "tenant-b=0x0a02, indx0, ipoib, mtu=5, rate=16, sl=1"}
    default = [line for line in statements if line.startswith("Default=")]       # SELF after every port's own
    assert default[-1] == "Default=0x7fff, ipoib, mtu=5 : ALL_SWITCHES=full, SELF=full ;"


def test_the_master_then_the_standby_program_every_port_as_the_spec_says(tenants):
    sim, etc, log = tenants["sim"], tenants["etc"], tenants["log"]
    master = _master_up(sim, etc / "opensm.conf", MASTER, log)
    try:
        table = _lids(sim)
        assert _assert_every_port(tenants, table) == 66
        _assert_reach(sim, table)
    finally:
        stop_daemon(master)
    standby = _master_up(sim, etc / "opensm-standby1.conf", STANDBY, log)
    try:
        info = sim.client(["sminfo"], READER)
        assert "priority 14" in info.stdout and "SMINFO_MASTER" in info.stdout, info.stdout
        table = _lids(sim)
        assert _assert_every_port(tenants, table) == 66
        _assert_reach(sim, table)
    finally:
        stop_daemon(standby)


def test_opensm_takes_the_m_key_and_its_protection_from_the_rendered_file(tenants, tmp_path):
    """OpenSM's effective options after reading each instance's file (the secret resolved as a deploy does): every
    port's M_Key, protected at level 2 with a 60 s lease.  ibsim 0.10 does not model M_Key (any port may
    Set(PortInfo) there: `ibportstate` from a tenant's host disables its own port), so what the switches and HCAs
    then enforce is the hardware's part; this checks what the subnet managers are told to set."""
    for conf in ("opensm.conf", "opensm-standby1.conf"):
        dump = tmp_path / f"{conf}.effective"
        run = subprocess.run(["opensm", "-F", str(tenants["etc"] / conf), "-c", str(dump)], capture_output=True,
                             text=True, timeout=30)
        assert dump.is_file(), run.stdout + run.stderr
        options = dict(line.split(None, 1) for line in dump.read_text().splitlines()
                       if line and not line.startswith("#") and " " in line)
        assert options["m_key"] == M_KEY and options["m_key_protection_level"] == "2"
        assert options["m_key_lease_period"] == "60" and options["sm_key"] == SM_KEY
