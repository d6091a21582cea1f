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
from multiprocessing.connection import Connection
from typing import Any, Generic, TypeVar

from teton.findings import SpecError, TetonError
from teton.targets import parallel

T = TypeVar("T")


def _child(fn: Callable[[], Any], conn: Connection, parent: int) -> None:
    parallel._die_with_parent(parent)
    try:
        conn.send(("ok", fn()))
    except SpecError as exc:
        conn.send(("spec", exc.findings))
    except TetonError as exc:
        conn.send(("teton", str(exc)))
    except Exception as exc:  # noqa: BLE001 - whatever failed is said in the parent, which owns the traceback-free exit
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


class Background(Generic[T]):
    """`fn()` in a forked process; `result()` waits for it."""

    def __init__(self, fn: Callable[[], T]):
        self._value: T | None = None
        self._done = False
        if parallel.workers() < 2 or "fork" not in mp.get_all_start_methods():
            self._value, self._done = fn(), True
            return
        ctx = mp.get_context("fork")
        self._conn, child = ctx.Pipe(duplex=False)
        self._proc = ctx.Process(target=_child, args=(fn, child, os.getpid()), daemon=True)
        self._proc.start()
        child.close()

    def result(self) -> T:
        if self._done:
            return self._value  # type: ignore[return-value]
        try:
            kind, value = self._conn.recv()
        except EOFError:
            kind, value = "error", f"the worker process died (exit {self._proc.exitcode})"
        finally:
            self._proc.join()
            self._conn.close()
        self._done = True
        if kind == "spec":
            raise SpecError(value)
        if kind in ("teton", "error"):
            raise TetonError(value)
        self._value = value
        return self._value
