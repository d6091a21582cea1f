"""`map_chunks` runs in forked workers when it pays, and in place where a process may not fork children: the
background side of a diff is a daemonic process (24k diffs rendered every EOS switch's ANTA catalog there and failed
with "daemonic processes are not allowed to have children")."""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from pathlib import Path

from teton.targets import parallel
from teton.targets.parallel import MIN_PER_WORKER, map_chunks

NAMES = [f"sw{i:04d}" for i in range(4 * MIN_PER_WORKER)]


def _lengths(chunk):
    return [len(chunk), mp.current_process().pid]


def _in_daemon(conn) -> None:
    try:
        conn.send(("ok", map_chunks(_lengths, NAMES)))
    except BaseException as exc:  # noqa: BLE001 - sent to the test
        conn.send(("error", f"{type(exc).__name__}: {exc}"))


def test_chunks_come_back_in_order_from_workers(monkeypatch):
    monkeypatch.setenv("TETON_WORKERS", "2")
    out = map_chunks(_lengths, NAMES)
    assert sum(n for n, _ in out) == len(NAMES) and len(out) == 2


def test_a_daemonic_process_maps_in_place(monkeypatch):
    monkeypatch.setenv("TETON_WORKERS", "2")
    ctx = mp.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    p = ctx.Process(target=_in_daemon, args=(child,), daemon=True)
    p.start()
    kind, value = parent.recv()
    p.join()
    assert kind == "ok", value
    assert value == [[len(NAMES), p.pid]]          # one chunk, in the daemon itself


_HANG = '''
import signal, sys
from teton.targets import parallel

signal.signal(signal.SIGTERM, lambda *_: None)     # as a Dask client or a server in the same process would

def task(k):
    if k == 0:
        raise ValueError("task 0 failed")
    return "x" * (16 << 20)                           # more than a pipe holds: its worker blocks sending it

try:
    list(parallel.forked_pool(task, [0, 1, 2, 3]))
except ValueError as exc:
    print("raised:", exc)
    sys.exit(0)
sys.exit(1)
'''


def test_a_failed_task_ends_the_pool_without_hanging_on_a_sibling_sending_its_result(tmp_path):
    """A task's exception is raised once the pool has drained (close + join), not by terminate() while a sibling
    blocks sending a large result to a parent that has a SIGTERM handler (seen: a render hung in the test suite)."""
    import subprocess
    import sys

    env = {**os.environ, "TETON_WORKERS": "2", "PYTHONPATH": str(Path(__file__).resolve().parents[2] / "infra")}
    done = subprocess.run([sys.executable, "-c", _HANG], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0 and "raised: task 0 failed" in done.stdout, done.stdout + done.stderr


def _slow(task: int) -> int:
    time.sleep(0.2)
    return task


def test_a_consumer_that_stops_early_ends_the_pool_at_once_without_terminate(monkeypatch):
    """A build's consumer raises between results (a refused path, the fabric's checks' errors): closing the executor
    skips the tasks not started and joins the workers (close + join: terminate() hung a 24k render's pool on a
    worker killed while it held the task queue's lock, and hung a test of a refused path the same way)."""
    monkeypatch.setenv("TETON_WORKERS", "2")
    monkeypatch.setattr(mp.pool.Pool, "terminate", lambda self: (_ for _ in ()).throw(AssertionError("terminate")))
    started = time.monotonic()
    results = parallel.forked_pool(_slow, list(range(200)))
    first = next(results)
    results.close()
    assert first[1] in range(200)
    assert time.monotonic() - started < 10, "200 tasks of 0.2 s on 2 workers would take 20 s: the rest were skipped"
    assert not mp.active_children(), "every worker has ended"
