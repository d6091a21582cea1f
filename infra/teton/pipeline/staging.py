"""A build's staging folder as a render fills it (`teton.pipeline.write_rendering`).

Files reach it three ways, all before `publish` swaps it in:

- `Stager.write`, in a forked worker of the render's local pool, for each of its tasks (`teton.targets.schedule.Stage`):
  the worker writes its own files and sends back each one's sha256 and size (`Staged`), not its text; `took`, in the
  parent, records them.  With a render cache, the worker also stores each file that is not a device's as a blob
  (what the render's record names: `teton.pipeline.record.save_record`);
- `Stager.put`, in the parent, for a task run in place (a render too small to fork, one worker): written on
  `WRITERS` threads while the render goes on;
- `Stager.finish`, with the render's final files, writes what was not put, or was put with other content, and gives
  the manifest's entry of every file.

Every path is refused before it is written if it could leave the folder (`confined`), and every folder written into is
made and checked to resolve inside it (`inside`), in the worker as in the parent.  A path two workers wrote, or that a
worker wrote and the render's final files give again, is an error naming both targets: the parent holds no text to
settle which is meant (no target gives one today).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from teton.buildfolder import device_of
from teton.pipeline.cache import RenderCache
from teton.pipeline.output import OutputError, confined, inside
from teton.targets import DeviceTarget, Files, RenderContext, Target
from teton.targets.base import Staged

WRITERS = 2        # threads writing a build's files (`put`): they write while the render's workers hold the cores;
                   # more threads only contend in the kernel (on 2 cores, 8 writers spent about twice the system time)

Sink = Callable[[str, Files], None]


def sha256(content: str | bytes) -> str:
    return hashlib.sha256(content.encode("utf-8") if isinstance(content, str) else content).hexdigest()


class Stager:
    """Writes a build's files into its staging folder `tmp` (`publish`'s).

    In the parent, each file's folder is made and confined in the calling thread before its write is queued; a path
    `put` twice is written again only after its first write ended (two writes of one path never race).  Each file is
    encoded once, for its bytes and its manifest entry (sha256 and size; `known`: from the render cache, not hashed
    again).  Opening, hashing and writing a file release the GIL: a build of 10,000 files spends most of its time in
    the file system."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.resolved = os.path.realpath(tmp)
        self.made: set[Path] = set()
        self.pool = ThreadPoolExecutor(max_workers=WRITERS)
        self.sent: dict[str, tuple[str, Future[tuple[str, int]]]] = {}
        self.known: dict[str, tuple[str, int]] | None = None
        self.staged: dict[str, dict[str, Staged]] = {}      # target -> {path: Staged}, what workers wrote
        self._staged_by: dict[str, str] = {}                 # path -> the target whose worker wrote it

    def __call__(self, target: str, files: Files) -> None:
        self.put(target, files)

    def _folder(self, rel: str, made: set[Path]) -> None:
        parent = (self.tmp / rel).parent
        if parent not in made:
            parent.mkdir(parents=True, exist_ok=True)
            if not inside(parent, self.tmp, self.resolved):
                raise OutputError(f"the file path {rel!r} leads out of the build folder; nothing was written")
            made.add(parent)

    def _write(self, rel: str, content: str) -> tuple[str, int]:
        data = content.encode("utf-8")
        (self.tmp / rel).write_bytes(data)
        hit = self.known.get(rel) if self.known else None
        return hit if hit is not None else (sha256(data), len(data))

    def _send(self, rel: str, content: str) -> Future[tuple[str, int]]:
        was = self.sent.get(rel)
        if was is not None:
            if was[0] is content:
                return was[1]
            was[1].result()
        self._folder(rel, self.made)
        fut = self.pool.submit(self._write, rel, content)
        self.sent[rel] = (content, fut)
        return fut

    def put(self, target: str, files: Files) -> None:
        """Write `files` of `target` now (paths refused by `confined` first)."""
        confined({target: files})
        for rel, content in files.items():
            self._send(rel, content)

    def write(self, target: Target, files: Files, ctx: RenderContext) -> dict[str, Staged]:
        """In a forked worker (no thread of the parent's pool is used): write `files` of `target` into the staging
        folder; each one's sha256 and size.  With a render cache, a file that is not a device's is stored as a blob."""
        confined({target.name: files})
        blobs = ctx.cache if isinstance(ctx.cache, RenderCache) else None
        made: set[Path] = set()
        out: dict[str, Staged] = {}
        for rel, content in files.items():
            self._folder(rel, made)
            data = content.encode("utf-8")
            (self.tmp / rel).write_bytes(data)
            out[rel] = Staged(sha256(data), len(data))
            if blobs is not None and not (isinstance(target, DeviceTarget) and device_of(rel) is not None):
                blobs.put_blob(data, out[rel].sha256)
        return out

    def took(self, target: str, staged: dict[str, Staged]) -> None:
        """What a worker wrote for `target` (in the parent, as its task ends)."""
        for rel in staged:
            self._refuse_twice(rel, target)
            self._staged_by[rel] = target
        self.staged.setdefault(target, {}).update(staged)

    def _refuse_twice(self, rel: str, target: str) -> None:
        other = self._staged_by.get(rel)
        if other is not None:
            raise OutputError(f"targets {other} and {target} both give the file path {rel!r}, which a render's "
                              "worker wrote; nothing was published (a bug in teton: please report it)")

    def finish(self, rendered: dict[str, Files], known: dict[str, tuple[str, int]] | None = None,
               ) -> dict[str, dict[str, Any]]:
        """Write what `rendered` holds that is not written as it is; the manifest's entry of every file, those the
        workers wrote included.  Two targets giving one path: the later target's file (as `rendered`'s order); a
        path put but not in `rendered` is removed."""
        confined(rendered)
        self.known = known
        try:
            order = [(name, rel, content) for name, files in rendered.items() for rel, content in sorted(files.items())]
            last = {rel: i for i, (_, rel, _) in enumerate(order)}
            order = [item for i, item in enumerate(order) if last[item[1]] == i]
            for name, rel, _ in order:      # every folder made and confined, in order, before a file is written
                self._refuse_twice(rel, name)
                self._folder(rel, self.made)
            futures = [(name, rel, self._send(rel, content)) for name, rel, content in order]
            entries = {rel: {"sha256": s.sha256, "bytes": s.size, "target": name}
                       for name, staged in self.staged.items() for rel, s in staged.items()}
            for name, rel, fut in futures:
                sha, size = fut.result()
                entries[rel] = {"sha256": sha, "bytes": size, "target": name}
            for rel in set(self.sent) - set(last):
                self.sent[rel][1].result()
                (self.tmp / rel).unlink()
            return entries
        finally:
            self.close()

    def targets(self, rendered: dict[str, Files]) -> list[str]:
        """The targets with a file in the build: in `rendered` or written by a worker."""
        return [name for name, files in rendered.items() if files or self.staged.get(name)]

    def close(self) -> None:
        """Wait for every queued write (a failed render's staging folder is removed only after)."""
        self.pool.shutdown(wait=True)
