"""Where a site's pieces render (`teton render SITE --dask ...`): in this process (`off`), on a LocalCluster of this
machine (`local`, `--workers N`), or on a running Dask scheduler (`tls://HOST:PORT` with certificates, or a plain
`tcp://HOST:PORT` with the warning of `teton.verify.distributed.insecure`).

The trust rules are `teton verify`'s (docs/verify.md, "On a Dask cluster"): the client unpickles what the workers
send, so a scheduler and its workers are trusted code; the LocalCluster listens on 127.0.0.1 only, over TLS with
credentials made for it; a remote scheduler is reached over TLS when certificates are given.  Each task is
`teton.site.render.render_piece(job)`: a job carries one cluster's loaded spec and its `SiteMember`, never another
cluster's, and a worker keeps one designed cluster at a time, so a worker's memory is bounded by one cluster.  The
workers need teton importable, and the reference data (SONiC's YANG models, pyavd) of a render.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from teton.findings import TetonError
from teton.site.render import Job, Piece, Runner, in_process, render_piece
from teton.verify.distributed import DaskTls, _temporary_security


@dataclass(frozen=True)
class Engine:
    """A runner and how many workers it has (the pieces are cut so every worker has work)."""

    runner: Runner
    workers: int
    where: str


def _gather(client: Any, jobs: list[Job]) -> Iterator[Piece]:
    from dask.distributed import as_completed

    futures = client.map(render_piece, jobs, pure=False)
    try:
        for fut in as_completed(futures):
            try:
                piece = fut.result()
            except Exception as exc:   # noqa: BLE001 - a worker died or a bug: named, not a traceback
                raise TetonError(f"a Dask task of the site's render failed: {type(exc).__name__}: {exc}") from None
            fut.release()
            yield piece
    finally:
        client.cancel(futures)


@contextmanager
def engine_for(address: str | None, tls: DaskTls | None = None, workers: int | None = None) -> Iterator[Engine]:
    """The engine `--dask ADDRESS` asks for (None or `off`: this process); TetonError when it cannot be had."""
    if workers is not None and workers < 1:
        raise TetonError(f"--workers {workers}: give a positive number of Dask workers")
    if tls is not None and not (address or "").startswith("tls://"):
        raise TetonError(f"--dask-tls-ca/-cert/-key are a tls:// scheduler's (--dask {address or '(unset)'})")
    if address is not None and address.startswith("tls://") and tls is None:
        raise TetonError(f"--dask {address}: give the certificates (--dask-tls-ca, --dask-tls-cert, --dask-tls-key)")
    if workers is not None and address != "local":
        raise TetonError("--workers is the LocalCluster's (--dask local)")
    if address in (None, "off"):
        yield Engine(in_process, 1, "this process")
        return
    if address != "local" and not address.startswith(("tcp://", "tls://")):
        raise TetonError(f"--dask {address}: give a scheduler's address (tls://HOST:PORT or tcp://HOST:PORT), "
                         "'local' or 'off'")
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        raise TetonError(f"--dask {address}: dask[distributed] is not installed") from None
    if address == "local":
        security = _temporary_security()
        if security is None:
            raise TetonError("--dask local: no TLS credentials can be made for the LocalCluster (Dask's "
                             "Security.temporary needs the cryptography package)")
        n = workers or max(1, len(os.sched_getaffinity(0)))
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                          host="127.0.0.1", protocol="tls://", security=security,
                          silence_logs=logging.ERROR) as cluster, Client(cluster, security=security) as client:
            yield Engine(lambda jobs: _gather(client, jobs), n, f"a LocalCluster of {n} workers")
        return
    try:
        client = Client(address, timeout=10, **({"security": tls.security()} if tls is not None else {}))
    except (OSError, TimeoutError, ValueError) as exc:
        raise TetonError(f"--dask {address}: cannot reach the scheduler: {exc}") from None
    try:
        n = max(1, len(client.scheduler_info().get("workers", {})))
        yield Engine(lambda jobs: _gather(client, jobs), n, f"{address} ({n} workers)")
    finally:
        client.close()
