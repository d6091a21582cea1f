"""Publish a build folder safely: refuse dangerous targets, serialize publishers, swap atomically.

`publish(out, fill)` is the only way a build folder should reach the disk:

1. Resolve `out`.  A symlink is kept: what it points to is replaced.  A dangling symlink is refused.
   Refused whatever `force` says: a file-system root, a mount point (a rename cannot replace it),
   the current folder or one of its ancestors, the home folder or one of its ancestors.
2. Refuse a parent that is a file; create missing parents.
3. Refuse to replace what is not a teton build (a non-empty folder without a teton manifest.json,
   or a file) unless `force=True`.  An empty folder is fine.
4. Take an exclusive `fcntl.flock` on `<parent>/.<name>.lock` (created once, never removed: removing
   a lock file races with a publisher that has just opened it).  A second publisher waits for
   `lock_timeout` seconds.  The kernel drops the lock when its holder dies, even by SIGKILL.
5. Under the lock, remove what dead runs left behind: siblings `.<name>.tmp-<pid>` and
   `.<name>.old-<pid>` (any pid: while we hold the lock nobody else writes them).  If `out` itself is
   missing and a `.<name>.old-<pid>` holds a teton build (a run killed inside the fallback's window,
   see 7), that build is first put back at `out`.
6. `fill(tmp)` writes the complete new build into the fresh empty sibling `.<name>.tmp-<pid>` (same file
   system, so renames are atomic).  If it raises, the temporary folder is removed, `out` is untouched
   and the exception propagates unchanged, except an OSError, which becomes an OutputError.
7. Swap.  `out` missing: one `rename(tmp, out)`.  `out` present: one
   `renameat2(tmp, out, RENAME_EXCHANGE)`, so at every instant the path holds either the previous
   complete build or the new one; the temporary name then holds the previous build and is removed
   (a kill during that removal leaves a leftover for step 5, never a damaged build at `out`).

   Fallback when the file system (or the C library) has no RENAME_EXCHANGE (EINVAL, ENOSYS, ENOTSUP:
   NFS, some FUSE file systems, glibc < 2.28): `rename(out, .<name>.old-<pid>)` then
   `rename(tmp, out)`, and on failure of the second rename the previous build is renamed back.  Between
   the two renames there is no build at `out` (a window of two system calls); a run killed exactly
   there leaves the complete previous build at `.<name>.old-<pid>`, and the next publish puts it back
   first (step 5).  A symlink flip was not taken as the fallback: `out` would have to become a
   symlink, which changes what users see, and a symlink cannot atomically replace an existing folder.

What goes inside is confined as well: `confined(rendered)` refuses, before anything is written, any path a target
returns that could leave the build folder or break a reader of it (`unsafe_path`: absolute, a `..`, `.` or empty
segment, a backslash, a NUL, newline or other control character, over 4096 bytes or a segment over 255, the
manifest's own name); `fill` then checks that every folder it writes into resolves inside the temporary build.

Every refusal and every OS error is an `OutputError` with a one-line message naming the path, what is
wrong and what to do; no OSError leaves `publish`.  No fsync: a render can be run again, and syncing
thousands of files would make publishing much slower.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import pwd
import re
import shutil
import stat
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from teton.findings import TetonError
from teton.manifest import MANIFEST, is_teton_build

RENAME_EXCHANGE = 2  # linux/fs.h
_AT_FDCWD = -100  # linux/fcntl.h
_NO_EXCHANGE = {errno.EINVAL, errno.ENOSYS, errno.ENOTSUP, errno.EOPNOTSUPP}


class OutputError(TetonError):
    """A build folder cannot be published: a one-line message saying what path, what is wrong, what to do."""


_PATH_MAX = 4096
_CONTROL = re.compile("[\x00-\x1f\x7f]")
_NAME_MAX = 255


def unsafe_path(rel: object) -> str | None:
    """Why `rel` may not name a file of a build folder (relative, inside it, one line of plain characters), or None."""
    if not isinstance(rel, str) or not rel:
        return "it is not a non-empty string"
    if _CONTROL.search(rel) is not None:
        return "it holds a control character (NUL, newline ...)"
    if rel.startswith("/"):
        return "it is absolute"
    if "\\" in rel:
        return "it holds a backslash"
    if len(rel.encode("utf-8", "surrogatepass")) > _PATH_MAX:
        return f"it is longer than {_PATH_MAX} bytes"
    parts = rel.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return "it has an empty, '.' or '..' segment"
    if any(len(p.encode("utf-8", "surrogatepass")) > _NAME_MAX for p in parts):
        return f"a segment is longer than {_NAME_MAX} bytes"
    if rel == MANIFEST:
        return f"it is the build's own {MANIFEST}"
    return None


def confined(rendered: Mapping[str, Iterable[str]]) -> None:
    """Refuse (OutputError naming the target and the path) any path a target returned that `unsafe_path` rejects."""
    for target, paths in rendered.items():
        for rel in paths:
            why = unsafe_path(rel)
            if why is not None:
                raise OutputError(f"target {target} returned the file path {rel!r}, which is not a path inside the "
                                  f"build folder ({why}); nothing was written (a bug in the target, or a spec value "
                                  "that becomes a path: check the spec)")


def inside(folder: Path, root: Path, resolved: str | None = None) -> bool:
    """`folder` (a folder being written into) resolves inside `root` (no segment is a symlink leading out);
    `resolved`: `root` resolved already (a caller checking many folders of one root)."""
    return Path(os.path.realpath(folder)).is_relative_to(resolved or os.path.realpath(root))


def publish(out: Path, fill: Callable[[Path], None], *, force: bool = False, lock_timeout: float = 600.0) -> Path:
    """Publish the build that `fill(tmp)` writes into an empty folder `tmp` at `out`; return `out`.

    Raises OutputError for every refusal and every OS error (see the module docstring); an exception
    from `fill` other than OSError propagates unchanged, after the temporary folder is removed.
    """
    given = Path(out)
    try:
        target = _resolve(given)
        shown = _shown(given, target)
        _refuse_dangerous(given, target)
        _make_parents(shown, target)
        _check_replaceable(shown, target, force)  # before the lock file is created beside a refused folder
        with _locked(shown, target, lock_timeout):
            _clean_leftovers(target)
            _check_replaceable(shown, target, force)  # again: the folder may have changed while we waited
            _publish_locked(shown, target, fill)
    except OSError as e:  # a safety net: every expected OSError is already an OutputError
        raise _os_error("cannot publish the build to", given, e) from e
    return given


# --- checks -------------------------------------------------------------------------------------------


def _resolve(given: Path) -> Path:
    """The real path to replace: symlinks (of `out` itself and of its parents) resolved."""
    absolute = Path(os.path.abspath(given))
    if os.path.islink(absolute) and not os.path.exists(absolute):
        try:
            where = os.readlink(absolute)
        except OSError:
            where = "?"
        raise OutputError(f"{given} is a symbolic link to {where}, which does not exist (or is a loop); "
                          "create the folder it points to, remove the link, or use -o with another folder")
    return Path(os.path.realpath(absolute))


def _shown(given: Path, target: Path) -> str:
    return f"{given} (a link to {target})" if os.path.islink(os.path.abspath(given)) else str(given)


def _homes() -> set[Path]:
    homes = {os.environ.get("HOME", "")}
    for who in (os.geteuid(), os.getuid()):
        try:
            homes.add(pwd.getpwuid(who).pw_dir)
        except KeyError:
            pass
    if os.environ.get("SUDO_USER"):
        try:
            homes.add(pwd.getpwnam(os.environ["SUDO_USER"]).pw_dir)
        except KeyError:
            pass
    return {Path(os.path.realpath(h)) for h in homes if h}


def _refuse_dangerous(given: Path, target: Path) -> None:
    why = " (publishing replaces the whole folder; --force does not change this); use -o with a new subfolder, e.g. "
    if target.parent == target:
        raise OutputError(f"refusing to publish the build to {given}: it is the root of the file system{why}./build")
    if os.path.ismount(target):
        raise OutputError(f"refusing to publish the build to {given}: it is a mount point, which cannot be replaced "
                          f"by a rename{why}{target / 'build'}")
    try:
        cwd: Path | None = Path(os.path.realpath(os.getcwd()))
    except OSError:  # the current folder was deleted: nothing to protect
        cwd = None
    if cwd is not None and (target == cwd or target in cwd.parents):
        what = "the current folder" if target == cwd else f"an ancestor of the current folder {cwd}"
        raise OutputError(f"refusing to publish the build to {given}: it is {what}{why}./build")
    for home in _homes():
        if target == home or target in home.parents:
            what = "the home folder" if target == home else f"an ancestor of the home folder {home}"
            raise OutputError(f"refusing to publish the build to {given}: it is {what}{why}{home / 'build'}")


def _make_parents(shown: str, target: Path) -> None:
    parent = target.parent
    existing = parent
    while not os.path.lexists(existing):
        existing = existing.parent
    if not os.path.isdir(existing):
        which = "its parent" if existing == parent else "a folder on its path"
        raise OutputError(f"cannot publish the build to {shown}: {which} {existing} is a file, not a folder; "
                          "remove or rename that file, or use -o with another folder")
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as e:
        raise _os_error("cannot create the folder", parent, e) from e


def _check_replaceable(shown: str, target: Path, force: bool) -> None:
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    except OSError as e:
        raise _os_error("cannot inspect", target, e) from e
    if force:
        return
    if not stat.S_ISDIR(st.st_mode):
        raise OutputError(f"{shown} is a file, not a teton build folder; refusing to replace it; "
                          "use --force or another folder")
    if is_teton_build(target):
        return
    try:
        with os.scandir(target) as entries:
            empty = next(entries, None) is None
    except OSError as e:
        raise _os_error("cannot list", target, e) from e
    if not empty:
        raise OutputError(f"{shown} is not a teton build (no manifest.json from teton); refusing to replace it; "
                          "use --force or another folder")


# --- lock and leftovers -------------------------------------------------------------------------------


@contextmanager
def _locked(shown: str, target: Path, timeout: float) -> Iterator[None]:
    lock = target.parent / f".{target.name}.lock"
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    except OSError as e:
        raise _os_error("cannot create the lock file", lock, e) from e
    try:
        deadline = time.monotonic() + max(0.0, timeout)
        pause = 0.01
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                pass
            except OSError as e:
                raise _os_error("cannot lock", lock, e) from e
            left = deadline - time.monotonic()
            if left <= 0:
                raise OutputError(f"another teton run is still publishing to {shown} (it holds {lock}; waited "
                                  f"{timeout:g} s); wait for it to finish or use -o with another folder")
            time.sleep(min(pause, left))
            pause = min(pause * 2, 0.5)
        yield
    finally:
        os.close(fd)  # releases the lock


def _leftover_kind(name: str, target: Path) -> str | None:
    for kind in ("tmp", "old"):
        prefix = f".{target.name}.{kind}-"
        if name.startswith(prefix) and name[len(prefix):].isdigit():
            return kind
    return None


def _clean_leftovers(target: Path) -> None:
    """With the lock held: put back a previous build stranded by the fallback, remove dead runs' folders."""
    try:
        with os.scandir(target.parent) as entries:
            leftovers = [(Path(e.path), kind) for e in entries if (kind := _leftover_kind(e.name, target))]
    except OSError as e:
        raise _os_error("cannot list", target.parent, e) from e
    if not os.path.lexists(target):
        olds = [p for p, kind in leftovers if kind == "old" and not p.is_symlink() and is_teton_build(p)]
        if olds:
            newest = max(olds, key=lambda p: p.stat().st_mtime_ns)
            try:
                os.rename(newest, target)
            except OSError as e:
                raise _os_error("cannot restore the previous build at", target, e) from e
            leftovers = [(p, kind) for p, kind in leftovers if p != newest]
    for path, _ in leftovers:
        try:
            _remove(path)
        except OSError as e:
            raise _os_error("cannot remove the leftover of an earlier run", path, e) from e


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        os.unlink(path)


def _remove_quietly(path: Path) -> None:
    try:
        _remove(path)
    except OSError:
        pass  # a leftover: the next publish removes it


# --- write and swap -----------------------------------------------------------------------------------


def _publish_locked(shown: str, target: Path, fill: Callable[[Path], None]) -> None:
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    try:
        os.mkdir(tmp)
    except OSError as e:
        raise _os_error(f"cannot create a temporary folder for {shown} at", tmp, e) from e
    try:
        fill(tmp)
        if not is_teton_build(tmp):
            raise OutputError(f"the build for {shown} has no teton {MANIFEST}; nothing was published "
                              "(a bug in teton: please report it)")
        _keep_mode(target, tmp)
    except BaseException as exc:
        _remove_quietly(tmp)
        if isinstance(exc, OSError):
            where = str(exc.filename or tmp).replace(str(tmp), str(target), 1)
            raise _os_error(f"cannot write the build for {shown}: writing", where, exc) from exc
        raise
    _swap(shown, target, tmp)


def _keep_mode(target: Path, tmp: Path) -> None:
    """The new folder keeps the permissions of the folder it replaces (a folder made private stays private)."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        os.chmod(tmp, stat.S_IMODE(st.st_mode))


def _swap(shown: str, target: Path, tmp: Path) -> None:
    if not os.path.lexists(target):
        try:
            os.rename(tmp, target)
        except OSError as e:
            _remove_quietly(tmp)
            raise _os_error(f"cannot publish the build for {shown}: renaming {tmp} to", target, e) from e
        return
    try:
        _exchange(tmp, target)
    except OSError as e:
        if e.errno in _NO_EXCHANGE:
            _swap_by_two_renames(shown, target, tmp)
            return
        _remove_quietly(tmp)
        raise _os_error(f"cannot publish the build for {shown}: exchanging {tmp} with", target, e) from e
    _remove_quietly(tmp)  # it holds the previous build now


def _swap_by_two_renames(shown: str, target: Path, tmp: Path) -> None:
    """The fallback without RENAME_EXCHANGE: no build at `target` between the two renames (see the docstring)."""
    old = target.parent / f".{target.name}.old-{os.getpid()}"
    try:
        os.rename(target, old)
    except OSError as e:
        _remove_quietly(tmp)
        raise _os_error(f"cannot publish the build for {shown}: renaming the previous build", target, e) from e
    try:
        os.rename(tmp, target)
    except BaseException as exc:
        try:
            os.rename(old, target)
        except OSError:
            pass  # the next publish puts it back (_clean_leftovers)
        _remove_quietly(tmp)
        if isinstance(exc, OSError):
            raise _os_error(f"cannot publish the build for {shown}: renaming {tmp} to", target, exc) from exc
        raise
    _remove_quietly(old)


@cache
def _renameat2() -> Callable[..., int] | None:
    try:
        fn = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # no renameat2 in this C library (glibc < 2.28, some musl builds)
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


def _exchange(a: Path, b: Path) -> None:
    """Atomically exchange two existing paths (Linux renameat2 RENAME_EXCHANGE); OSError on failure."""
    fn = _renameat2()
    if fn is None:
        raise OSError(errno.ENOSYS, "renameat2 is not in this C library", str(a), None, str(b))
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), str(a), None, str(b))


# --- messages -----------------------------------------------------------------------------------------

_REASONS = {
    errno.EROFS: ("the file system is read-only", "remount it read-write or use -o with a folder on a writable one"),
    errno.ENOSPC: ("no space left on the device", "free some space or use -o with a folder on another file system"),
    errno.EDQUOT: ("the disk quota is exceeded", "free some space or use -o with a folder on another file system"),
    errno.EACCES: ("permission denied", "fix the permissions or use -o with a folder you can write to"),
    errno.EPERM: ("operation not permitted", "fix the permissions or use -o with a folder you can write to"),
    errno.ENOTDIR: ("a part of the path is a file, not a folder", "use -o with another folder"),
    errno.EISDIR: ("it is a folder", "remove it or use -o with another folder"),
    errno.EEXIST: ("it already exists (something else is writing there?)", "try again or use -o with another folder"),
    errno.ENOTEMPTY: ("it was changed by something else meanwhile", "try again or use -o with another folder"),
    errno.EBUSY: ("it is busy (a mount point?)", "use -o with another folder"),
    errno.ENAMETOOLONG: ("the name is too long", "use -o with a shorter folder name"),
    errno.ELOOP: ("too many levels of symbolic links", "fix the links or use -o with another folder"),
    errno.EXDEV: ("it is on another file system", "use -o with another folder"),
}


def _os_error(what: str, path: Path | str, e: OSError) -> OutputError:
    reason, todo = _REASONS.get(e.errno or 0, (e.strerror or os.strerror(e.errno or 0) or str(e), "check the path "
                                                "or use -o with another folder"))
    message = f"{what} {path}: {reason}; {todo}"
    return OutputError(" ".join(message.split("\n")))
