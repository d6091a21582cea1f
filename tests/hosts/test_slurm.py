"""Slurm's own controller reads the generated files: Debian's slurmctld with munge, started by the test on
slurm.conf/gres.conf/topology.conf from the build; `scontrol show topology` lists every switch and node once,
`scontrol show partition` one partition per InfiniBand P_Key with exactly its hosts; the node health check drains a
failing node through it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.hosts import slurm
from tests.hosts.harness import PLAYBOOKS, run

pytestmark = [pytest.mark.root("munged and slurmctld"),
              pytest.mark.skipif(shutil.which("slurmctld") is None, reason="scripts/setup installs slurmctld")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def _slurmctld(build: Path, files: tuple[str, ...] = ("gres.conf", "topology.conf")):
    """munged and slurmctld on the build's files (the controller's host name, ports, state and log folders and the
    nodes' addresses pointed at this machine: the cluster's hosts do not exist here)."""
    work = Path(tempfile.mkdtemp(prefix="tt-hosts-slurm-"))
    work.chmod(0o755)
    munge = work / "munge"
    munge.mkdir()
    shutil.chown(munge, "munge", "munge")
    key = munge / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    shutil.chown(key, "munge", "munge")
    sock = munge / "munge.socket"
    munged = subprocess.Popen(["runuser", "-u", "munge", "--", *slurm.munged_argv(key, sock, munge)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ctld = None
    try:
        slurm.wait_until("munged's socket", sock.exists, 5, 0.05)
        etc = work / "etc"
        etc.mkdir()
        for f in files:
            shutil.copy(build / "slurm" / f, etc / f)
        conf = (build / "slurm/slurm.conf").read_text()
        host = socket.gethostname().split(".")[0]
        over = {"SlurmctldHost": host, "SlurmctldPort": str(_free_port()), "SlurmdPort": str(_free_port()),
                "SlurmUser": "root", "StateSaveLocation": str(work / "state"),
                "SlurmdSpoolDir": str(work / "spool"), "SlurmctldPidFile": str(work / "slurmctld.pid"),
                "SlurmctldLogFile": str(work / "slurmctld.log"), "SlurmdLogFile": str(work / "slurmd.log")}
        for k, value in over.items():
            conf, n = re.subn(rf"^{k}=.*$", f"{k}={value}", conf, flags=re.M)
            assert n == 1, k
        conf = re.sub(r"^(NodeName=\S+)(?: NodeAddr=\S+)?", r"\1 NodeAddr=127.0.0.1", conf, flags=re.M)
        conf += f"AuthInfo=socket={sock}\n"
        (etc / "slurm.conf").write_text(conf)
        environ = {**os.environ, "SLURM_CONF": str(etc / "slurm.conf")}
        ctld = subprocess.Popen(["slurmctld", "-D", "-i"], env=environ, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        for _ in range(200):
            if ctld.poll() is not None:
                break
            if "UP" in run("scontrol", "ping", env=environ, check=False).stdout:
                break
            time.sleep(0.1)
        log = (work / "slurmctld.log").read_text() if (work / "slurmctld.log").exists() else ""
        assert ctld.poll() is None, f"slurmctld exited: {log[-3000:]}"
        yield _client(environ), environ
    finally:
        slurm.stop(ctld)
        slurm.stop(munged)
        shutil.rmtree(work, ignore_errors=True)


def _client(environ: dict[str, str]) -> slurm.Scontrol:
    """Slurm's clients on this machine, pointed at the test's slurmctld."""
    return lambda *cmd: run(*cmd, env=environ).stdout


@pytest.fixture(scope="module")
def controller(lab_build):
    """As the slurm role installs them: topology.yaml beside topology.conf (a Slurm older than 25.05 ignores it)."""
    with _slurmctld(lab_build, ("gres.conf", "topology.conf", "topology.yaml")) as running:
        yield running


def test_scontrol_shows_every_switch_and_node_exactly_once(controller, lab_fabric):
    scontrol, _ = controller
    switches, nodes, children = slurm.topology(scontrol)
    rtsws = sorted(d.name for d in lab_fabric.by_role("rtsw"))
    names = [n for n, _ in switches]
    assert sorted(names) == sorted(rtsws + ["z01", "z02", "lab"]) and len(names) == len(set(names))
    assert {n: lvl for n, lvl in switches} == {**dict.fromkeys(rtsws, 0), "z01": 1, "z02": 1, "lab": 2}
    assert sorted(nodes) == sorted(d.name for d in lab_fabric.by_role("host")) and len(nodes) == len(set(nodes))
    assert children["lab"] == ["z01", "z02"] and children["z02"] == ["z02-r001-rtsw", "z02-r002-rtsw"]
    sinfo = scontrol("sinfo", "-h", "-N", "-o", "%N %G")
    assert sinfo.count("gpu:h100:8") == 8
    hosts = sorted(d.name for d in lab_fabric.by_role("host"))
    assert slurm.partitions(scontrol) == {"gpu": (hosts, True)}   # no tenants


def test_gres_conf_gives_each_gpu_the_cores_of_its_socket(controller):
    scontrol, _ = controller
    out = scontrol("scontrol", "show", "node", "z01-r001-h1")
    assert "Gres=gpu:h100:8" in out and "Sockets=2" in out and "AvailableFeatures=z01,z01-r001" in out


def test_health_check_drains_a_failing_node_and_never_reboots_it(controller, tmp_path):
    scontrol, environ = controller
    cfg = tmp_path / "node-health.json"
    cfg.write_text(json.dumps({"node": "z02-r002-h2", "expected_gpus": 8, "nics": ["tt-no-such-nic"],
                               "pfc_priority": 3, "roce_qos_state": str(tmp_path / "missing.json"), "drain": True,
                               "scontrol": "scontrol"}))
    res = run("python3", str(PLAYBOOKS / "roles/gpu_health/files/teton-node-health"), "--config", str(cfg),
              env=environ, check=False)
    assert res.returncode == 1, res.stdout + res.stderr
    assert "n/a  gpus: no GPU here: nvidia-smi not found" in res.stdout       # no GPU: reported, not a failure
    assert "FAIL link tt-no-such-nic: no such interface" in res.stdout
    assert "drained z02-r002-h2 in Slurm" in res.stdout
    node = scontrol("scontrol", "show", "node", "z02-r002-h2")
    assert "DRAIN" in node and "Reason=teton-node-health: link tt-no-such-nic" in node


def test_infiniband_topology_is_one_switch_per_scalable_unit_under_the_cluster(lab_ib_build, lab_ib_fabric):
    """Rail-optimized SUs: every leaf of an SU reaches every node of it, so the SU is the scheduler's leaf switch."""
    with _slurmctld(lab_ib_build) as (scontrol, _):
        switches, nodes, children = slurm.topology(scontrol)
        sinfo = scontrol("sinfo", "-h", "-N", "-o", "%N %G")
    assert dict(switches) == {"z01": 0, "z02": 0, "lab-ib": 1}
    hosts = lab_ib_fabric.by_role("host")
    assert sorted(nodes) == sorted(d.name for d in hosts) and len(nodes) == len(set(nodes))
    assert children["lab-ib"] == ["z01", "z02"]
    assert sinfo.count("gpu:h100:8") == len(hosts)


def test_infiniband_partitions_are_one_per_p_key_with_exactly_its_hosts(lab_ib_build, lab_ib_fabric):
    """lab-ib: SU 1 in the default partition 0x7fff (`gpu`, the default), SU 2 the tenant-a's 0x0a01: a job's queue
    pairs connect only within one P_Key, so no Slurm partition spans two."""
    with _slurmctld(lab_ib_build) as (scontrol, _):
        parts = slurm.partitions(scontrol)
    su = {z: sorted(d.name for d in lab_ib_fabric.by_role("host") if d.zone == z) for z in (1, 2)}
    (tenant,) = lab_ib_fabric.subnet_manager.partitions
    assert tenant.name == "tenant-a" and list(tenant.members) == su[2]
    assert parts == {"gpu": (su[1], True), "tenant-a": (su[2], False)}


def test_when_every_host_is_a_tenants_the_first_tenant_is_the_default_partition(tmp_path):
    from tests.targets.test_slurm_partitions import every_su_a_tenant
    from teton.pipeline import build_fabric

    fabric = every_su_a_tenant()
    with _slurmctld(build_fabric(fabric, tmp_path / "lab-ib").path) as (scontrol, _):
        parts = slurm.partitions(scontrol)
    su = {z: sorted(d.name for d in fabric.by_role("host") if d.zone == z) for z in (1, 2)}
    assert parts == {"tenant-a": (su[2], True), "tenant-b": (su[1], False)}


def test_a_three_level_infiniband_fabric_puts_each_scalable_unit_in_its_pod(tmp_path):
    """Three levels: an SU's leaves reach its pod's spine groups, so the tree is SU -> pod -> cluster."""
    from tests.design.test_infiniband import _three_levels
    from teton.design import design
    from teton.pipeline import build_fabric

    fabric = design(_three_levels())
    build = build_fabric(fabric, tmp_path / "lab-ib3").path
    pods: dict[str, set[str]] = {}
    for leaf in fabric.by_role("leaf"):
        pods.setdefault(f"p{leaf.attrs['pod']:02d}", set()).add(f"z{leaf.zone:02d}")
    assert len(pods) > 1
    with _slurmctld(build) as (scontrol, _):
        switches, nodes, children = slurm.topology(scontrol)
    assert dict(switches) == {**{z: 0 for zs in pods.values() for z in zs}, **dict.fromkeys(pods, 1), "lab-ib3": 2}
    assert {p: set(children[p]) for p in pods} == pods and children["lab-ib3"] == sorted(pods)
    assert sorted(nodes) == sorted(d.name for d in fabric.by_role("host")) and len(nodes) == len(set(nodes))


def test_slurmctld_starts_with_topology_yaml_beside_topology_conf(lab_build, lab_fabric):
    """topology.yaml is read by Slurm >= 25.05 only; an older slurmctld (Debian 12 ships 22.05) must still start with
    it beside topology.conf and show the same tree (from topology.conf), so one build serves both."""
    with _slurmctld(lab_build, ("gres.conf", "topology.conf", "topology.yaml")) as (scontrol, _):
        switches, nodes, children = slurm.topology(scontrol)
    assert sorted(nodes) == sorted(d.name for d in lab_fabric.by_role("host")) and len(nodes) == len(set(nodes))
    assert children["lab"] == ["z01", "z02"]
