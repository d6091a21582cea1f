"""End to end: the scheduler schedules.  The `slurm` role runs for real (ansible-runner, the build's inventory) on the
lab twin's controller `slurmctl` and its eight GPU hosts, each a root directory in its own network namespace; the
test then starts, from the files the role installed, munged and slurmctld in the controller's namespace and munged
and slurmd in every GPU host's, over the twin's front end only (slurm.conf's NodeAddr and SlurmctldHost address are
the hosts' front-end addresses).  Slurm sees every host idle, runs a job on all eight, shows the rendered tree;
a host cut off from the front end goes NOT_RESPONDING (or DOWN) and comes back; the role's handlers restart the
right daemon, munged first; a second run changes nothing.

No systemd runs here, so the test stands in for it (and for the packages' scripts, tests/hosts/slurm.install): each
daemon runs as the package's unit would, in the host's namespaces (network, and its own mount and UTS namespace: the
host's name), chrooted to its root, on the default paths slurm.conf names; a role's restart handler that would have
run is carried out by the test, in the order the handlers ran.

slurm.conf goes to the hosts with the settings in OVERRIDES changed (each with why: the stand-ins are not Grand
Tetons), through a copy of the build's slurm/ folder.  gres.conf goes unchanged: the hosts have no GPU here, so each
GPU host's root gets the eight NVIDIA device nodes gres.conf names (/dev/nvidia0-7, never opened: no job asks for a
GPU) and slurmd reports the configured `gpu:h100:8` (SlurmdParameters=config_overrides)."""

from __future__ import annotations

import re
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from tests.hosts import harness as h
from tests.hosts import slurm

pytestmark = [pytest.mark.root("the twin, munged, slurmctld and slurmd"),
              pytest.mark.skipif(shutil.which("slurmd") is None, reason="scripts/setup installs slurmd")]

# slurm.conf settings the test changes (None: removed), and why.
OVERRIDES: dict[str, tuple[str | None, str]] = {
    "ProctrackType": ("proctrack/linuxproc", "the hosts share this machine's cgroup hierarchy: no job cgroups in it"),
    "TaskPlugin": ("task/none", "the same, and no binding to the 96 cores slurm.conf gives a host"),
    "SlurmdParameters": ("config_overrides", "a host here is this machine's cores and memory, not 2x48 cores and "
                         "1.9 TB: slurmd registers the node slurm.conf describes (with its 8 GPUs), not the stand-in"),
    "HealthCheckProgram": (None, "teton-node-health (gpu_health) is not in the roots; tests/hosts/test_slurm.py "
                           "runs it against slurmctld"),
    "HealthCheckInterval": (None, "the same"),
    "HealthCheckNodeState": (None, "the same"),
    "SlurmdTimeout": ("6", "a host cut off from the front end is DOWN within seconds, not the default 300"),
}
UNITS = {"Restart munged": "munged", "Restart slurmctld": "slurmctld", "Restart slurmd": "slurmd"}


def overridden(conf: str, overrides: dict[str, tuple[str | None, str]]) -> str:
    """slurm.conf with each setting of `overrides` replaced (or added, or removed), a comment saying why."""
    for key, (value, why) in overrides.items():
        new = f"# {key}: test override ({why})\n" + ("" if value is None else f"{key}={value}\n")
        conf, n = re.subn(rf"^{key}=.*\n", lambda _, new=new: new, conf, flags=re.M)
        assert n <= 1, key
        if n == 0 and value is not None:
            conf += new
    return conf


@dataclass
class Host:
    name: str
    root: Path
    netns: str
    daemon: str                 # slurmctld or slurmd


@dataclass
class Cluster:
    """The controller and the GPU hosts with the daemons the test runs on them, and how to run the role again."""
    controller: Host
    gpus: list[Host]
    build: Path
    files: Path                 # the slurm/ folder the role installs from (the build's, with OVERRIDES)
    playbook: Path
    data: Path
    key: str
    first: h.Result
    second: h.Result
    twin: str                   # the twin's name, for its fail and restore
    procs: dict[tuple[str, str], subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def hosts(self) -> list[Host]:
        return [self.controller, *self.gpus]

    def argv(self, host: Host, *cmd: str, user: str | None = None) -> list[str]:
        """`cmd` in the host: a mount namespace of its own with /proc, /sys and the machine's cgroup hierarchy
        (slurmd requires one) mounted in its root, its name as host name (a UTS namespace), its network namespace,
        chrooted to its root (as `user`)."""
        script = ('r=$1 n=$2 ns=$3; shift 3; mount -t proc proc "$r/proc" && mount -t sysfs sysfs "$r/sys" && '
                  'mount --rbind /sys/fs/cgroup "$r/sys/fs/cgroup" && hostname "$n" && '
                  'exec ip netns exec "$ns" chroot "$@"')
        who = [f"--userspec={user}:{user}"] if user else []
        return ["unshare", "--uts", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                str(host.root), host.name, host.netns, *who, str(host.root), *cmd]

    def client(self, *cmd: str) -> str:
        """A Slurm client command run on the controller."""
        res = subprocess.run(self.argv(self.controller, *cmd), capture_output=True, text=True, check=False)
        assert res.returncode == 0, f"{' '.join(cmd)}: {res.stdout}{res.stderr}{self.logs()}"
        return res.stdout

    def start(self, host: Host, daemon: str) -> None:
        """A daemon in the foreground, as its package's unit runs it (munged as user munge)."""
        argv = {"munged": self.argv(host, "munged", "--foreground", user="munge"),
                "slurmctld": self.argv(host, "slurmctld", "-D"),
                "slurmd": self.argv(host, "slurmd", "-D")}[daemon]
        self.procs[(host.name, daemon)] = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                                                           stderr=subprocess.DEVNULL)
        if daemon == "munged":
            slurm.wait_until(f"munged on {host.name}", (host.root / "run/munge/munge.socket.2").exists, 10, 0.05)

    def stop(self, host: Host, daemon: str) -> None:
        slurm.stop(self.procs.pop((host.name, daemon), None))
        if daemon == "munged":
            (host.root / "run/munge/munge.socket.2").unlink(missing_ok=True)

    def stop_all(self) -> None:
        """Every daemon, Slurm's first (munged authenticates their last messages)."""
        for key in sorted(self.procs, key=lambda k: k[1] == "munged"):
            slurm.stop(self.procs.pop(key))

    def wait(self, what: str, check: Callable[[], bool], timeout: float, step: float = 0.2) -> float:
        """slurm.wait_until, failing with the daemons' last log lines."""
        try:
            return slurm.wait_until(what, check, timeout, step)
        except AssertionError as exc:
            raise AssertionError(f"{exc}{self.logs()}") from None

    def by_name(self, name: str) -> Host:
        return next(x for x in self.hosts if x.name == name)

    def states(self) -> dict[str, str]:
        return slurm.node_states(self.client)

    def all_idle(self) -> bool:
        try:
            return self.states() == {g.name: "idle" for g in self.gpus}
        except AssertionError:       # slurmctld not answering yet
            return False

    def play(self) -> h.Result:
        """The role on the controller and every GPU host, with the test's munge key as the deploy passes it."""
        res = h.play(self.playbook, [str(self.build / "ansible/inventory.yml")], self.data,
                     roots=self.controller.root.parent, extravars={"teton_slurm_files": str(self.files)},
                     envvars={"TETON_SECRET_munge_key": self.key}, forks=len(self.hosts))
        assert res.rc == 0, res.stdout[-4000:]
        return res

    def logs(self) -> str:
        out = []
        for x in self.hosts:
            for f in (f"var/log/slurm/{x.daemon}.log", "var/log/munge/munged.log"):
                p = x.root / f
                if p.exists():
                    out.append(f"\n--- {x.name}:/{f}\n" + "\n".join(p.read_text().splitlines()[-15:]))
        return "".join(out)


def handlers_run(result: h.Result) -> dict[str, list[str]]:
    """{host: the handlers that ran for it, in the order they ran}; a handler skipped on a host (another host's
    daemon) is not listed."""
    handlers = {e["event_data"]["task_uuid"] for e in result.events if e.get("event") == "playbook_on_task_start"
                and e["event_data"].get("task_path", "").rsplit(":", 1)[0].endswith("slurm/handlers/main.yml")}
    out: dict[str, list[str]] = {}
    for e in result.events:
        d = e.get("event_data", {})
        if d.get("task_uuid") in handlers and e.get("event") == "runner_on_ok":
            out.setdefault(d["host"], []).append(d["task"])
    return dict(sorted(out.items()))


@pytest.fixture(scope="module")
def cluster(services_twin, tmp_path_factory):
    build = services_twin.build
    inventory = yaml.safe_load((build / "ansible/inventory.yml").read_text())["all"]["children"]
    (controller,) = inventory["slurm_controller"]["hosts"]
    gpus = sorted(inventory["gpu"]["hosts"])
    work = tmp_path_factory.mktemp("slurm")
    roots = work / "roots"
    hosts = [Host(n, roots / n, services_twin.netns(n), "slurmctld" if n == controller else "slurmd")
             for n in [controller, *gpus]]
    t0 = time.monotonic()
    for x in hosts:
        h.make_root(x.root)
        h.chroot_exe(roots, x.root, x.netns)
        slurm.install(x.root, gpus=8 if x.daemon == "slurmd" else 0)
    files = work / "slurm-files"
    shutil.copytree(build / "slurm", files)
    (files / "slurm.conf").write_text(overridden((build / "slurm/slurm.conf").read_text(), OVERRIDES))
    playbook = work / "slurm.yml"
    playbook.write_text(yaml.safe_dump([{"name": "Slurm", "hosts": "gpu:slurm_controller", "gather_facts": True,
                                         "gather_subset": ["min"], "roles": ["slurm"]}]))
    key = secrets.token_hex(32)
    c = Cluster(hosts[0], hosts[1:], build, files, playbook, work / "run", key, None, None,  # type: ignore[arg-type]
                services_twin.name)
    t1 = time.monotonic()
    c.first = c.play()
    c.second = c.play()
    t2 = time.monotonic()
    try:
        for x in c.hosts:
            c.start(x, "munged")
        c.start(c.controller, "slurmctld")
        for x in c.gpus:
            c.start(x, "slurmd")
        up = c.wait("every GPU host idle", c.all_idle, 60)
        print(f"\nslurm on the twin: roots {t1 - t0:.1f} s, role twice {t2 - t1:.1f} s, daemons up and every host "
              f"idle {up:.1f} s")
        yield c
    finally:
        c.stop_all()


def test_the_role_installs_slurm_and_munge_and_a_second_run_changes_nothing(cluster):
    assert cluster.first.total("changed") > 0 and cluster.second.total("changed") == 0, cluster.second.changed_tasks()
    for x in cluster.hosts:
        for f in ("slurm.conf", "gres.conf", "topology.conf", "topology.yaml"):
            assert (x.root / "etc/slurm" / f).read_text() == (cluster.files / f).read_text()
        key = x.root / "etc/munge/munge.key"
        assert key.read_text() == cluster.key and key.stat().st_mode & 0o777 == 0o400
    # the first run restarts each host's own daemon, munged first; a host without systemd says what it did not do
    assert handlers_run(cluster.first) == {x.name: ["Restart munged", f"Restart {x.daemon}"]
                                              for x in cluster.hosts}
    assert handlers_run(cluster.second) == {}
    warnings = "\n".join(cluster.first.warnings())
    assert "Slurm: not applied: munged and slurmctld not started (systemd is not running here)" in warnings
    assert "Slurm: not applied: munged and slurmd not started (systemd is not running here)" in warnings
    assert "Slurm: not applied: slurmd, munge not installed (no apt here" in warnings
    assert warnings.count("Slurm: not applied: munge not restarted (systemd is not running here)") == 9
    assert warnings.count("Slurm: not applied: slurmd not restarted (systemd is not running here)") == 8
    assert cluster.key not in cluster.first.stdout + cluster.second.stdout          # the secret is never logged


def test_every_gpu_host_is_idle_over_the_front_end_and_runs_a_job(cluster):
    conf = (cluster.controller.root / "etc/slurm/slurm.conf").read_text()
    addrs = dict(re.findall(r"^NodeName=(\S+) NodeAddr=(\S+)", conf, flags=re.M))
    ctl = h.variables(cluster.build / f"ansible/host_vars/{cluster.controller.name}.json")
    assert f"SlurmctldHost={cluster.controller.name}({ctl['ansible_host']})" in conf.splitlines()
    for x in cluster.gpus:               # NodeAddr: the host's first front-end address
        v = h.variables(cluster.build / f"ansible/host_vars/{x.name}.json")
        assert addrs[x.name] == v["teton_frontend"][0]["addresses"][0].split("/")[0]
    assert cluster.states() == {x.name: "idle" for x in cluster.gpus}
    assert cluster.client("sinfo", "-h", "-N", "-o", "%N %G").count("gpu:h100:8") == 8
    names = [x.name for x in cluster.gpus]
    out = cluster.client("srun", "-N", str(len(names)), "-w", ",".join(names), "hostname")
    assert sorted(out.split()) == names


def test_scontrol_shows_the_rendered_tree(cluster):
    switches, nodes, children = slurm.topology(cluster.client)
    rendered = {}
    for line in (cluster.build / "slurm/topology.conf").read_text().splitlines():
        if line.startswith("SwitchName="):
            fields = dict(re.findall(r"(\w+)=(\S+)", line))
            rendered[fields["SwitchName"]] = (fields.get("Nodes") or fields["Switches"]).split(",")
    assert [s for s, _ in switches] == list(rendered)
    assert {s: children[s] for s in children} == {s: v for s, v in rendered.items() if s in children}
    assert sorted(nodes) == sorted(n for s, lvl in switches if lvl == 0 for n in rendered[s])
    assert sorted(nodes) == [x.name for x in cluster.gpus]


def test_a_host_cut_off_from_the_front_end_goes_down_and_comes_back(cluster):
    from teton.twin import service

    host = cluster.gpus[-1]
    seen: list[str] = []

    def cut_off() -> bool:
        """DOWN, or NOT_RESPONDING (sinfo's `*`)."""
        seen.append(cluster.states()[host.name])
        return seen[-1].startswith("down") or seen[-1].endswith("*")

    t0 = time.monotonic()
    try:
        for nic in ("fe0", "fe1"):
            service.fail(cluster.twin, f"{host.name}:{nic}")
        down = cluster.wait(f"{host.name} down", cut_off, 60, 0.5)
        assert all(s == "idle" for n, s in cluster.states().items() if n != host.name)
    finally:
        service.restore(cluster.twin)
    t1 = time.monotonic()
    back = cluster.wait(f"{host.name} idle again", cluster.all_idle, 90, 0.5)
    print(f"\n{host.name}: {seen[-1]} in Slurm {down:.1f} s after its front end failed; idle {back:.1f} s after "
          f"restore returned ({t1 - t0 - down:.1f} s); whole test {time.monotonic() - t0:.1f} s")


def _restart(cluster: Cluster, needed: dict[str, list[str]]) -> None:
    """systemd's part: each host's restarts, in the order the handlers ran."""
    for name, handlers in needed.items():
        host = cluster.by_name(name)
        for handler in handlers:
            cluster.stop(host, UNITS[handler])
            cluster.start(host, UNITS[handler])


def test_a_changed_slurm_conf_restarts_slurmctld_on_the_controller_and_slurmd_on_the_hosts(cluster):
    conf = cluster.files / "slurm.conf"
    conf.write_text(conf.read_text().replace("SlurmdTimeout=6\n", "SlurmdTimeout=7\n"))
    run = cluster.play()
    assert handlers_run(run) == {x.name: [f"Restart {x.daemon}"] for x in cluster.hosts}
    _restart(cluster, handlers_run(run))
    assert "SlurmdTimeout           = 7 sec" in cluster.client("scontrol", "show", "config")
    cluster.wait("every GPU host idle after the restarts", cluster.all_idle, 60)


def test_a_changed_munge_key_restarts_munged_before_the_slurm_daemon(cluster):
    cluster.key = secrets.token_hex(32)
    run = cluster.play()
    needed = handlers_run(run)
    assert needed == {x.name: ["Restart munged", f"Restart {x.daemon}"] for x in cluster.hosts}
    _restart(cluster, needed)
    cluster.wait("every GPU host idle with the new key", cluster.all_idle, 60)
    names = [x.name for x in cluster.gpus]
    assert sorted(cluster.client("srun", "-N", str(len(names)), "hostname").split()) == names
