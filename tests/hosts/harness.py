"""Running the host playbooks for real, through ansible-runner, against hosts this machine can stand in for.

- A host is a *root directory* (a chroot: Python, a shell, coreutils and `ip`, hard-linked from this machine, so it
  costs no copy) reached with community.general's chroot connection; its /proc and /sys are mounted privately for
  each command, so the roles see the kernel as a host would.
- A host's network is a *network namespace* of the test's own (`tt-hosts<id>-...`): the chroot command runs inside
  it (`ip netns exec`), so the roles' addresses, rules, routes and sysctls land there and are read back with `ip`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PLAYBOOKS = ROOT / "playbooks"
VENV_BIN = ROOT / ".venv" / "bin"
COLLECTIONS = f"{PLAYBOOKS / 'collections'}:{Path.home() / '.cache/teton/ansible/collections'}"
TOOLS = ["sh", "dash", "bash", "dd", "mkdir", "chmod", "chown", "rm", "cat", "echo", "ls", "ln", "mv", "cp", "id",
         "test", "true", "false", "env", "stat", "sleep", "touch", "readlink", "uname", "ip", "python3", "python3.11",
         "mount", "ethtool"]
DEVICES = {"null": (1, 3), "zero": (1, 5), "random": (1, 8), "urandom": (1, 9)}


def run(*cmd: str, check: bool = True, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(cmd), check=check, capture_output=True, text=True, **kw)


def unique(prefix: str = "tt-hosts") -> str:
    """A name no other test run uses: tt-hosts<6 hex>."""
    return f"{prefix}{uuid.uuid4().hex[:6]}"


def _libs(paths: list[str]) -> set[str]:
    out: set[str] = set()
    for p in paths:
        res = run("ldd", p, check=False)
        for line in res.stdout.splitlines():
            for part in line.split():
                if part.startswith("/"):
                    out.add(os.path.realpath(part))
                    out.add(part)
    return out


def _link(src: str, root: Path) -> None:
    dst = root / src.lstrip("/")
    if dst.exists() or dst.is_symlink():
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    if os.path.islink(src):
        os.symlink(os.readlink(src), dst)
        _link(os.path.join(os.path.dirname(src), os.readlink(src)) if not os.path.isabs(os.readlink(src))
              else os.readlink(src), root)
    else:
        os.link(src, dst)


def make_root(root: Path) -> Path:
    """A root directory a host can be: merged-/usr layout, Python 3.11 with its standard library, a shell,
    coreutils, iproute2; /etc/passwd and /etc/group copied; /dev nodes; hard links, so it takes ~0.2 s."""
    root.mkdir(parents=True, exist_ok=True)
    for d in ("usr/bin", "usr/sbin", "usr/lib", "usr/lib64", "etc", "tmp", "root", "proc", "sys", "dev", "run",
              "var/tmp", "var/lib", "usr/local/bin", "usr/local/sbin", "etc/profile.d"):
        (root / d).mkdir(parents=True, exist_ok=True)
    for name in ("bin", "sbin", "lib", "lib64"):
        if not (root / name).exists():
            os.symlink(f"usr/{name}", root / name)
    (root / "tmp").chmod(0o1777)
    (root / "var/tmp").chmod(0o1777)
    binaries = [p for t in TOOLS if (p := shutil.which(t, path="/usr/bin:/usr/sbin:/bin:/sbin"))]
    for b in binaries:
        _link(os.path.realpath(b) if not b.startswith("/usr") else b, root)
        _link(b.replace("/bin/", "/usr/bin/", 1) if b.startswith("/bin/") else b, root)
    for lib in _libs(binaries):
        _link(lib, root)
    if not (root / "usr/lib/python3.11").exists():
        run("cp", "-al", "/usr/lib/python3.11", str(root / "usr/lib/python3.11"))
    for f in ("passwd", "group", "nsswitch.conf", "hosts"):
        if Path("/etc", f).exists():
            shutil.copy2(Path("/etc", f), root / "etc" / f)
    for name, (major, minor) in DEVICES.items():
        node = root / "dev" / name
        if not node.exists():
            os.mknod(node, 0o20666, os.makedev(major, minor))
            node.chmod(0o666)
    return root


_LIBS: dict[tuple[str, ...], set[str]] = {}


def link_programs(root: Path, programs: list[str], trees: Sequence[Path] = ()) -> None:
    """Programs of this machine on `root` (hard links): each with the libraries it and the shared objects under
    `trees` (plugin folders, linked whole) load; the libraries are found once per set of programs."""
    key = (*programs, *map(str, trees))
    if key not in _LIBS:
        objects = [str(p) for t in trees for p in sorted(t.rglob("*.so*"))]
        _LIBS[key] = _libs([*programs, *objects])
    for t in trees:             # first: a library inside a tree would make its folder
        if not (root / str(t).lstrip("/")).exists():
            (root / str(t).lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
            run("cp", "-al", str(t), str(root / str(t).lstrip("/")))
    for p in programs:
        _link(p, root)
    for lib in sorted(_LIBS[key]):
        _link(lib, root)


def chroot_exe(where: Path, root: Path, netns: str | None) -> Path:
    """The `chroot` the connection runs: a private mount namespace (inside `netns` when given) with /proc and /sys
    mounted in the root, then chroot."""
    mounts = f'mount -t proc proc "{root}/proc" && mount -t sysfs sysfs "{root}/sys" && exec chroot "$@"'
    enter = f"ip netns exec {netns} " if netns else "unshare -m "
    script = where / f"chroot-{root.name}.sh"
    script.write_text(f"#!/bin/sh\nexec {enter}sh -c '{mounts}' sh \"$@\"\n")
    script.chmod(0o755)
    return script


def env() -> dict[str, str]:
    return {"PATH": f"{VENV_BIN}:/usr/sbin:/usr/bin:/sbin:/bin", "ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,
            "ANSIBLE_ROLES_PATH": str(PLAYBOOKS / "roles"), "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0",
            "ANSIBLE_PYTHON_INTERPRETER": "/usr/bin/python3", "ANSIBLE_HOST_KEY_CHECKING": "0",
            "ANSIBLE_RETRY_FILES_ENABLED": "0", "ANSIBLE_LOCALHOST_WARNING": "0",
            "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0"}


class Result:
    def __init__(self, runner: Any):
        self.rc: int = runner.rc
        self.status: str = runner.status
        self.stats: dict[str, dict[str, int]] = runner.stats or {}
        self.events = list(runner.events)
        self.stdout = runner.stdout.read() if hasattr(runner.stdout, "read") else str(runner.stdout)

    def total(self, key: str) -> int:
        return sum(self.stats.get(key, {}).values())

    def changed_tasks(self) -> list[str]:
        return [f"{e['event_data'].get('host')}: {e['event_data'].get('task')}" for e in self.events
                if e.get("event") == "runner_on_ok" and e["event_data"].get("res", {}).get("changed")]

    def warnings(self) -> list[str]:
        out: list[str] = []
        for e in self.events:
            res = e.get("event_data", {}).get("res") or {}
            out += [str(w) for w in res.get("warnings", [])]
            for item in res.get("results", []) if isinstance(res.get("results"), list) else []:
                out += [str(w) for w in (item or {}).get("warnings", [])]
        return out

    def diffs(self) -> list[Any]:
        """The --diff output of every task, a looped task's per item."""
        out: list[Any] = []
        for e in self.events:
            res = e.get("event_data", {}).get("res") or {} if e.get("event") == "runner_on_ok" else {}
            items = res.get("results") if isinstance(res.get("results"), list) else []
            out += [d for d in [res.get("diff"), *((i or {}).get("diff") for i in items)] if d]
        return out


def play(playbook: Path, inventory: list[str], data_dir: Path, *, check: bool = False, limit: str | None = None,
         extravars: dict[str, Any] | None = None, roots: Path | None = None,
         envvars: dict[str, str] | None = None, forks: int = 4) -> Result:
    """One real ansible-playbook run through ansible-runner (suppress_env_files: options never persist between runs).
    With `roots`, every host is the root directory `roots/<host>` reached through `roots/chroot-<host>.sh`; `envvars`
    add to the run's environment (the secrets, `TETON_SECRET_<name>`, as teton's deploy passes them)."""
    import ansible_runner

    data_dir.mkdir(parents=True, exist_ok=True)
    ev = dict(extravars or {})
    if roots is not None:
        ev.update({"ansible_connection": "community.general.chroot",
                   "ansible_host": f"{roots}/{{{{ inventory_hostname }}}}",
                   "ansible_chroot_exe": f"{roots}/chroot-{{{{ inventory_hostname }}}}.sh",
                   "ansible_python_interpreter": "/usr/bin/python3"})
    cmdline = "--diff" + (" --check" if check else "")
    r = ansible_runner.run(private_data_dir=str(data_dir), playbook=str(playbook), inventory=inventory,
                           cmdline=cmdline, limit=limit, extravars=ev, envvars={**env(), **(envvars or {})},
                           suppress_env_files=True, quiet=True, forks=forks)
    return Result(r)


def variables(path: Path) -> Any:
    """A rendered variables file (host_vars JSON or group_vars YAML) as plain data: teton writes every value marked
    unsafe for Ansible's templating (`teton.targets.ansible.unsafe`), and its readers take the mark off."""
    import yaml

    from teton.targets.ansible.unsafe import Loader, unwrap

    return unwrap(yaml.load(path.read_text(), Loader=Loader))
