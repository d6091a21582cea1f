"""Work on many devices on all cores: forked workers inherit the Fabric (no pickling of the model), each handles a
contiguous chunk of devices, results come back in device order so output stays deterministic.

Workers die with their parent (Linux PR_SET_PDEATHSIG): a killed `teton render` leaves no worker behind.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar, cast

from teton import environment
from teton.findings import Finding, SpecError, TetonError

T = TypeVar("T")
_JOB: tuple[Callable[[Sequence[str]], Any], Sequence[str]] | None = None
MIN_PER_WORKER = 64   # below this, forking costs more than it saves
ENV = "TETON_WORKERS"
_PR_SET_PDEATHSIG = 1


def workers() -> int:
    """Worker processes to use: $TETON_WORKERS (a positive integer), else one per core this process may use."""
    env = (environment.get(ENV) or "").strip()
    if env:
        if not env.isdigit() or int(env) < 1:
            raise TetonError(f"{ENV}={env!r}: give a positive whole number of worker processes")
        return int(env)
    return max(1, len(os.sched_getaffinity(0)))


def _die_with_parent(parent: int) -> None:
    # a worker ends on SIGTERM (Pool.terminate): a handler the parent had installed (Dask's, a server's) would
    # otherwise catch it, and a worker blocked sending its result would never exit while terminate() waits for it
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: workers end when their queue closes
        return
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


class Executor(Protocol):
    """Runs `fn(task)` for every task, yielding (task index, result) as each finishes, tasks started in the given
    order.  The local one forks workers that inherit what `fn` reads (the Fabric); another (Dask) would ship tasks,
    which are small and picklable (`teton.targets.schedule.Task`: a target's name and device names)."""

    def __call__(self, fn: Callable[[Any], T], tasks: Sequence[Any]) -> Iterator[tuple[int, T]]: ...


_TASKS: tuple[Callable[[Any], Any], Sequence[Any], Any] | None = None


class Skipped(TetonError):
    """A task not run: the pool's consumer stopped taking results (`forked_pool`)."""


def _run_task(index: int) -> tuple[int, bool, Any]:
    """(index, True, result) or (index, False, the exception): a task's exception comes back as a value, so the pool
    drains and ends with close + join, never terminate() while a sibling is sending its result; once the consumer
    has stopped (`stop` set), the tasks left are skipped, so that drain is quick."""
    assert _TASKS is not None
    fn, tasks, stop = _TASKS
    if stop.is_set():
        return index, False, Skipped(f"task {index}")
    try:
        return index, True, fn(tasks[index])
    except Exception as exc:  # noqa: BLE001 - re-raised in the parent once every task has ended
        return index, False, exc


def in_place(fn: Callable[[Any], T], tasks: Sequence[Any]) -> Iterator[tuple[int, T]]:
    """The executor of one process (one worker, or a daemonic process, which may not have children)."""
    for i, task in enumerate(tasks):
        yield i, fn(task)


def forked_pool(fn: Callable[[Any], T], tasks: Sequence[Any]) -> Iterator[tuple[int, T]]:
    """The local executor: one pool of `workers()` forked workers for every task, each handed the next task as it
    becomes free (so a long task started first does not leave a worker idle at the end); in place where forking is
    not possible or does not pay."""
    n = min(workers(), len(tasks))
    if n <= 1 or "fork" not in mp.get_all_start_methods() or mp.current_process().daemon:
        yield from in_place(fn, tasks)
        return
    global _TASKS
    context = mp.get_context("fork")
    stop = context.Event()
    _TASKS = (fn, tasks, stop)
    pool = context.Pool(n, initializer=_die_with_parent, initargs=(os.getpid(),))
    failed: tuple[int, Exception] | None = None       # the failed task of the lowest index: the same error each run
    try:
        for i, ok, value in pool.imap_unordered(_run_task, range(len(tasks))):
            if not ok:
                failed = (i, value) if failed is None or i < failed[0] else failed
            elif failed is None:
                yield i, value
        pool.close()    # close + join, not terminate(): see map_chunks
        pool.join()
    except GeneratorExit:
        # the consumer stopped early (an error of its own, e.g. a refused path or the fabric's checks): the tasks
        # not started are skipped and the running ones end; close + join again, as terminate() can hang a worker
        stop.set()
        pool.close()
        pool.join()
        raise
    except BaseException:
        pool.terminate()
        raise
    finally:
        _TASKS = None
    if failed is not None:
        raise failed[1]


class Aside(Generic[T]):
    """`fn()` computed beside the caller (`aside`): `ready()` says whether its answer is in, `result()` waits for it
    and returns it (or raises what `fn` raised)."""

    def __init__(self, fn: Callable[[], T]) -> None:
        self._fn = fn
        self._answer: tuple[bool, Any] | None = None
        self._conn: Any = None
        self._proc: Any = None

    def ready(self) -> bool:
        if self._answer is None and self._conn is not None and self._conn.poll():
            self._receive()
        return self._answer is not None

    def result(self) -> T:
        if self._answer is None:
            if self._conn is not None:
                self._receive()
            else:
                self._answer = _attempt(self._fn)
        assert self._answer is not None
        ok, value = self._answer
        if not ok:
            raise value
        return cast(T, value)

    def _receive(self) -> None:
        try:
            self._answer = self._conn.recv()
        except (EOFError, OSError):   # the process died before answering (killed): computed here instead
            self._answer = _attempt(self._fn)
        finally:
            self._conn.close()
            self._conn = None
            self._proc.join()


def _attempt(fn: Callable[[], T]) -> tuple[bool, Any]:
    try:
        return True, fn()
    except Exception as exc:  # noqa: BLE001 - raised again by Aside.result in the caller
        return False, exc


def _aside_main(fn: Callable[[], Any], conn: Any, parent: int) -> None:
    _die_with_parent(parent)
    conn.send(_attempt(fn))
    conn.close()


def aside(fn: Callable[[], T]) -> Aside[T]:
    """Start `fn()` in a forked process of its own (it inherits what `fn` reads, as the workers do) and return at
    once; where forking is not possible or there is one worker, `fn()` runs here, now.  What `fn` returns or raises
    must pickle.  A fork copies only the calling thread: `fn` must not wait on what another thread holds (the CLI's
    progress display runs in one; the render's writer threads start after the fork)."""
    a: Aside[T] = Aside(fn)
    if workers() <= 1 or "fork" not in mp.get_all_start_methods() or mp.current_process().daemon:
        a._answer = _attempt(fn)
        return a
    ctx = mp.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    a._proc = ctx.Process(target=_aside_main, args=(fn, sender, os.getpid()), daemon=True)
    a._proc.start()
    sender.close()
    a._conn = receiver
    return a


def _run_chunk(bounds: tuple[int, int]) -> Any:
    assert _JOB is not None
    fn, names = _JOB
    return fn(names[bounds[0]:bounds[1]])


def render_devices(render_chunk: Callable[[Sequence[str]], tuple[dict[str, str], list[Finding]]],
                   names: Sequence[str]) -> dict[str, str]:
    """Files of every device in `names`, rendered in chunks on all cores; SpecError with every finding if any."""
    files: dict[str, str] = {}
    problems: list[Finding] = []
    for f, p in map_chunks(render_chunk, names):
        files.update(f)
        problems += p
    if problems:
        raise SpecError(problems)
    return files


def map_chunks(fn: Callable[[Sequence[str]], T], names: Sequence[str]) -> list[T]:
    """[fn(chunk) for chunk in chunks of names], chunks in order, run in forked workers when it pays."""
    n = min(workers(), max(1, len(names) // MIN_PER_WORKER))
    # a daemonic process (the background side of a diff) may not have children: its work runs in place
    if n <= 1 or "fork" not in mp.get_all_start_methods() or mp.current_process().daemon:
        return [fn(names)]
    global _JOB
    size = -(-len(names) // n)
    bounds = [(i, min(i + size, len(names))) for i in range(0, len(names), size)]
    _JOB = (fn, names)
    pool = mp.get_context("fork").Pool(n, initializer=_die_with_parent, initargs=(os.getpid(),))
    try:
        out = pool.map(_run_chunk, bounds)
        # close + join, not the context manager's terminate(): SIGTERM can hit a worker while it holds the task
        # queue's lock, and a sibling waiting on that lock then never exits (seen once under load, a 24k render hung)
        pool.close()
        pool.join()
        return out
    except BaseException:
        pool.terminate()
        raise
    finally:
        _JOB = None
