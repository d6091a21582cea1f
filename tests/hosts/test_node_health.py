"""The node health check on an InfiniBand host, against a prepared /sys: each backend HCA's port must be ACTIVE and
LinkUp with no link-downed or symbol errors; a RoCE-only check (PFC, the RoCE QoS state) says it does not apply."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.hosts.harness import PLAYBOOKS

SCRIPT = PLAYBOOKS / "roles/gpu_health/files/teton-node-health"


def _port(root: Path, hca: str, state: str, phys: str, **counters: int) -> None:
    port = root / "class/infiniband" / hca / "ports/1"
    (port / "counters").mkdir(parents=True)
    (port / "state").write_text(state + "\n")
    (port / "phys_state").write_text(phys + "\n")
    for name, value in {"link_downed": 0, "symbol_error": 0, **counters}.items():
        (port / "counters" / name).write_text(f"{value}\n")


def _check(tmp_path: Path, hcas: list[str]) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "node-health.json"
    cfg.write_text(json.dumps({"node": "z01-r001-h1", "expected_gpus": 8, "backend": "infiniband", "nics": hcas,
                               "pfc_priority": None, "roce_qos_state": None, "drain": False}))
    return subprocess.run([sys.executable, str(SCRIPT), "--config", str(cfg), "--sys", str(tmp_path / "sys")],
                          capture_output=True, text=True, timeout=60, check=False)


def test_active_hcas_are_healthy_and_roce_checks_do_not_apply(tmp_path):
    for n in range(2):
        _port(tmp_path / "sys", f"mlx5_{n}", "4: ACTIVE", "5: LinkUp")
    res = _check(tmp_path, ["mlx5_0", "mlx5_1"])
    assert "ok   port mlx5_0: state 4: ACTIVE, phys_state 5: LinkUp" in res.stdout
    assert "ok   errors mlx5_1: no link-downed or symbol errors" in res.stdout
    assert "n/a  roce-qos: InfiniBand backend: the subnet manager sets SL-to-VL, not the host" in res.stdout
    assert "pfc" not in res.stdout
    assert res.returncode == 0, res.stdout + res.stderr


def test_a_port_without_a_lid_a_flapping_link_or_a_missing_hca_fails_the_node(tmp_path):
    _port(tmp_path / "sys", "mlx5_0", "2: INIT", "5: LinkUp")              # no subnet manager has swept it
    _port(tmp_path / "sys", "mlx5_1", "4: ACTIVE", "5: LinkUp", link_downed=3)
    res = _check(tmp_path, ["mlx5_0", "mlx5_1", "mlx5_7"])
    assert res.returncode == 1, res.stdout + res.stderr
    assert "FAIL port mlx5_0: state 2: INIT, phys_state 5: LinkUp" in res.stdout
    assert "FAIL errors mlx5_1: link_downed=3" in res.stdout
    assert "FAIL port mlx5_7: no such HCA port" in res.stdout
