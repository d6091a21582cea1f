"""Where `solve` runs: in this process, or on Dask (`dask.distributed`) when one machine's cores are not enough.

`--dask tcp://SCHEDULER:8786` sends the chunks to a running cluster (`dask scheduler`, `dask worker tcp://...`, with
teton importable on the workers), `--dask local` starts a `LocalCluster` of one single-threaded worker process per core
on this machine, `--dask off` solves in this process.  Without `--dask`, a build of more than `LOCAL_FROM` switches
gets a LocalCluster, a smaller one is solved in this process (a cluster's start costs more than it saves there).

The model is sent to the workers once per model (without what only the report needs: sessions, port names); each
task is `solve(model, chunk, down)` for a chunk of prefix ids.  The answer for a prefix depends on nothing else, so
the merged result is the same whatever the number of workers, or none.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from teton.buildfolder import DEVICES
from teton.findings import TetonError
from teton.verify.model import Model
from teton.verify.run import Mapper, local_mapper
from teton.verify.solve import Down, Solution, solve

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
    try:
        return sum(1 for _ in os.scandir(build / DEVICES))
    except OSError:
        return 0


@contextmanager
def mapper_for(address: str | None, build: Path) -> Iterator[Mapper]:
    """The mapper `--dask ADDRESS` asks for (see the module's docstring); TetonError when it cannot be had."""
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
        workers = max(1, len(os.sched_getaffinity(0)))
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
            yield DaskMapper(client)
        return
    if not address.startswith(("tcp://", "tls://", "inproc://", "ucx://")):
        raise TetonError(f"--dask {address}: give a scheduler's address (tcp://HOST:PORT), 'local' or 'off'")
    try:
        client = Client(address, timeout=10)
    except (OSError, TimeoutError) as exc:
        raise TetonError(f"--dask {address}: cannot reach the scheduler: {exc}") from None
    try:
        yield DaskMapper(client)
    finally:
        client.close()
