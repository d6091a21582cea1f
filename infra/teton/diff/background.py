"""Work on one side of a diff in a forked process while the other side is designed: the child inherits the Fabric (no
pickling of the model) and sends back only its result (files, digests).  Two sides, two cores.

The child dies with its parent (as the render workers do); a SpecError or TetonError in the child is raised again in
the parent with the same findings or message.  With one worker ($TETON_WORKERS=1) or without fork, the work runs in
place.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable
from contextlib import suppress
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

from teton.findings import SpecError, TetonError
from teton.targets import parallel

T = TypeVar("T")


def _child(fn: Callable[[], Any], then: Callable[[Any], None] | None, conn: Connection, parent: int) -> None:
    parallel._die_with_parent(parent)
    try:
        try:
            value = fn()
        except SpecError as exc:
            conn.send(("spec", exc.findings))
            return
        except TetonError as exc:
            conn.send(("teton", str(exc)))
            return
        except Exception as exc:  # noqa: BLE001 - said in the parent, which exits without a traceback
            conn.send(("error", f"{type(exc).__name__}: {exc}"))
            return
        conn.send(("ok", value))
    finally:
        conn.close()
    if then is not None:
        with suppress(Exception):   # what `then` does (writing the cache) only saves time later
            then(value)


class Background(Generic[T]):
    """`fn()` in a forked process; `result()` waits for its value, `close()` for the process, which runs
    `then(value)` after sending the value (work the parent need not wait for, such as writing the cache)."""

    def __init__(self, fn: Callable[[], T], then: Callable[[T], None] | None = None):
        self._value: T | None = None
        self._done = False
        self._proc: Any = None
        if parallel.workers() < 2 or "fork" not in mp.get_all_start_methods():
            self._value, self._done = fn(), True
            if then is not None:
                then(self._value)
            return
        ctx = mp.get_context("fork")
        self._conn, child = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(fn, then, child, os.getpid()), daemon=True)
        self._proc.start()
        child.close()

    def close(self) -> None:
        """Wait until the process has ended (its `then` done)."""
        if self._proc is not None:
            self._proc.join()
            self._proc = None

    def result(self) -> T:
        if self._done:
            return self._value  # type: ignore[return-value]
        try:
            kind, value = self._conn.recv()
        except EOFError:
            self.close()
            kind, value = "error", "the worker process died"
        finally:
            self._conn.close()
        self._done = True
        if kind == "spec":
            raise SpecError(value)
        if kind in ("teton", "error"):
            raise TetonError(value)
        self._value = value
        return self._value
