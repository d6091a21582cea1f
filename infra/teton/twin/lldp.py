"""LLDP in the twin: Debian's lldpd in every namespace, announcing what the device's own files configure, and what
each device sees collected the way `teton verify cabling` reads it.

Each node with an LLDP announcement in the plan (`TwinNode.lldp_system`, `lldp_ports`: read back from its files by
its target, `teton.targets.base.LldpView`) gets one lldpd, in the foreground of its namespace, with its own control
socket and configuration in the node's folder: the system name, a frame a second (`tx-interval 1`, so a recabling
shows within two seconds), and per port the id its NOS announces (`portidsubtype local <id>`, as SONiC's lldpmgrd
writes it) where that differs from the kernel's interface name.  lldpd listens only on the node's linked interfaces.
`teton twin down` stops them with everything else running in the twin's namespaces.

`collect` asks every lldpd (`lldpcli -f json show neighbors`), turns the kernel's interface names back into the
device's port names (an EOS `Ethernet1/1` is a hashed kernel name here) and waits until what is seen is what the
twin's cables, as they lie now, make visible: `swap` (`teton.twin.runtime.Twin.swap`) or a link down show at once.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from teton.targets.cabling.lldp import LldpError, parse
from teton.twin.plan import TwinNode, linux_ifname
from teton.twin.processes import run_all
from teton.twin.runtime import Twin, TwinError

TX_INTERVAL_S = 1
SETTLE_TIMEOUT_S = 30.0
PRIVSEP_DIR = Path("/run/lldpd")    # lldpd's unprivileged half chroots here (Debian's package makes it at boot)

Seen = dict[str, dict[str, frozenset[tuple[str, str]]]]    # node -> port -> {(system, port id)} seen there


def _tools() -> tuple[str, str]:
    lldpd, lldpcli = shutil.which("lldpd") or "/usr/sbin/lldpd", shutil.which("lldpcli") or "/usr/sbin/lldpcli"
    missing = [t for t in (lldpd, lldpcli) if not Path(t).exists()]
    if missing:
        raise TwinError(f"{', '.join(missing)} not found: the twin's LLDP needs Debian's lldpd (apt install lldpd; "
                        "scripts/setup installs it)")
    return lldpd, lldpcli


def speakers(twin: Twin) -> list[TwinNode]:
    """The nodes that announce themselves over LLDP."""
    return [n for n in twin.plan.nodes if n.lldp_system]


def lldpd_conf(node: TwinNode) -> str:
    """The lldpcli commands lldpd runs at start for `node` (values checked against lldpd's grammar by the plan's
    maker, `teton.twin.artifacts`)."""
    lines = [f"configure system hostname {node.lldp_system}", f"configure lldp tx-interval {TX_INTERVAL_S}",
             "configure lldp portidsubtype ifname"]
    lines += [f"configure ports {linux_ifname(port)} lldp portidsubtype local {pid}"
              for port, pid in node.lldp_ports if pid != linux_ifname(port)]
    return "\n".join(lines) + "\n"


def _dir(twin: Twin) -> Path:
    """lldpd's files, beside the node folders (those are FRR's, closed to lldpd's unprivileged user)."""
    return twin.state_dir / "lldp"


def _socket(twin: Twin, node: str) -> Path:
    return _dir(twin) / f"{twin.netns(node)}.socket"


def _linked(twin: Twin) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for link in twin.plan.links:
        out.setdefault(link.a_node, []).append(link.a_if)
        out.setdefault(link.b_node, []).append(link.b_if)
    return out


def start(twin: Twin) -> list[str]:
    """Start lldpd on every speaker that has none answering; the nodes started, sorted."""
    lldpd, lldpcli = _tools()
    PRIVSEP_DIR.mkdir(mode=0o755, exist_ok=True)
    linked = _linked(twin)
    _dir(twin).mkdir(mode=0o755, exist_ok=True)
    started = []
    for node in speakers(twin):
        sock, base = _socket(twin, node.name), _dir(twin) / twin.netns(node.name)
        ports = [linux_ifname(p) for p in linked.get(node.name, [])]
        if not ports or _answers(lldpcli, sock):
            continue
        sock.unlink(missing_ok=True)
        conf = base.with_suffix(".conf")
        conf.write_text(lldpd_conf(node))
        with base.with_suffix(".log").open("ab") as out:
            proc = subprocess.Popen(
                ["ip", "netns", "exec", twin.netns(node.name), lldpd, "-d", "-u", str(sock), "-O", str(conf),
                 "-I", ",".join(sorted(ports)), "-L", lldpcli],
                stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        base.with_suffix(".pid").write_text(f"{proc.pid}\n")
        started.append(node.name)
    deadline = time.monotonic() + 20 + 0.05 * len(started)
    pending = list(started)
    while pending := [n for n in pending if not _answers(lldpcli, _socket(twin, n))]:
        if time.monotonic() > deadline:
            log = (_dir(twin) / twin.netns(pending[0])).with_suffix(".log")
            tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
            raise TwinError(f"lldpd of {pending[0]} does not answer on {_socket(twin, pending[0])} "
                            f"({len(pending)} such); its log ends: {' | '.join(tail) or '(empty)'}")
        time.sleep(0.1)
    return sorted(started)


def _answers(lldpcli: str, sock: Path) -> bool:
    if not sock.exists():
        return False
    res = subprocess.run([lldpcli, "-u", str(sock), "show", "running-configuration"], check=False,
                         capture_output=True, timeout=10)
    return res.returncode == 0


def _renamed(data: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    """lldpctl's JSON with its interface names (kernel names) turned back into the device's port names."""
    lldp = data.get("lldp")
    if not isinstance(lldp, dict) or "interface" not in lldp:
        return data
    items = lldp["interface"]
    entries = items if isinstance(items, list) else [items]
    renamed = [{names.get(k, k): v for k, v in e.items()} if isinstance(e, dict) else e for e in entries]
    return {**data, "lldp": {**lldp, "interface": renamed if isinstance(items, list) else renamed[0]}}


def _query(twin: Twin) -> dict[str, dict[str, Any]]:
    """What every speaker's lldpd sees, as `lldpctl -f json` prints it, with the device's port names."""
    _, lldpcli = _tools()
    nodes = [n for n in speakers(twin) if _socket(twin, n.name).exists()]
    results = run_all([[lldpcli, "-u", str(_socket(twin, n.name)), "-f", "json", "show", "neighbors"] for n in nodes])
    out = {}
    for node, res in zip(nodes, results, strict=True):
        if res.returncode:
            raise TwinError(f"lldpcli of {node.name} failed: {res.stderr.strip()[-500:]}")
        names = {linux_ifname(i.name): i.name for i in node.interfaces}
        out[node.name] = _renamed(json.loads(res.stdout or "{}"), names)
    return out


def seen(raw: dict[str, dict[str, Any]]) -> Seen:
    out: Seen = {}
    for node, data in raw.items():
        try:
            ports: dict[str, set[tuple[str, str]]] = {}
            for s in parse(json.dumps(data), node):
                ports.setdefault(s.port, set()).add((s.system, s.port_id))
            out[node] = {p: frozenset(x) for p, x in ports.items()}
        except LldpError as exc:
            raise TwinError(f"lldpd's own JSON is not as expected: {exc}") from None
    return out


def up_ends(twin: Twin) -> set[tuple[str, str]]:
    """(node, interface) of every linked interface the kernel has up with its peer up (operstate UP)."""
    nodes = sorted(_linked(twin))
    results = run_all([["ip", "-j", "-n", twin.netns(n), "link", "show"] for n in nodes])
    plan = {n.name: n for n in twin.plan.nodes}
    out = set()
    for node, res in zip(nodes, results, strict=True):
        if res.returncode:
            raise TwinError(f"ip link show in {twin.netns(node)} failed: {res.stderr.strip()}")
        kernel = {linux_ifname(i.name): i.name for i in plan[node].interfaces}
        out |= {(node, kernel[x["ifname"]]) for x in json.loads(res.stdout or "[]")
                if x.get("operstate") == "UP" and x.get("ifname") in kernel}
    return out


def cabled(twin: Twin) -> Seen:
    """What each speaker should see over the twin's cables as they lie now (swapped or down ones included)."""
    nodes = {n.name: n for n in twin.plan.nodes}
    up = up_ends(twin)
    out: Seen = {n.name: {} for n in speakers(twin)}
    for link in twin.plan.links:
        if (link.a_node, link.a_if) not in up or (link.b_node, link.b_if) not in up:
            continue
        for (near, near_if), (far, far_if) in (((link.a_node, link.a_if), (link.b_node, link.b_if)),
                                               ((link.b_node, link.b_if), (link.a_node, link.a_if))):
            peer = nodes[far]
            if near in out and peer.lldp_system:
                out[near][near_if] = frozenset({(peer.lldp_system, dict(peer.lldp_ports).get(far_if, far_if))})
    return out


def collect(twin: Twin, timeout: float = SETTLE_TIMEOUT_S) -> tuple[dict[str, dict[str, Any]], float, bool]:
    """(what every speaker sees, seconds until it matched the cables twice in a row, whether it did within
    `timeout`).  The cables' state is read again each time (a link just laid comes up meanwhile); a neighbour a
    port saw before a recabling stays until its time to live (4 s) runs out, and counts as not settled."""
    t0 = time.monotonic()
    matched = 0
    while True:
        want = cabled(twin)
        raw = _query(twin)
        matched = matched + 1 if seen(raw) == want else 0
        if matched == 2:
            return raw, time.monotonic() - t0, True
        if time.monotonic() - t0 > timeout:
            return raw, time.monotonic() - t0, False
        time.sleep(0.5)


def write(raw: dict[str, dict[str, Any]], folder: Path) -> list[Path]:
    """One `<device>.json` per device into `folder` (each written to a temporary file and renamed)."""
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for device, data in sorted(raw.items()):
        path = folder / f"{device}.json"
        tmp = folder / f".{device}.json.tmp"
        tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
        tmp.replace(path)
        out.append(path)
    return out
