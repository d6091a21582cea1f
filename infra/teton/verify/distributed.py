"""Where `solve` runs: in this process, or on Dask (`dask.distributed`) when one machine's cores are not enough.

`--dask tcp://SCHEDULER:8786` sends the chunks to a running cluster (`dask scheduler`, `dask worker tcp://...`, with
teton importable on the workers), `--dask local` starts a `LocalCluster` of one single-threaded worker process per core
on this machine, `--dask off` solves in this process.  Without `--dask`, a build of more than `LOCAL_FROM` switches
gets a LocalCluster, a smaller one is solved in this process (a cluster's start costs more than it saves there).

A Dask scheduler and its workers are trusted code: the client unpickles what workers send, so any process that can
join the scheduler as a worker runs code inside `teton verify`.  The LocalCluster listens on 127.0.0.1 only, over TLS
with credentials generated for it (`Security.temporary()`; without them it is not started by itself, and `--dask
local` is refused).  A scheduler elsewhere is reached over TLS when certificates are given (`DaskTls`, `--dask-tls-ca
/--dask-tls-cert/--dask-tls-key`, a `tls://` address); a plain `tcp://` one is used as asked, with a warning
(`insecure`).

The model is sent to the workers once per model (without what only the report needs: sessions, port names); each
task is `solve(model, chunk, down)` for a chunk of prefix ids.  The answer for a prefix depends on nothing else, so
the merged result is the same whatever the number of workers, or none.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from teton.buildfolder import DEVICES
from teton.findings import TetonError
from teton.verify.model import Model
from teton.verify.run import Mapper, local_mapper
from teton.verify.solve import Down, Solution, solve


@dataclass(frozen=True)
class DaskTls:
    """The certificates that authenticate teton to a `tls://` scheduler and the scheduler to teton (PEM files)."""

    ca: Path            # the authority that signed the scheduler's and the workers' certificates
    cert: Path          # this client's certificate
    key: Path           # its private key

    def security(self) -> Any:
        from distributed.security import Security

        return Security(tls_ca_file=str(self.ca), tls_client_cert=str(self.cert), tls_client_key=str(self.key),
                        require_encryption=True)


def insecure(address: str | None, tls: DaskTls | None) -> str | None:
    """The warning a plain `tcp://` scheduler gets (None: none)."""
    if address is not None and address.startswith("tcp://") and tls is None:
        return (f"--dask {address}: plain TCP, no authentication: any process that reaches the scheduler can join as "
                "a worker and run code inside teton verify (give a tls:// address and --dask-tls-ca/-cert/-key)")
    return None


def _temporary_security() -> Any:
    """TLS credentials of the LocalCluster's own (None: they cannot be made here)."""
    try:
        from distributed.security import Security

        return Security.temporary()
    except (ImportError, AttributeError, RuntimeError, ValueError):
        return None


LOCAL_FROM = 20_000    # switches from which the default is a LocalCluster (the 24k: 31 s here, 42 s on 2 cores)


def slim(model: Model) -> Model:
    """What a worker needs of the model to solve: no sessions, no port names."""
    graphs = {f: replace(g, src_port=[], dst_port=[]) for f, g in model.graphs.items()}
    return replace(model, sessions=[], unmodelled=[], graphs=graphs, addresses=())


class DaskMapper:
    """Chunks as tasks on a Dask client; each model scattered to every worker once."""

    def __init__(self, client: Any):
        self.client = client
        self._models: dict[int, tuple[Model, Any]] = {}

    def __call__(self, model: Model, chunks: Sequence[np.ndarray], down: Down, count: bool = True) -> list[Solution]:
        held = self._models.get(id(model))
        if held is None or held[0] is not model:
            held = (model, self.client.scatter(slim(model), broadcast=True))
            self._models[id(model)] = held
        futures = self.client.map(solve, [held[1]] * len(chunks), list(chunks), [down] * len(chunks),
                                  [count] * len(chunks), pure=False)
        return list(self.client.gather(futures))


def _switches(build: Path) -> int:
    """The switches of a build (of a site's build folder: of every build it holds, one folder down)."""
    try:
        return sum(1 for _ in os.scandir(build / DEVICES))
    except OSError:
        pass
    total = 0
    try:
        for entry in os.scandir(build):
            if entry.is_dir(follow_symlinks=False):
                try:
                    total += sum(1 for _ in os.scandir(Path(entry.path) / DEVICES))
                except OSError:
                    continue
    except OSError:
        return 0
    return total


@contextmanager
def mapper_for(address: str | None, build: Path, tls: DaskTls | None = None) -> Iterator[Mapper]:
    """The mapper `--dask ADDRESS` asks for (see the module's docstring); TetonError when it cannot be had."""
    if tls is not None and not (address or "").startswith("tls://"):
        raise TetonError(f"--dask-tls-ca/-cert/-key are a tls:// scheduler's (--dask {address or '(unset)'})")
    if address is not None and address.startswith("tls://") and tls is None:
        raise TetonError(f"--dask {address}: give the certificates (--dask-tls-ca, --dask-tls-cert, --dask-tls-key)")
    if address == "off" or (address is None and _switches(build) < LOCAL_FROM):
        yield local_mapper
        return
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError:
        if address is None:
            yield local_mapper
            return
        raise TetonError(f"--dask {address}: dask[distributed] is not installed (pip install 'dask[distributed]')"
                         ) from None
    if address in (None, "local"):
        security = _temporary_security()
        if security is None:
            if address is None:
                yield local_mapper
                return
            raise TetonError("--dask local: no TLS credentials can be made for the LocalCluster (Dask's "
                             "Security.temporary needs the cryptography package)")
        workers = max(1, len(os.sched_getaffinity(0)))
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          host="127.0.0.1", protocol="tls://", security=security,
                          silence_logs=logging.ERROR) as cluster, Client(cluster, security=security) as client:
            yield DaskMapper(client)
        return
    if not address.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        raise TetonError(f"--dask {address}: give a scheduler's address (tcp://HOST:PORT), 'local' or 'off'")
    try:
        client = Client(address, timeout=10, **({"security": tls.security()} if tls is not None else {}))
    except (OSError, TimeoutError, ValueError) as exc:
        raise TetonError(f"--dask {address}: cannot reach the scheduler: {exc}") from None
    try:
        yield DaskMapper(client)
    finally:
        client.close()
