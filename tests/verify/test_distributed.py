"""`teton verify --dask`: the same report from a LocalCluster and from a Dask scheduler with two workers started as
separate processes (`dask scheduler`, `dask worker`) as from this process alone."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from teton.cli import main

ROOT = Path(__file__).resolve().parents[2]


def _report(build: Path, *args: str) -> dict:
    result = CliRunner().invoke(main, ["verify", str(build), "--fail", "z01-ctsw01", "--json", *args])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    report.pop("seconds")
    return report


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_local_cluster_gives_the_same_report(lab_build):
    pytest.importorskip("distributed")
    assert _report(lab_build, "--dask", "local") == _report(lab_build, "--dask", "off")


def test_a_scheduler_and_two_worker_processes_give_the_same_report(lab_build, tmp_path):
    pytest.importorskip("distributed")
    from dask.distributed import Client

    dask = Path(sys.executable).parent / "dask"
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "infra"), str(ROOT)])}
    logs = [open(tmp_path / f"{name}.log", "w") for name in ("scheduler", "worker1", "worker2")]   # noqa: SIM115
    procs = [subprocess.Popen([str(dask), "scheduler", "--host", "127.0.0.1", "--port", str(port),
                               "--no-dashboard"], stdout=logs[0], stderr=subprocess.STDOUT, env=env)]
    try:
        time.sleep(1)
        for log in logs[1:]:
            procs.append(subprocess.Popen([str(dask), "worker", address, "--nworkers", "1", "--nthreads", "1",
                                           "--no-dashboard"], stdout=log, stderr=subprocess.STDOUT, env=env))
        with Client(address, timeout=30) as client:
            client.wait_for_workers(2, timeout=60)
            assert len(client.scheduler_info()["workers"]) == 2
        assert _report(lab_build, "--dask", address) == _report(lab_build, "--dask", "off")
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        for log in logs:
            log.close()


def test_an_unreachable_scheduler_exits_2(lab_build):
    pytest.importorskip("distributed")
    result = CliRunner().invoke(main, ["verify", str(lab_build), "--dask", f"tcp://127.0.0.1:{_free_port()}"])
    assert result.exit_code == 2 and "cannot reach the scheduler" in result.output
