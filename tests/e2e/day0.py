"""Day 0 of the lab on this machine, with the real parts: a management LAN (a bridge in its own network namespace),
Debian's Kea serving `teton ztp`'s kea-dhcp4.json from a server namespace, `teton ztp serve` beside it, and one
namespace per switch holding the switch's MAC address, where busybox's `udhcpc` asks for an address and the switch's
NOS provisioning fetches its files from the URL DHCP gave it:

- SONiC: its ZTP engine's sections in lexical order, as sonic-ztp's plugins do them: `provisioning-script` fetches
  the script and runs it (teton's frr.sh), `configdb-json` fetches `url.source` to `url.destination`;
- EOS: the bootstrap fetched and run (python3), as EOS's ZTP runs it;

each with TETON_ZTP_ROOT pointing at the switch's own folder standing for its root file system.  The switches then
run in the twin from those folders (`fetched_build`).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.helpers import ROOT

TETON = [sys.executable, "-m", "teton.cli"]
UDHCPC_SCRIPT = """#!/bin/sh
# what udhcpc learnt, kept for the test; on a lease the address goes on the interface (as a switch's DHCP client does)
case "$1" in
  bound|renew)
    ip addr flush dev "$interface"
    ip addr add "$ip/$mask" dev "$interface"
    env | grep -E '^(ip|mask|router|dns|domain|hostname|ntpsrv|bootfile|boot_file|opt114|serverid)=' \
      > "$OUT.tmp" && mv "$OUT.tmp" "$OUT"
    ;;
esac
exit 0
"""


def sh(*cmd: str, ns: str | None = None, check: bool = True, env: dict[str, str] | None = None,
       timeout: float = 60) -> subprocess.CompletedProcess[str]:
    full = ["ip", "netns", "exec", ns, *cmd] if ns else list(cmd)
    return subprocess.run(full, check=check, capture_output=True, text=True, env=env, timeout=timeout)


@dataclass
class Node:
    name: str          # the device (or a stranger)
    ns: str
    mac: str
    root: Path         # stands for its root file system
    lease: dict[str, str] = field(default_factory=dict)


@dataclass
class ManagementLan:
    """The management LAN: namespaces `<tag>-br` (the bridge), `<tag>-srv` (Kea and the ZTP server) and one per
    node."""

    tag: str
    work: Path
    network_prefix: int
    server: str                       # the ZTP server's address (the spec's ztp.server)
    nodes: dict[str, Node] = field(default_factory=dict)
    procs: list[subprocess.Popen[str]] = field(default_factory=list)

    @property
    def bridge_ns(self) -> str:
        return f"{self.tag}-br"

    @property
    def server_ns(self) -> str:
        return f"{self.tag}-srv"

    def up(self) -> None:
        self.down()
        sh("ip", "netns", "add", self.bridge_ns)
        sh("ip", "-n", self.bridge_ns, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", self.bridge_ns, "link", "set", "br0", "up")
        self._port(self.server_ns, "srv", "02:7e:70:00:00:01")
        sh("ip", "-n", self.server_ns, "addr", "add", f"{self.server}/{self.network_prefix}", "dev", "eth0")

    def _port(self, ns: str, short: str, mac: str | None, name: str = "eth0", new: bool = True) -> None:
        if new:
            sh("ip", "netns", "add", ns)
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        sh("ip", "link", "add", f"{self.tag}{short}", "netns", ns, "type", "veth", "peer", "name",
           f"{self.tag}{short}b", "netns", self.bridge_ns)
        sh("ip", "-n", ns, "link", "set", f"{self.tag}{short}", "name", name)
        if mac is not None:
            sh("ip", "-n", ns, "link", "set", name, "address", mac)
        sh("ip", "-n", ns, "link", "set", name, "up")
        sh("ip", "-n", self.bridge_ns, "link", "set", f"{self.tag}{short}b", "master", "br0")
        sh("ip", "-n", self.bridge_ns, "link", "set", f"{self.tag}{short}b", "up")

    def add_node(self, name: str, mac: str) -> Node:
        n = len(self.nodes)
        node = Node(name, f"{self.tag}-n{n}", mac, self.work / "roots" / name)
        node.root.mkdir(parents=True)
        self._port(node.ns, f"n{n}", mac)
        self.nodes[name] = node
        return node

    def attach(self, ns: str, short: str, cidr: str) -> None:
        """An existing namespace (a twin's node) on the LAN: its port `mgmt0` with address `cidr`."""
        self._port(ns, short, None, "mgmt0", new=False)
        sh("ip", "-n", ns, "addr", "add", cidr, "dev", "mgmt0")

    def start(self, cmd: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """A daemon in the server namespace, its output into `log`."""
        f = open(log, "w")      # noqa: SIM115 - kept open for the daemon's life
        p = subprocess.Popen(["ip", "netns", "exec", self.server_ns, *cmd], stdout=f, stderr=subprocess.STDOUT,
                             text=True, env=env, start_new_session=True)
        self.procs.append(p)
        return p

    def dhcp(self, node: Node, tries: int = 4) -> bool:
        """udhcpc in the node's namespace, once: True when it got a lease (its variables in node.lease)."""
        script = self.work / "udhcpc.sh"
        if not script.exists():
            script.write_text(UDHCPC_SCRIPT)
            script.chmod(0o755)
        out = self.work / f"lease-{node.name}.env"
        env = {**os.environ, "OUT": str(out)}
        r = sh("udhcpc", "-i", "eth0", "-f", "-q", "-n", "-t", str(tries), "-T", "1", "-A", "1", "-O", "114",
               "-s", str(script), ns=node.ns, check=False, env=env, timeout=60)
        if r.returncode != 0 or not out.exists():
            return False
        node.lease = dict(line.split("=", 1) for line in out.read_text().splitlines() if "=" in line)
        return True

    def fetch(self, node: Node, url: str, dest: Path) -> int:
        """curl in the node's namespace: the HTTP status (the body into `dest` when 200)."""
        r = sh("curl", "-sS", "--path-as-is", "-o", str(dest), "-w", "%{http_code}", url, ns=node.ns, check=False)
        return int(r.stdout or 0)

    def down(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
        self.procs.clear()
        listed = sh("ip", "netns", "list", check=False).stdout.split("\n")
        for line in listed:
            ns = line.split(" ", 1)[0]
            if ns.startswith(f"{self.tag}-"):
                sh("ip", "netns", "del", ns, check=False)


def wait_port(ns: str, host: str, port: int, timeout: float = 30) -> None:
    """Until something listens on host:port in namespace `ns`."""
    probe = (f"import socket,sys\ntry:\n socket.create_connection(({host!r},{port}),1).close()\nexcept OSError:\n"
             " sys.exit(1)\n")
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sh("python3", "-c", probe, ns=ns, check=False).returncode == 0:
            return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on {host}:{port} in {ns} after {timeout} s")


def sonic_ztp(lan: ManagementLan, node: Node) -> list[str]:
    """SONiC's ZTP engine for one switch, as far as teton's ztp.json asks: the URLs it fetched."""
    url = node.lease["bootfile"]
    doc_path = node.root / "host/ztp/ztp_data.json"
    doc_path.parent.mkdir(parents=True)
    assert lan.fetch(node, url, doc_path) == 200, url
    fetched = [url]
    env = {**os.environ, "TETON_ZTP_ROOT": str(node.root)}
    for name, section in sorted(json.loads(doc_path.read_text())["ztp"].items()):
        plugin = name.split("-", 1)[1]
        if plugin == "provisioning-script":
            script = node.root / "tmp/provisioning-script"
            script.parent.mkdir(parents=True, exist_ok=True)
            assert lan.fetch(node, section["plugin"]["url"], script) == 200
            r = sh("sh", str(script), ns=node.ns, check=False, env=env)
            assert r.returncode == 0, r.stderr
            fetched += [section["plugin"]["url"], section["plugin"]["url"].rsplit("/", 1)[0] + "/frr.conf"]
        elif plugin == "configdb-json":
            dest = node.root / section["url"]["destination"].lstrip("/")
            dest.parent.mkdir(parents=True, exist_ok=True)
            assert lan.fetch(node, section["url"]["source"], dest) == 200
            fetched.append(section["url"]["source"])
        else:
            raise AssertionError(f"{node.name}: section {name} the lab does not ask for")
    return fetched


def eos_ztp(lan: ManagementLan, node: Node) -> list[str]:
    """EOS's ZTP for one switch: the bootstrap fetched and run."""
    url = node.lease["bootfile"]
    script = node.root / "tmp/bootstrap"
    script.parent.mkdir(parents=True)
    assert lan.fetch(node, url, script) == 200, url
    r = sh("python3", str(script), ns=node.ns, check=False,
           env={**os.environ, "TETON_ZTP_ROOT": str(node.root)})
    assert r.returncode == 0, r.stderr
    return [url]


# where each NOS's provisioning left a build file on the switch
ON_SWITCH = {"sonic": {"config_db.json": "etc/sonic/config_db.json", "frr.conf": "etc/sonic/frr/frr.conf"},
             "eos": {"startup-config": "mnt/flash/startup-config",
                     "structured-config.json": "mnt/flash/teton/structured-config.json"}}


def fetched_build(build: Path, lan: ManagementLan, nos: dict[str, str], out: Path) -> Path:
    """The build with every switch's files replaced by what the switch fetched at day 0 (the manifest's hashes
    updated), so a twin runs those."""
    import hashlib

    shutil.copytree(build, out)
    manifest = json.loads((out / "manifest.json").read_text())
    for name, node in lan.nodes.items():
        if name not in nos:
            continue
        for file, where in ON_SWITCH[nos[name]].items():
            data = (node.root / where).read_bytes()
            rel = f"devices/{name}/{file}"
            (out / rel).write_bytes(data)
            manifest["files"][rel].update(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return out


def run_all(fn: Any, items: list[Any], workers: int = 8) -> list[Any]:
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, items))


def free_tag() -> str:
    return f"z{os.getpid() % 1000:03d}"


def teton_env(secrets: dict[str, str]) -> dict[str, str]:
    env = {**os.environ, **{f"TETON_SECRET_{k}": v for k, v in secrets.items()}}
    env["PYTHONPATH"] = str(ROOT / "infra") + os.pathsep + env.get("PYTHONPATH", "")
    return env
