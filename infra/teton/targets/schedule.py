"""One render of many targets as one list of tasks on all cores.

Every device target's devices are cut into chunks and every fabric-wide target is one task; all of them run in one
executor (`teton.targets.parallel.forked_pool`: forked workers inherit the Fabric, no pickling of the model), the long
ones first (longest-processing-time order, by `Target.cost`, so that the last task does not run alone), each worker
taking the next task as it becomes free.  Results are assembled in target order and, within a device target, in device
order, so the output does not depend on which worker ran what.  A `Task` is a target's name and device names: small and
picklable, what an executor on other machines (Dask) would ship.

Findings (SpecError) of every task are collected and raised together, in target order, after every task ran.  Then,
in the parent, each device target's `finish` (its fabric-wide files from its devices' files: SONiC's per-HwSKU files,
EOS's ANTA catalogs and inventory).

A build hands the render a `Stage`, its staging folder: a forked worker then writes a task's files there itself and
sends back each file's sha256 and size (`Staged`) instead of its text (a device target's `finish` is told the paths).
A 24k build's text is ~470 MB: received, unpickled, encoded and hashed in the parent, it cost ~7 s of the parent's CPU
(4 of them in the kernel, page faults and copies) while both cores rendered.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from teton.fabric.model import Fabric
from teton.findings import Finding, SpecError
from teton.targets import base
from teton.targets.base import DeviceTarget, Files, RenderContext, Staged, Target
from teton.targets.parallel import Executor, forked_pool, in_place, workers

CHUNKS_PER_WORKER = 8     # a device chunk is at most 1/8 of a worker's share of the whole render
MIN_CHUNK_COST = 0.25     # ... and at least this many estimated seconds (a chunk's result comes back pickled)
# below this estimate (a spec of a few devices) everything runs in place: forking would cost more.  The labs (0.07-0.13
# estimated seconds) fork: their fabric's checks beside the EOS warm-ups and two workers took 2.8-3.1 s wall against
# 3.3 s in place, and a spec of 680 devices (1.8) 5.2-5.3 s against 5.9-6.9
MIN_FORK_COST = 0.05


@dataclass(frozen=True)
class Task:
    target: str
    devices: tuple[str, ...] | None = None     # a chunk of a device target's devices; None: the whole target
    cost: float = 0.0                          # estimated seconds (the order tasks start in)
    part: int = 0                              # its place among its target's chunks


def plan_tasks(fabric: Fabric, ctx: RenderContext, chosen: Sequence[Target], n_workers: int) -> list[Task]:
    """Every task of the render, longest first (ties: target order, then device order)."""
    names = {t.name: t.device_names(fabric, ctx) for t in chosen if isinstance(t, DeviceTarget)}
    each = {t.name: [t.device_estimate(fabric.devices[n]) for n in names[t.name]]
            for t in chosen if isinstance(t, DeviceTarget)}
    costs = {t.name: (sum(each[t.name]) if isinstance(t, DeviceTarget) else t.cost(fabric)) for t in chosen}
    share = sum(costs.values()) / max(1, n_workers)
    tasks: list[Task] = []
    for t in chosen:
        if not isinstance(t, DeviceTarget):
            tasks.append(Task(t.name, None, costs[t.name]))
            continue
        devices = names[t.name]
        if not devices:
            continue
        per_chunk = max(share / CHUNKS_PER_WORKER, MIN_CHUNK_COST)
        chunks = max(1, min(len(devices), math.ceil(costs[t.name] / per_chunk)))
        size = -(-len(devices) // chunks)
        tasks += [Task(t.name, tuple(devices[i:i + size]), sum(each[t.name][i:i + size]), part)
                  for part, i in enumerate(range(0, len(devices), size))]
    order = {t.name: i for i, t in enumerate(chosen)}
    return sorted(tasks, key=lambda k: (-k.cost, order[k.target]))


class Stage(Protocol):
    """A build's staging folder as the render's workers write into it (`teton.pipeline.write_rendering`'s)."""

    def write(self, target: Target, files: Files, ctx: RenderContext) -> dict[str, Staged]:
        """In a forked worker: write `files` of `target` into the build; each one's sha256 and size."""
        ...

    def took(self, target: str, staged: dict[str, Staged]) -> None:
        """In the parent, as each task ends: files a worker wrote (an error if a path was written twice)."""
        ...


def forks(fabric: Fabric, ctx: RenderContext, chosen: Sequence[Target]) -> bool:
    """Whether `render_targets` of `chosen` would fork its workers (more than one, and work enough to pay)."""
    n = workers()
    return n > 1 and sum(k.cost for k in plan_tasks(fabric, ctx, chosen, n)) >= MIN_FORK_COST


def _run(fabric: Fabric, ctx: RenderContext, by_name: dict[str, Target], task: Task) -> tuple[Files, list[Finding]]:
    target = by_name[task.target]
    if task.devices is not None:
        assert isinstance(target, DeviceTarget)
        return target.render_chunk(fabric, ctx, task.devices)
    try:
        return target.render(fabric, ctx), []
    except SpecError as exc:
        return {}, list(exc.findings)


def render_targets(fabric: Fabric, ctx: RenderContext, chosen: Sequence[Target],
                   progress: Callable[[str], None] | None = None,
                   executor: Executor | None = None,
                   sink: Callable[[str, Files], None] | None = None,
                   stage: Stage | None = None) -> dict[str, Files]:
    """{target name: its files} of every target in `chosen`, in that order; SpecError with every task's findings.
    `sink(target name, files)`: handed each task's files as the task ends (in the order tasks end; a build's writer
    starts writing them while the others render, `teton.pipeline.write_rendering`).  What it is handed is not final:
    a device target's `finish` may add files and a later task may give a path again; the returned dict is.
    `stage`: a task run in a forked worker of the local pool (`forked_pool`) writes its files there itself, and they
    are in neither what `sink` is handed nor what is returned, but in what `stage.took`."""
    n_workers = workers()
    device_targets = [t for t in chosen if isinstance(t, DeviceTarget)]
    for t in device_targets:
        t.prepare(fabric, ctx)
    tasks = plan_tasks(fabric, ctx, chosen, n_workers)
    if executor is None:
        small = sum(k.cost for k in tasks) < MIN_FORK_COST
        executor = in_place if small else forked_pool
    by_name = {t.name: t for t in chosen}
    results: list[Any] = [None] * len(tasks)
    written: dict[str, set[str]] = {t.name: set() for t in chosen}
    left = {t.name: 0 for t in chosen}
    for k in tasks:
        left[k.target] += 1
    shown = 0

    def advance() -> None:        # progress: each target once, in order, when the ones before it are done
        nonlocal shown
        while shown < len(chosen) and (shown == 0 or left[chosen[shown - 1].name] == 0):
            if progress:
                progress(chosen[shown].name)
            shown += 1

    advance()
    base._STATES = {}
    parent = os.getpid()
    here = stage if executor is forked_pool else None     # another executor's workers may not share this disk

    def run(task: Task) -> tuple[Files, list[Finding], dict[str, Staged]]:
        files, found = _run(fabric, ctx, by_name, task)
        if here is None or os.getpid() == parent or not files:     # in place: the parent's writer has them
            return files, found, {}
        return {}, found, here.write(by_name[task.target], files, ctx)

    ended = executor(run, tasks)
    try:
        for i, result in ended:
            results[i] = result
            if sink is not None and (result[0] or result[2]):    # a task whose files a worker wrote: nothing
                sink(tasks[i].target, result[0])
            if stage is not None and result[2]:
                stage.took(tasks[i].target, result[2])
                written[tasks[i].target].update(result[2])
            left[tasks[i].target] -= 1
            advance()
    finally:
        base._STATES = None
        close = getattr(ended, "close", None)
        if close is not None:   # a sink that raised: the forked pool's workers are ended now, not when collected
            close()
    while shown < len(chosen):
        advance()
    # assembled in target order, device chunks in device order: the same whichever worker ran what
    position = {t.name: i for i, t in enumerate(chosen)}
    ordered = sorted(range(len(tasks)), key=lambda i: (position[tasks[i].target], tasks[i].part))
    files: dict[str, Files] = {t.name: {} for t in chosen}
    problems: list[Finding] = []
    for i in ordered:
        f, p, _ = results[i]
        files[tasks[i].target].update(f)
        problems += p
    if problems:
        raise SpecError(problems)
    for t in device_targets:
        files[t.name] = t.finish(fabric, ctx, files[t.name], frozenset(written[t.name]))
    return files
