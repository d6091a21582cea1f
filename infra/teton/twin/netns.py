"""Network namespaces and interfaces of a fabric twin, made with ``ip -batch`` (one process for many changes).

`make_namespaces`: every namespace with its sysctls and every veth pair, in one batch in the root namespace.
`configure_interfaces`: per namespace (all namespaces at once) loopback, dummies for unlinked interfaces, MTUs,
addresses, static routes and per-source rules.  `set_links` sets interfaces up or down, `delete_namespaces` removes
namespaces.  Interface names inside a namespace are kernel names: `teton.twin.plan.linux_ifname` of the plan's.
Functions that change something return what failed ([] when all went well) and `teton.twin.runtime` raises; the
kernel queries (`kernel_routes`, `kernel_nexthops`) raise `IpError`.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from teton.findings import TetonError
from teton.twin.plan import TwinLink, TwinNode, TwinPlan, linux_ifname
from teton.twin.processes import run, run_all

NETNS_DIR = Path("/run/netns")
SOURCE_TABLE = 100  # first routing table used for source routes (one per source address)

_NETNS_SYSCTLS = (
    "net.ipv6.conf.all.keep_addr_on_down=1",  # else a link flap loses the IPv6 addresses for good
    "net.ipv6.conf.default.keep_addr_on_down=1",
    "net.ipv6.conf.all.accept_dad=0",  # no tentative addresses: sessions can start at once
    "net.ipv6.conf.default.accept_dad=0",
    "net.ipv4.conf.all.ignore_routes_with_linkdown=1",
    "net.ipv4.conf.default.ignore_routes_with_linkdown=1",
    "net.ipv6.conf.all.ignore_routes_with_linkdown=1",
    "net.ipv6.conf.default.ignore_routes_with_linkdown=1",
)
_SWITCH_SYSCTLS = ("net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1")


class IpError(RuntimeError, TetonError):
    """An ``ip`` query failed."""


def list_netns() -> list[str]:
    """Names of all named network namespaces of the machine."""
    try:
        return sorted(os.listdir(NETNS_DIR))
    except FileNotFoundError:
        return []


def make_namespaces(plan: TwinPlan, ns: dict[str, str], batch_file: Path) -> list[str]:
    """Namespaces (node -> name in `ns`) with their sysctls, and the veth pairs of all links; one root ``ip -batch``,
    kept in `batch_file`."""
    lines = [f"netns add {ns[n.name]}" for n in plan.nodes]
    for node in plan.nodes:
        sysctls = _NETNS_SYSCTLS + (_SWITCH_SYSCTLS if node.kind == "switch" else ())
        lines.append(f"netns exec {ns[node.name]} sysctl -qw {' '.join(sysctls)}")
    for link in plan.links:
        lines.append(
            f"link add name {linux_ifname(link.a_if)} mtu {link.mtu} netns {ns[link.a_node]} type veth "
            f"peer name {linux_ifname(link.b_if)} mtu {link.mtu} netns {ns[link.b_node]}"
        )
    batch = "\n".join(lines) + "\n"
    batch_file.write_text(batch)
    res = run(["ip", "-batch", "-"], input=batch, timeout=600)
    return [res.stderr.strip()[-2000:]] if res.returncode != 0 else []


def configure_interfaces(plan: TwinPlan, ns: dict[str, str], node_dir: Callable[[str], Path]) -> list[str]:
    """Interfaces, addresses, routes and source rules of every node, one ``ip -batch`` per namespace and stage; the
    batches are appended to ``ip.batch`` in each node's directory."""
    linked = {(link.a_node, link.a_if) for link in plan.links} | {(link.b_node, link.b_if) for link in plan.links}
    node_batches: list[tuple[str, str]] = []
    route_batches: list[tuple[str, str]] = []
    v6_batches: list[tuple[str, str]] = []  # `ip rule` takes IPv6 only in an `ip -6` batch
    for node in plan.nodes:
        lines = ["link set dev lo up"]
        for itf in node.interfaces:
            dev = linux_ifname(itf.name)
            if itf.name != "lo" and (node.name, itf.name) not in linked:
                lines.append(f"link add name {dev} mtu {itf.mtu} type dummy")
            lines.append(f"link set dev {dev} mtu {itf.mtu}")
            for addr in itf.addresses:
                v6 = ipaddress.ip_interface(addr).version == 6
                lines.append(f"addr add {addr} dev {dev}" + (" nodad" if v6 else ""))
            lines.append(f"link set dev {dev} up")
        node_batches.append((node.name, "\n".join(lines) + "\n"))
        if node.routes or node.source_routes:
            route_batches.append((node.name, route_lines(node)))
        if any(":" in src for src, _, _ in node.source_routes):
            v6_batches.append((node.name, source_rules(node, 6)))
    for stage, family in ((node_batches, []), (route_batches, []), (v6_batches, ["-6"])):
        for name, batch in stage:
            with (node_dir(name) / "ip.batch").open("a") as fh:
                fh.write(batch)
        results = run_all([["ip", "-n", ns[name], *family, "-batch", "-"] for name, _ in stage], [b for _, b in stage])
        bad = [f"{name}: {res.stderr.strip()}" for (name, _), res in zip(stage, results, strict=True) if res.returncode]
        if bad:
            return bad
    return []


def recable(old: Iterable[TwinLink], new: Iterable[TwinLink], nodes: dict[str, TwinNode], ns: dict[str, str]
            ) -> list[str]:
    """Pull the cables `old` (their veth pairs deleted) and lay `new` between the same interfaces: each new pair
    gets its ends' MTU and addresses back and is set up; then, once both ends of every new pair are up (a route via a
    gateway on a link without carrier is refused), a server's static routes over them are replaced (its source rules
    name no interface and stay)."""
    new = list(new)
    ends = [(link.a_node, link.a_if) for link in old]
    dels = [(ns[n], f"link del dev {linux_ifname(i)}\n") for n, i in ends]
    results = run_all([["ip", "-n", n, "-batch", "-"] for n, _ in dels], [b for _, b in dels])
    if bad := [f"{n}: {r.stderr.strip()}" for (n, _), r in zip(dels, results, strict=True) if r.returncode]:
        return bad
    batch = "".join(f"link add name {linux_ifname(link.a_if)} mtu {link.mtu} netns {ns[link.a_node]} type veth peer "
                    f"name {linux_ifname(link.b_if)} mtu {link.mtu} netns {ns[link.b_node]}\n" for link in new)
    if (res := run(["ip", "-batch", "-"], input=batch)).returncode:
        return [res.stderr.strip()[-2000:]]
    touched: dict[str, list[str]] = {}
    for link in new:
        touched.setdefault(link.a_node, []).append(link.a_if)
        touched.setdefault(link.b_node, []).append(link.b_if)
    batches = []
    for name, ports in sorted(touched.items()):
        lines = []
        for itf in (i for i in nodes[name].interfaces if i.name in ports):
            dev = linux_ifname(itf.name)
            lines += [f"addr add {a} dev {dev}" + (" nodad" if ":" in a else "") for a in itf.addresses]
            lines.append(f"link set dev {dev} up")
        batches.append((ns[name], "\n".join(lines) + "\n"))
    routed = [(ns[name], route_lines(nodes[name], rules=False)) for name in sorted(touched)
              if nodes[name].routes or nodes[name].source_routes]
    for step in (batches, routed):
        results = run_all([["ip", "-n", n, "-batch", "-"] for n, _ in step], [b for _, b in step])
        if bad := [f"{n}: {r.stderr.strip()}" for (n, _), r in zip(step, results, strict=True) if r.returncode]:
            return bad
    return []


def route_lines(node: TwinNode, rules: bool = True) -> str:
    """``ip -batch`` lines for a node's static routes (ECMP as multipath), its source tables and IPv4 rules."""
    groups: dict[str, list[tuple[str, str]]] = {}
    for prefix, via, dev in node.routes:
        if prefix == "default":
            prefix = "::/0" if ipaddress.ip_address(via).version == 6 else "0.0.0.0/0"
        groups.setdefault(prefix, []).append((via, linux_ifname(dev)))
    lines = []
    for prefix, hops in groups.items():
        if len(hops) == 1:
            lines.append(f"route replace {prefix} via {hops[0][0]} dev {hops[0][1]}")
        else:
            lines.append(f"route replace {prefix} " + " ".join(f"nexthop via {v} dev {d}" for v, d in hops))
    for n, (_, via, dev) in enumerate(node.source_routes):
        default = "::/0" if ":" in via else "0.0.0.0/0"
        lines.append(f"route replace {default} via {via} dev {linux_ifname(dev)} table {SOURCE_TABLE + n}")
    return "\n".join(lines) + "\n" + (source_rules(node, 4) if rules else "")


def source_rules(node: TwinNode, family: int) -> str:
    """`ip rule`s sending traffic from each source address to its own table (one table per NIC)."""
    return "".join(
        f"rule add from {src} table {SOURCE_TABLE + n}\n"
        for n, (src, _, _) in enumerate(node.source_routes)
        if (":" in src) == (family == 6)
    )


def set_links(ends: Iterable[tuple[str, str]], up: bool) -> list[str]:
    """``ip link set up/down`` on (namespace, plan interface) pairs: one ``ip -batch`` per namespace, all at once."""
    state = "up" if up else "down"
    per_ns: dict[str, list[str]] = {}
    for ns, itf in ends:
        per_ns.setdefault(ns, []).append(f"link set dev {linux_ifname(itf)} {state}\n")
    names = sorted(per_ns)
    results = run_all([["ip", "-n", ns, "-batch", "-"] for ns in names], ["".join(per_ns[ns]) for ns in names])
    return [f"{ns}: {r.stderr.strip()}" for ns, r in zip(names, results, strict=True) if r.returncode]


def netns_pids(ns: str) -> list[int]:
    """Processes running in a namespace."""
    out = subprocess.run(["ip", "netns", "pids", ns], check=False, capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def delete_namespaces(names: list[str]) -> str:
    """Delete namespaces in one ``ip -force -batch``; what ip said on stderr (see `list_netns` for what is left)."""
    if not names:
        return ""
    batch = "".join(f"netns del {ns}\n" for ns in names)
    res = subprocess.run(["ip", "-force", "-batch", "-"], input=batch, check=False, capture_output=True, text=True)
    return res.stderr.strip()


def is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def ping(ns: str, src: str, dst: str, count: int = 1, timeout: float = 1.0) -> bool:
    """Ping `dst` inside `ns` from source address or plan interface `src` ("": any); True if all replies came."""
    if src and not is_address(src):
        src = linux_ifname(src)
    cmd = ["ip", "netns", "exec", ns, "ping", "-n", "-q", "-c", str(count), "-W", f"{timeout:g}"]
    if count > 1:
        cmd += ["-i", "0.05"]
    if src:
        cmd += ["-I", src]
    cmd.append(dst)
    res = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=count * 0.05 + timeout + 10)
    m = re.search(r"(\d+) (?:packets )?received", res.stdout)
    return res.returncode == 0 and m is not None and int(m.group(1)) == count


def _ip_json(ns: str, *args: str) -> list[dict[str, Any]]:
    res = run(cmd := ["ip", "-n", ns, *args])
    if res.returncode != 0:
        raise IpError(f"{' '.join(cmd)} failed (rc {res.returncode}): {(res.stderr or res.stdout).strip()}")
    return json.loads(res.stdout) if res.stdout.strip() else []


def kernel_routes(ns: str, prefix: str) -> list[dict[str, Any]]:
    """The kernel's routes for exactly `prefix` in `ns` (``ip -j route show PREFIX``)."""
    family = "-6" if ipaddress.ip_network(prefix, strict=False).version == 6 else "-4"
    return _ip_json(ns, family, "-j", "route", "show", prefix)


def kernel_nexthops(ns: str, prefix: str) -> int:
    """Number of next hops the kernel in `ns` has for exactly `prefix` (0: no route), nexthop groups included."""
    count = 0
    for route in kernel_routes(ns, prefix):
        if route.get("type", "unicast") != "unicast":
            continue
        if route.get("nexthops"):
            count += len(route["nexthops"])
        elif "nhid" in route and "gateway" not in route:
            nhs = _ip_json(ns, "-j", "nexthop", "show", "id", str(route["nhid"]))
            count += len((nhs[0] if nhs else {}).get("group", [])) or 1
        elif route.get("gateway") or route.get("dev"):
            count += 1
    return count
