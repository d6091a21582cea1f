"""Publishing a build folder: refusals, symlinks, locks, leftovers, full and read-only disks, SIGKILL at each step."""

from __future__ import annotations

import errno
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from teton.manifest import MANIFEST, is_teton_build
from teton.pipeline import output
from teton.pipeline.output import OutputError, publish

INFRA = Path(output.__file__).resolve().parents[2]


# --- helpers ------------------------------------------------------------------------------------------


def build(tag: str, n: int = 12) -> dict[str, bytes]:
    """A build's files (relative path -> bytes): a teton manifest plus `n` files in nested folders.

    Builds with different tags share some paths (with different contents) and differ in others, so a
    mixture of two builds never equals either.
    """
    files = {f"{'leaf' if i % 2 else 'spine'}/{tag if i % 3 == 0 else 'common'}-{i:03}.cfg":
             f"hostname {tag}-{i}\n".encode() * 40 for i in range(n)}
    files[MANIFEST] = json.dumps({"generator": "teton", "tag": tag, "files": sorted(files)}).encode()
    return files


def writer(files: dict[str, bytes]):
    def fill(tmp: Path) -> None:
        for rel, data in sorted(files.items()):
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    return fill


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under `folder` (symlinks to it followed), relative path -> bytes."""
    folder = folder.resolve()
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def siblings(out: Path) -> list[str]:
    return sorted(os.listdir(out.parent))


def must_not_run(tmp: Path) -> None:
    raise AssertionError("fill must not be called for a refused target")


TMPFS = "mounting a tmpfs"


@contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A real tmpfs mounted at `where` (root only: root ignores permission bits, so only a real mount tests this),
    unmounted afterwards whatever happens."""
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True, text=True)
    assert done.returncode == 0, f"running as root but cannot mount a tmpfs here: {done.stderr.strip()}"
    try:
        yield where
    finally:
        subprocess.run(["umount", str(where)], check=True)


# --- is_teton_build -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("manifest", "expected"), [
    ('{"generator": "teton"}', True),
    ('{"files": {}, "plan": {}}', True),
    ('{"generator": "other"}', False),
    ('{"files": {}}', False),
    ('["generator", "teton"]', False),
    ("not json", False),
    ("[" * 100_000, False),
    (None, False),
])
def test_is_teton_build(tmp_path: Path, manifest: str | None, expected: bool) -> None:
    if manifest is not None:
        (tmp_path / MANIFEST).write_text(manifest)
    assert is_teton_build(tmp_path) is expected


def test_is_teton_build_never_raises(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    (tmp_path / "dir" / MANIFEST).mkdir(parents=True)
    assert not is_teton_build(tmp_path / "file")
    assert not is_teton_build(tmp_path / "missing")
    assert not is_teton_build(tmp_path / "dir")
    assert not is_teton_build("\0")


# --- publishing ---------------------------------------------------------------------------------------


def test_new_path_then_replacement(tmp_path: Path) -> None:
    out = tmp_path / "a" / "b" / "build"  # missing parents are created
    a, b = build("a"), build("b", n=5)
    assert publish(out, writer(a)) == out
    assert snapshot(out) == a
    publish(out, writer(b))
    assert snapshot(out) == b  # nothing of the previous build is left
    assert siblings(out) == [".build.lock", "build"]


def test_non_build_folder_refused_and_kept(tmp_path: Path) -> None:
    out = tmp_path / "photos"
    out.mkdir()
    (out / "cat.jpg").write_bytes(bytes(range(256)) * 10)
    (out / "sub").mkdir()
    (out / "sub" / "notes.txt").write_text("keep me\n")
    before = snapshot(out)
    with pytest.raises(OutputError, match=r"photos is not a teton build .*refusing to replace it.*--force"):
        publish(out, must_not_run)
    assert snapshot(out) == before
    assert siblings(out) == ["photos"]  # not even a lock file beside a refused folder

    publish(out, writer(build("a")), force=True)
    assert snapshot(out) == build("a")


def test_foreign_manifest_is_not_a_build(tmp_path: Path) -> None:
    out = tmp_path / "node_project"
    out.mkdir()
    (out / MANIFEST).write_text('{"name": "web app", "version": 3}')
    with pytest.raises(OutputError, match="not a teton build"):
        publish(out, must_not_run)
    assert (out / MANIFEST).read_text() == '{"name": "web app", "version": 3}'


def test_older_builds_without_generator_are_replaced(tmp_path: Path) -> None:
    out = tmp_path / "build"
    out.mkdir()
    (out / MANIFEST).write_text('{"files": {}, "plan": {}}')
    (out / "old.cfg").write_text("old")
    publish(out, writer(build("a")))
    assert snapshot(out) == build("a")


def test_empty_folder_accepted(tmp_path: Path) -> None:
    out = tmp_path / "build"
    out.mkdir(mode=0o700)
    publish(out, writer(build("a")))
    assert snapshot(out) == build("a")
    assert out.stat().st_mode & 0o777 == 0o700  # the folder keeps its permissions


def test_file_at_out_refused_unless_force(tmp_path: Path) -> None:
    out = tmp_path / "build"
    out.write_text("a file")
    with pytest.raises(OutputError, match="is a file"):
        publish(out, must_not_run)
    assert out.read_text() == "a file"
    publish(out, writer(build("a")), force=True)
    assert snapshot(out) == build("a")


def test_symlink_kept_and_target_replaced(tmp_path: Path) -> None:
    real = tmp_path / "real" / "build"
    publish(real, writer(build("a")))
    link = tmp_path / "link"
    link.symlink_to(real)
    publish(link, writer(build("b")))
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert snapshot(real) == build("b")
    assert siblings(real) == [".build.lock", "build"]
    assert sorted(os.listdir(tmp_path)) == ["link", "real"]


def test_symlink_to_non_build_refused(tmp_path: Path) -> None:
    real = tmp_path / "docs"
    real.mkdir()
    (real / "a.txt").write_text("a")
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(OutputError, match="a link to .*not a teton build"):
        publish(link, must_not_run)
    assert (real / "a.txt").read_text() == "a"


def test_dangling_symlink_refused(tmp_path: Path) -> None:
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "nowhere")
    with pytest.raises(OutputError, match="symbolic link to .*nowhere, which does not exist"):
        publish(link, must_not_run, force=True)
    assert link.is_symlink() and not (tmp_path / "nowhere").exists()


def test_root_refused() -> None:
    with pytest.raises(OutputError, match="root of the file system"):
        publish(Path("/"), must_not_run, force=True)


def test_cwd_and_its_ancestors_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    top = tmp_path / "top"
    publish(top, writer(build("a")))  # a teton build, so only the cwd rule can refuse it
    cwd = top / "sub"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    before = snapshot(top)
    for out in (Path("."), Path(""), cwd, Path(".."), top, tmp_path):
        with pytest.raises(OutputError, match="current folder"):
            publish(out, must_not_run, force=True)
    assert snapshot(top) == before


def test_home_and_its_ancestors_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "users" / "alice"
    home.mkdir(parents=True)
    (home / ".bashrc").write_text("export PS1='$ '\n")
    monkeypatch.setenv("HOME", str(home))
    for out in (home, Path("~").expanduser(), home.parent):
        with pytest.raises(OutputError, match="home folder"):
            publish(out, must_not_run, force=True)
    assert (home / ".bashrc").read_text() == "export PS1='$ '\n"
    publish(home / "build", writer(build("a")))  # a subfolder of home is fine
    assert snapshot(home / "build") == build("a")


def test_parent_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "parent").write_text("not a folder")
    with pytest.raises(OutputError, match=r"its parent .*parent is a file, not a folder"):
        publish(tmp_path / "parent" / "build", must_not_run)
    with pytest.raises(OutputError, match=r"a folder on its path .*parent is a file"):
        publish(tmp_path / "parent" / "x" / "build", must_not_run)
    assert (tmp_path / "parent").read_text() == "not a folder"


def test_fill_exception_propagates_unchanged(tmp_path: Path) -> None:
    out = tmp_path / "build"
    publish(out, writer(build("a")))

    class Boom(Exception):
        """A render that fails half-way."""

    def fill(tmp: Path) -> None:
        writer(build("b"))(tmp)
        raise Boom("render failed")

    with pytest.raises(Boom, match="render failed"):
        publish(out, fill)
    assert snapshot(out) == build("a")
    assert siblings(out) == [".build.lock", "build"]


def test_fill_oserror_becomes_output_error(tmp_path: Path) -> None:
    out = tmp_path / "build"

    def fill(tmp: Path) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp / "leaf" / "x.cfg"))

    with pytest.raises(OutputError, match=r"build/leaf/x.cfg: permission denied") as caught:
        publish(out, fill)
    assert isinstance(caught.value.__cause__, PermissionError)
    assert not out.exists() and siblings(out) == [".build.lock"]


def test_fill_without_manifest_publishes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "build"
    publish(out, writer(build("a")))
    with pytest.raises(OutputError, match="no teton manifest.json"):
        publish(out, lambda tmp: (tmp / "x.cfg").write_text("x"))
    assert snapshot(out) == build("a")


def test_leftovers_of_dead_runs_removed(tmp_path: Path) -> None:
    out = tmp_path / "build"
    publish(out, writer(build("a")))
    for name in (".build.tmp-99999", ".build.old-99999"):
        (tmp_path / name / "leaf").mkdir(parents=True)
        (tmp_path / name / "leaf" / "x.cfg").write_text("half")
    (tmp_path / ".build.tmp-1.tmp-2").mkdir()  # not ours: another folder's name pattern
    publish(out, writer(build("b")))
    assert snapshot(out) == build("b")
    assert siblings(out) == [".build.lock", ".build.tmp-1.tmp-2", "build"]


def test_fallback_without_rename_exchange(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def unsupported(a: Path, b: Path) -> None:
        raise OSError(errno.EINVAL, "Invalid argument", str(a), None, str(b))

    monkeypatch.setattr(output, "_exchange", unsupported)
    out = tmp_path / "build"
    publish(out, writer(build("a")))
    publish(out, writer(build("b")))
    assert snapshot(out) == build("b")
    assert siblings(out) == [".build.lock", "build"]


def test_fallback_restores_previous_build_if_second_rename_fails(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "build"
    publish(out, writer(build("a")))

    def unsupported(a: Path, b: Path) -> None:
        raise OSError(errno.ENOSYS, "Function not implemented")

    monkeypatch.setattr(output, "_exchange", unsupported)
    real_rename = os.rename

    def rename(src, dst):
        if ".tmp-" in str(src):
            raise OSError(errno.ENOSPC, "No space left on device", str(src))
        real_rename(src, dst)

    monkeypatch.setattr(os, "rename", rename)
    with pytest.raises(OutputError, match="no space left"):
        publish(out, writer(build("b")))
    assert snapshot(out) == build("a")
    assert siblings(out) == [".build.lock", "build"]


def test_lock_timeout(tmp_path: Path) -> None:
    import fcntl

    out = tmp_path / "build"
    publish(out, writer(build("a")))
    with open(tmp_path / ".build.lock", "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        started = time.monotonic()
        with pytest.raises(OutputError, match="another teton run is still publishing"):
            publish(out, writer(build("b")), lock_timeout=0.3)
        assert 0.25 < time.monotonic() - started < 5
        # a publisher that waits long enough gets the folder once the holder lets go
        done: list[Path] = []
        waiter = threading.Thread(target=lambda: done.append(publish(out, writer(build("b")), lock_timeout=30)))
        waiter.start()
        time.sleep(0.3)
        assert not done and snapshot(out) == build("a")
    waiter.join(30)
    assert done == [out] and snapshot(out) == build("b")


def test_concurrent_threads(tmp_path: Path) -> None:
    out = tmp_path / "build"
    errors: list[BaseException] = []

    def run(tag: str) -> None:
        try:
            for _ in range(5):
                publish(out, writer(build(tag, n=60)))
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=run, args=(tag,)) for tag in ("x", "y")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert snapshot(out) in (build("x", n=60), build("y", n=60))
    assert siblings(out) == [".build.lock", "build"]


# --- child processes: concurrency and SIGKILL ---------------------------------------------------------

CHILD = r"""
import errno, json, os, signal, sys, time
from pathlib import Path
from teton.pipeline import output

out, point, spec = Path(sys.argv[1]), sys.argv[2], json.loads(Path(sys.argv[3]).read_text())
files, rounds = {k: v.encode() for k, v in spec["files"].items()}, spec.get("rounds", 1)

def die():
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)

def fill(tmp):
    others = [p.name for p in tmp.parent.iterdir() if ".tmp-" in p.name and p != tmp]
    assert not others, f"another publisher is writing at the same time: {others}"
    for i, (rel, data) in enumerate(sorted(files.items())):
        if point == "during-fill" and i == len(files) // 2:
            die()
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)

def unsupported(a, b):
    raise OSError(errno.EINVAL, "Invalid argument", str(a), None, str(b))

real_exchange, real_rename, real_unlink = output._exchange, os.rename, os.unlink
calls = {"rename": 0, "unlink": 0}

def exchange(a, b):
    if point == "before-exchange":
        die()
    real_exchange(a, b)
    if point == "after-exchange":
        die()

def rename(a, b):
    calls["rename"] += 1
    if point == f"fallback-before-rename-{calls['rename']}":
        die()
    real_rename(a, b)
    if point == f"fallback-after-rename-{calls['rename']}":
        die()

def unlink(*args, **kwargs):
    calls["unlink"] += 1
    if point.endswith("during-removal") and calls["unlink"] == 3:
        die()
    return real_unlink(*args, **kwargs)

output._exchange = unsupported if point.startswith("fallback") else exchange
os.rename, os.unlink = rename, unlink
if point.endswith("after-removal"):
    real_rmtree = output.shutil.rmtree
    def rmtree(*args, **kwargs):
        real_rmtree(*args, **kwargs)
        die()
    output.shutil.rmtree = rmtree

try:
    for _ in range(rounds):
        output.publish(out, fill)
except output.OutputError as e:
    print(e, file=sys.stderr)
    sys.exit(2)
print("published")
"""


_specs = itertools.count()


def child(out: Path, point: str, files: dict[str, bytes], rounds: int = 1) -> subprocess.Popen:
    """A process that publishes `files` at `out` `rounds` times, killed by SIGKILL at `point` (see CHILD)."""
    spec = out.parent.parent / f"spec-{point}-{next(_specs)}.json"  # not beside `out`: siblings are checked
    spec.write_text(json.dumps({"files": {k: v.decode() for k, v in files.items()}, "rounds": rounds}))
    env = {**os.environ, "PYTHONPATH": str(INFRA)}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(out), point, str(spec)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_child(*args, **kwargs) -> tuple[int, str]:
    proc = child(*args, **kwargs)
    stdout, stderr = proc.communicate(timeout=120)
    return proc.returncode, stdout + stderr


OLD, NEW, NEXT = build("old", n=30), build("new", n=25), build("next", n=10)

KILL_POINTS = [  # (point, what the path must hold after the kill)
    ("during-fill", OLD),
    ("before-exchange", OLD),
    ("after-exchange", NEW),
    ("during-removal", NEW),
    ("after-removal", NEW),
    # the fallback for file systems without RENAME_EXCHANGE
    ("fallback-before-rename-1", OLD),
    ("fallback-after-rename-2", NEW),
    ("fallback-during-removal", NEW),
]


@pytest.mark.parametrize(("point", "expected"), KILL_POINTS, ids=[p for p, _ in KILL_POINTS])
def test_sigkill_at_every_step_leaves_a_complete_build(tmp_path: Path, point: str, expected: dict) -> None:
    out = tmp_path / "out" / "build"
    publish(out, writer(OLD))
    code, said = run_child(out, point, NEW)
    assert code == -signal.SIGKILL, said
    assert snapshot(out) == expected  # complete: every file of one build, nothing of the other
    if point != "after-removal":
        assert any(".build.tmp-" in n or ".build.old-" in n for n in siblings(out))  # the kill left debris
    publish(out, writer(NEXT))
    assert snapshot(out) == NEXT
    assert siblings(out) == [".build.lock", "build"]


def test_sigkill_between_the_fallback_renames_is_recovered(tmp_path: Path) -> None:
    """The fallback's documented window: no build at the path, the complete previous one beside it, put back."""
    out = tmp_path / "out" / "build"
    publish(out, writer(OLD))
    code, said = run_child(out, "fallback-after-rename-1", NEW)
    assert code == -signal.SIGKILL, said
    assert not out.exists()
    [old] = [n for n in siblings(out) if n.startswith(".build.old-")]
    assert snapshot(out.parent / old) == OLD

    def fails(tmp: Path) -> None:
        raise RuntimeError("render failed")

    with pytest.raises(RuntimeError):
        publish(out, fails)
    assert snapshot(out) == OLD  # put back first, kept when the new render fails
    assert siblings(out) == [".build.lock", "build"]
    publish(out, writer(NEXT))
    assert snapshot(out) == NEXT


def test_concurrent_processes(tmp_path: Path) -> None:
    out = tmp_path / "out" / "build"
    x, y = build("x", n=300), build("y", n=200)
    procs = [child(out, "none", files, rounds=4) for files in (x, y)]
    results = [(p.wait(timeout=120), p.stdout.read() + p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [code for code, _ in results] == [0, 0], results
    assert snapshot(out) in (x, y)
    assert siblings(out) == [".build.lock", "build"]


def test_permission_denied_is_an_output_error(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        parent = tmp_path / "locked"
        parent.mkdir(mode=0o555)
        with pytest.raises(OutputError, match="permission denied"):
            publish(parent / "build", writer(build("a")))
        assert not (parent / "build").exists()
        return
    # root ignores permission bits: publish as nobody (effective uid only, so root comes back after)
    shared = Path(tempfile.mkdtemp(prefix="teton-perm-"))
    try:
        shared.chmod(0o755)
        out = shared / "locked" / "build"
        out.parent.mkdir(mode=0o755)
        os.seteuid(65534)
        try:
            with pytest.raises(OutputError, match="permission denied"):
                publish(out, writer(build("a")))
        finally:
            os.seteuid(0)
        assert not out.exists()
    finally:
        shutil.rmtree(shared)


# --- real file systems: read-only and full ------------------------------------------------------------


@pytest.mark.root(TMPFS)
def test_read_only_file_system(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "ro", "size=1m,ro") as mnt:
        with pytest.raises(OutputError, match="read-only") as caught:
            publish(mnt / "build", must_not_run)
        assert str(mnt) in str(caught.value)


@pytest.mark.root(TMPFS)
def test_remounted_read_only_keeps_the_build(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "fs", "size=1m") as mnt:
        out = mnt / "build"
        publish(out, writer(build("a")))
        subprocess.run(["mount", "-o", "remount,ro", str(mnt)], check=True)
        with pytest.raises(OutputError, match="read-only"):
            publish(out, writer(build("b")))
        assert snapshot(out) == build("a")


@pytest.mark.root(TMPFS)
def test_full_disk(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "small", "size=64k") as mnt:
        out = mnt / "build"
        publish(out, writer(build("a", n=4)))

        def big(tmp: Path) -> None:
            writer(build("b", n=4))(tmp)
            (tmp / "huge.bin").write_bytes(b"\0" * 1024 * 1024)

        with pytest.raises(OutputError, match="no space left") as caught:
            publish(out, big)
        assert str(out) in str(caught.value) and ".tmp-" not in str(caught.value)
        assert snapshot(out) == build("a", n=4)
        assert siblings(out) == [".build.lock", "build"]
        publish(out, writer(build("c", n=4)))  # the space was given back
        assert snapshot(out) == build("c", n=4)


@pytest.mark.root(TMPFS)
def test_mount_point_refused(tmp_path: Path) -> None:
    with tmpfs(tmp_path / "mnt", "size=64k") as mnt:
        with pytest.raises(OutputError, match="mount point"):
            publish(mnt, must_not_run, force=True)
