"""End to end: the lab's Hammerspace group served for real on the twin.  The storage_server and storage_client roles
run through ansible-runner (each host a chroot root), then NFS-Ganesha runs inside each Hammerspace server's network
namespace, serving from an XFS file system on a loop device (a file standing in for the server's drives) mounted
where the role put the data volume.  Every GPU host, inside its own namespace, writes a 64 MiB checkpoint through the
twin's front end to the server its mount unit names (the one the design assigned) and reads it back.

What differs from production, and why (docs/hosts.md):
- the data volume is one loop device with XFS, not an md RAID over 16 drives: this machine's kernel has no md driver
  (no /proc/mdstat) and no NVMe drives, so the role's mdadm step is skipped here (it runs only on found drives);
- the client is libnfs 4.0 in user space (tests/e2e/nfs_client.py; the kernel has no NFS client module), which
  speaks NFSv4.0 only: the test's copy of the role's ganesha.conf adds minor version 0 to the production's 2;
- the test's copy puts the chroot's root before every path (Ganesha runs outside the chroot), keeps its recovery
  records in the test's folder and skips the grace period (a fresh server has no client state to reclaim).
"""

from __future__ import annotations

import hashlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.hosts import harness as h

pytestmark = pytest.mark.root

SERVERS = ("s2-r01-sp01", "s2-r01-sp02")        # the lab's Hammerspace group (s1-* is Tectonic: no NFS)
VOLUME = "/srv/hammerspace"                     # where the role mounts the data volume
SIZE = 64 << 20
CLIENT = Path(__file__).with_name("nfs_client.py")


def _ganesha_conf(rendered: str, root: Path, recovery: Path) -> str:
    """The role's ganesha.conf as this test runs it (see the module's docstring)."""
    assert "Minor_Versions = 2;" in rendered and "Protocols = 4;" in rendered
    conf = rendered.replace("Minor_Versions = 2;", "Minor_Versions = 0, 2;\n    Graceless = true;")
    conf = re.sub(r"RecoveryRoot = \S+;", f"RecoveryRoot = {recovery};", conf)
    return re.sub(r"Path = (/\S+);", lambda m: f"Path = {root}{m.group(1)};", conf)


def _group(children: dict, name: str) -> list[str]:
    """The hosts of inventory group `name`, wherever it nests."""
    for key, g in children.items():
        if key == name:
            return list((g or {}).get("hosts", {}))
        found = _group((g or {}).get("children", {}), name)
        if found:
            return found
    return []


def _listening(ns: str, port: int = 2049) -> bool:
    out = h.run("ip", "netns", "exec", ns, "ss", "-ltnH", check=False).stdout
    return any(line.split()[3].endswith(f":{port}") for line in out.splitlines() if len(line.split()) > 3)


def _client(ns: str, *args: str) -> tuple[str, int]:
    res = subprocess.run(["ip", "netns", "exec", ns, "/usr/bin/python3", str(CLIENT), *args],
                         capture_output=True, text=True, check=False, timeout=300)
    assert res.returncode == 0, (ns, args, res.stdout, res.stderr)
    digest, size = res.stdout.split()
    return digest, int(size)


def test_gpu_hosts_write_checkpoints_to_their_assigned_ganesha_servers(services_twin, tmp_path):
    build = services_twin.build
    inventory = build / "ansible/inventory.yml"
    groups = yaml.safe_load(inventory.read_text())["all"]["children"]
    gpus = sorted(groups["gpu"]["hosts"])
    assert len(gpus) == 8 and sorted(_group(groups, "storage_hammerspace")) == list(SERVERS)
    address = {s: h.variables(build / f"ansible/host_vars/{s}.json")["ansible_host"] for s in SERVERS}
    roots = tmp_path / "roots"
    for host in (*SERVERS, *gpus):
        h.chroot_exe(roots, h.make_root(roots / host), None)
    loops: list[str] = []
    mounts: list[Path] = []
    daemons: list[subprocess.Popen[bytes]] = []
    t0 = time.monotonic()
    try:
        for s in SERVERS:                                 # the data volume: XFS on a loop device, at the role's place
            image = tmp_path / f"{s}-drives.img"
            with image.open("wb") as f:
                f.truncate(1 << 30)
            h.run("mkfs.xfs", "-q", "-f", str(image))
            loops.append(h.run("losetup", "-f", "--show", str(image)).stdout.strip())
            mount = roots / s / VOLUME.lstrip("/")
            mount.mkdir(parents=True)
            h.run("mount", loops[-1], str(mount))
            mounts.append(mount)
        play = tmp_path / "storage.yml"
        play.write_text(yaml.safe_dump([
            {"name": "NFS servers", "hosts": "storage_hammerspace", "gather_facts": True, "gather_subset": ["min"],
             "roles": ["storage_server"]},
            {"name": "NFS clients", "hosts": "gpu", "gather_facts": True, "gather_subset": ["min"],
             "roles": ["storage_client"]}]))
        extra = {"storage_server_install_packages": False}     # the chroots have no apt; this machine has Ganesha
        first = h.play(play, [str(inventory)], tmp_path / "run", roots=roots, extravars=extra)
        assert first.rc == 0, first.stdout[-4000:]
        assert first.total("changed") > 0
        second = h.play(play, [str(inventory)], tmp_path / "run", roots=roots, extravars=extra)
        assert second.rc == 0 and second.total("changed") == 0, second.changed_tasks()
        t_roles = time.monotonic() - t0

        for s in SERVERS:                                 # Ganesha in the server's namespace, with the role's config
            run = tmp_path / f"ganesha-{s}"
            (run / "recovery").mkdir(parents=True)
            conf = run / "ganesha.conf"
            conf.write_text(_ganesha_conf((roots / s / "etc/ganesha/ganesha.conf").read_text(), roots / s,
                                          run / "recovery"))
            daemons.append(subprocess.Popen(
                ["ip", "netns", "exec", services_twin.netns(s), "ganesha.nfsd", "-F", "-f", str(conf),
                 "-L", str(run / "ganesha.log"), "-p", str(run / "ganesha.pid")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 30
        while not all(_listening(services_twin.netns(s)) for s in SERVERS):
            assert time.monotonic() < deadline, "ganesha.nfsd did not listen on 2049"
            assert all(d.poll() is None for d in daemons), "ganesha.nfsd exited"
            time.sleep(0.5)

        t1 = time.monotonic()
        served: dict[str, list[str]] = {}
        digests: dict[str, str] = {}
        for host in gpus:
            unit = (roots / host / "etc/systemd/system/mnt-checkpoints.mount").read_text()
            what = next(line for line in unit.splitlines() if line.startswith("What="))
            server_addr, export = what.removeprefix("What=").split(":", 1)
            server = next(s for s, a in address.items() if a == server_addr)
            mine = h.variables(build / f"ansible/host_vars/{host}.json")["teton_storage_mounts"]["nfs"]
            assert {m["server"] for m in mine} == {server_addr}            # the design's choice, as the unit says
            served.setdefault(server, []).append(host)
            source = tmp_path / f"{host}.ckpt"
            data = os.urandom(SIZE)
            source.write_bytes(data)
            digests[host] = hashlib.sha256(data).hexdigest()
            ns = services_twin.netns(host)
            assert _client(ns, "write", server_addr, export, f"/{host}.ckpt", str(source)) == (digests[host], SIZE)
            assert _client(ns, "read", server_addr, export, f"/{host}.ckpt") == (digests[host], SIZE)
            source.unlink()
            # on the data volume (the loop device's XFS), not the server's root file system
            stored = mounts[SERVERS.index(server)] / "checkpoints" / f"{host}.ckpt"
            assert stored.stat().st_size == SIZE and stored.stat().st_dev == mounts[SERVERS.index(server)].stat().st_dev
            assert stored.stat().st_dev != (roots / server).stat().st_dev
            assert hashlib.sha256(stored.read_bytes()).hexdigest() == digests[host]
        assert sorted(served) == list(SERVERS), served                     # every server serves some host
        for s, hosts in served.items():                                    # and hosts of both zones
            assert {x[:3] for x in hosts} == {"z01", "z02"}, (s, hosts)
        # a checkpoint written from zone 1 is read from zone 2, on the server they share
        for s, hosts in served.items():
            writer = next(x for x in hosts if x.startswith("z01"))
            reader = next(x for x in hosts if x.startswith("z02"))
            assert _client(services_twin.netns(reader), "read", address[s], "/checkpoints",
                           f"/{writer}.ckpt") == (digests[writer], SIZE)
        print(f"\nstorage on the twin: roles (two runs) {t_roles:.1f} s, 8 x 64 MiB written and read back "
              f"{time.monotonic() - t1:.1f} s; {served}", file=sys.stderr)
    finally:
        for d in daemons:
            d.send_signal(signal.SIGTERM)
        for d in daemons:
            try:
                d.wait(timeout=15)
            except subprocess.TimeoutExpired:
                d.kill()
                d.wait()
        for m in reversed(mounts):
            h.run("umount", str(m), check=False)
        for loop in loops:      # detached now, or (autoclear) once no mount namespace made meanwhile holds a copy
            h.run("losetup", "-d", loop, check=False)
