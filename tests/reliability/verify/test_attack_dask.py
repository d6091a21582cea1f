"""Attack: `teton verify --dask tcp://...` unpickles what the workers send, and any process that reaches the
scheduler can join it as a worker: code run inside `teton verify`.  The automatic LocalCluster listened on every
address, unauthenticated.  Now: a Dask scheduler is trusted code (docs/trust.md, docs/verify.md, `--help`); the
LocalCluster listens on 127.0.0.1 over TLS with credentials of its own; a tls:// scheduler is reached with the
certificates given (`--dask-tls-ca/--dask-tls-cert/--dask-tls-key`); a plain tcp:// one gets a warning; certificates
without a tls:// address, or a tls:// address without them, exit 2."""

from __future__ import annotations

import json
import logging
import socket

import pytest
from click.testing import CliRunner

from teton.cli import main
from teton.verify.distributed import DaskMapper, insecure, mapper_for

pytest.importorskip("distributed")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _run(*args):
    result = CliRunner().invoke(main, ["verify", *map(str, args)])
    assert "Traceback" not in result.output
    return result


def test_the_local_cluster_listens_on_127_0_0_1_over_tls(lab_build):
    with mapper_for("local", lab_build) as mapper:
        assert isinstance(mapper, DaskMapper)
        address = mapper.client.scheduler.address
        workers = list(mapper.client.scheduler_info()["workers"])
    assert address.startswith("tls://127.0.0.1:"), address
    assert workers and all(w.startswith("tls://127.0.0.1:") for w in workers), workers


def test_a_plain_tcp_scheduler_is_warned_about(lab_build):
    result = _run(lab_build, "--dask", f"tcp://127.0.0.1:{_free_port()}")
    assert result.exit_code == 2 and "cannot reach the scheduler" in result.output
    assert "plain TCP, no authentication" in result.stderr
    assert insecure("tls://h:1", None) is None and insecure("local", None) is None


def _pem_files(tmp_path, security):
    """Security.temporary()'s PEM texts as files (what a user passes)."""
    paths = []
    for name, text in (("ca.pem", security.tls_ca_file), ("cert.pem", security.tls_client_cert),
                       ("key.pem", security.tls_client_key)):
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    return paths


def test_certificates_go_with_a_tls_address_only(lab_build, tmp_path):
    from distributed.security import Security

    ca, cert, key = _pem_files(tmp_path, Security.temporary())
    tls = ("--dask-tls-ca", ca, "--dask-tls-cert", cert, "--dask-tls-key", key)
    result = _run(lab_build, "--dask", "tcp://127.0.0.1:1", *tls)
    assert result.exit_code == 2 and "tls:// scheduler's" in result.output
    result = _run(lab_build, "--dask", f"tls://127.0.0.1:{_free_port()}")
    assert result.exit_code == 2 and "give the certificates" in result.output
    result = _run(lab_build, "--dask", f"tls://127.0.0.1:{_free_port()}", "--dask-tls-ca", ca)
    assert result.exit_code == 2 and "go together" in result.output


def test_a_tls_scheduler_is_reached_with_the_certificates_and_not_without(lab_build, tmp_path):
    from dask.distributed import Client, LocalCluster
    from distributed.security import Security

    security = Security.temporary()
    ca, cert, key = _pem_files(tmp_path, security)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None, host="127.0.0.1",
                      protocol="tls://", security=security, silence_logs=logging.ERROR) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tls://")
        result = _run(lab_build, "--json", "--dask", address, "--dask-tls-ca", ca, "--dask-tls-cert", cert,
                      "--dask-tls-key", key)
        assert result.exit_code == 0, result.output
        assert "warning" not in result.stderr
        assert json.loads(result.stdout)["ok"] is True
        with pytest.raises((OSError, TimeoutError, TypeError, ValueError)):
            Client(address, timeout=3)         # no certificate: no way in
