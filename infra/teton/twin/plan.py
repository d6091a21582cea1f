"""Plain plan of a fabric twin: nodes, their interfaces and links, nothing about teton's fabric model.

The runtime (`teton.twin.runtime`) makes a plan real on one machine: one network namespace per node, veth pairs for
links, zebra+bgpd per switch.  This module holds the dataclasses, a structural check and the deterministic naming of
kernel objects (namespace and interface names), which callers need when they write a switch's ``frr.conf``: interface
names inside ``frr_conf`` must be the *kernel* names, i.e. ``linux_ifname(name)``.
"""

from __future__ import annotations

import hashlib
import ipaddress
import re
from dataclasses import asdict, dataclass
from typing import Any

from teton.findings import TetonError

NETNS_PREFIX = "tt-"
"""Every namespace a twin makes is called ``tt-<plan name>-<short node name>``."""

KINDS = ("switch", "host")

_PLAN_NAME = re.compile(r"[A-Za-z0-9_]{1,16}")
_SAFE_NODE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_NODE_SHORT_MAX = 24
_IFNAME_MAX = 15  # IFNAMSIZ (16) minus the NUL


class PlanError(ValueError, TetonError):
    """The plan is inconsistent; the message lists every problem found."""


@dataclass(frozen=True)
class TwinInterface:
    name: str  # as the plan calls it; the kernel name is linux_ifname(name)
    addresses: tuple[str, ...]  # "10.0.0.0/31", "fd00::/127"
    mtu: int


@dataclass(frozen=True)
class TwinNode:
    name: str  # device name, any length
    kind: str  # "switch" (runs zebra+bgpd) or "host" (no daemons)
    interfaces: tuple[TwinInterface, ...]  # loopback addresses on an interface named "lo"
    frr_conf: str | None  # integrated frr.conf for a switch; None for a host
    routes: tuple[tuple[str, str, str], ...] = ()  # static kernel routes: (prefix or "default", via, dev)
    # source routing (a host with one NIC per rail): traffic from `source` leaves by `dev` towards `via`
    source_routes: tuple[tuple[str, str, str], ...] = ()  # (source address, via, dev)
    # what it announces over LLDP, as its files configure it (`teton twin lldp`): its system name and, per plan
    # interface, the port id ("" and (): it announces nothing)
    lldp_system: str = ""
    lldp_ports: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class TwinLink:
    a_node: str
    a_if: str
    b_node: str
    b_if: str
    mtu: int


@dataclass(frozen=True)
class TwinPlan:
    name: str  # short twin id: letters, digits, '_' (no '-': "tt-<name>-" must identify one twin)
    nodes: tuple[TwinNode, ...]
    links: tuple[TwinLink, ...]


def _digest(text: str, n: int) -> str:
    return hashlib.sha1(text.encode()).hexdigest()[:n]


def linux_ifname(name: str) -> str:
    """Kernel interface name for a plan interface name (deterministic, at most 15 characters).

    A name that is already a valid Linux name is kept; otherwise ("Ethernet1/1", "a-very-long-port-name") it
    becomes its first characters with '/', ':' and blanks turned into '-', plus '-' and 4 hex digits of a hash.
    """
    if name == "lo":
        return name
    if 0 < len(name) <= _IFNAME_MAX and not re.search(r"[/:\s%]", name) and name not in (".", ".."):
        return name
    clean = re.sub(r"[^A-Za-z0-9._-]", "-", name)[:10] or "if"
    return f"{clean}-{_digest(name, 4)}"


def node_short(name: str) -> str:
    """Short, file-system and netns safe name of a node (deterministic, at most 24 characters)."""
    if len(name) <= _NODE_SHORT_MAX and _SAFE_NODE.fullmatch(name):
        return name
    clean = re.sub(r"[^A-Za-z0-9._-]", "-", name)[:15].strip("-.") or "n"
    return f"{clean}-{_digest(name, 8)}"


def netns_name(plan_name: str, node_name: str) -> str:
    """Namespace of a node: ``tt-<plan>-<node_short(node)>``."""
    return f"{NETNS_PREFIX}{plan_name}-{node_short(node_name)}"


def _check_address(text: str) -> str | None:
    try:
        ipaddress.ip_interface(text)
    except ValueError:
        return f"bad address {text!r}"
    if "/" not in text:
        return f"address {text!r} needs a prefix length"
    return None


def validate_plan(plan: TwinPlan) -> None:
    """Raise PlanError listing every structural problem of `plan` (names, kinds, links, addresses)."""
    problems: list[str] = []
    if not _PLAN_NAME.fullmatch(plan.name):
        problems.append(f"plan name {plan.name!r} must be 1-16 letters, digits or '_'")
    nodes: dict[str, TwinNode] = {}
    shorts: dict[str, str] = {}
    for node in plan.nodes:
        if node.name in nodes:
            problems.append(f"node {node.name!r} appears twice")
        nodes[node.name] = node
        short = node_short(node.name)
        if short in shorts and shorts[short] != node.name:
            problems.append(f"nodes {shorts[short]!r} and {node.name!r} get the same short name {short!r}")
        shorts[short] = node.name
        if node.kind not in KINDS:
            problems.append(f"node {node.name!r}: kind {node.kind!r} is not one of {KINDS}")
        if node.kind == "switch" and not node.frr_conf:
            problems.append(f"switch {node.name!r} has no frr_conf")
        if node.kind == "host" and node.frr_conf is not None:
            problems.append(f"host {node.name!r} must not have an frr_conf")
        kernel: dict[str, str] = {}
        for itf in node.interfaces:
            k = linux_ifname(itf.name)
            if k in kernel:
                problems.append(f"node {node.name!r}: interfaces {kernel[k]!r} and {itf.name!r} map to {k!r}")
            kernel[k] = itf.name
            if not 68 <= itf.mtu <= 65536:
                problems.append(f"node {node.name!r} interface {itf.name!r}: mtu {itf.mtu} out of range")
            for addr in itf.addresses:
                if (err := _check_address(addr)) is not None:
                    problems.append(f"node {node.name!r} interface {itf.name!r}: {err}")
        names = {itf.name for itf in node.interfaces}
        for route in node.routes:
            if len(route) != 3:
                problems.append(f"node {node.name!r}: route {route!r} is not (prefix, via, dev)")
                continue
            prefix, via, dev = route
            if dev not in names:
                problems.append(f"node {node.name!r}: route {prefix} uses unknown interface {dev!r}")
            try:
                fam_via = ipaddress.ip_address(via).version
                if prefix != "default" and ipaddress.ip_network(prefix, strict=False).version != fam_via:
                    problems.append(f"node {node.name!r}: route {prefix} via {via} mixes address families")
            except ValueError as exc:
                problems.append(f"node {node.name!r}: route {route!r}: {exc}")
    used: dict[tuple[str, str], int] = {}
    for i, link in enumerate(plan.links):
        if not 68 <= link.mtu <= 65536:
            problems.append(f"link {i}: mtu {link.mtu} out of range")
        for node_name, if_name in ((link.a_node, link.a_if), (link.b_node, link.b_if)):
            end = nodes.get(node_name)
            if end is None:
                problems.append(f"link {i}: unknown node {node_name!r}")
                continue
            if if_name == "lo" or if_name not in {itf.name for itf in end.interfaces}:
                problems.append(f"link {i}: node {node_name!r} has no interface {if_name!r} (declare it)")
            if (node_name, if_name) in used:
                problems.append(f"link {i}: {node_name}:{if_name} is already used by link {used[(node_name, if_name)]}")
            used[(node_name, if_name)] = i
    if problems:
        raise PlanError("invalid twin plan:\n  " + "\n  ".join(problems))


def plan_to_dict(plan: TwinPlan) -> dict[str, Any]:
    """JSON-ready form of a plan (inverse: plan_from_dict)."""
    return asdict(plan)


def plan_from_dict(data: dict[str, Any]) -> TwinPlan:
    nodes = tuple(
        TwinNode(
            name=n["name"],
            kind=n["kind"],
            interfaces=tuple(
                TwinInterface(name=i["name"], addresses=tuple(i["addresses"]), mtu=int(i["mtu"]))
                for i in n["interfaces"]
            ),
            frr_conf=n.get("frr_conf"),
            routes=tuple(tuple(r) for r in n.get("routes", ())),
            source_routes=tuple(tuple(r) for r in n.get("source_routes", ())),
            lldp_system=str(n.get("lldp_system", "")),
            lldp_ports=tuple((str(p), str(i)) for p, i in n.get("lldp_ports", ())),
        )
        for n in data["nodes"]
    )
    links = tuple(TwinLink(**link) for link in data["links"])
    return TwinPlan(name=data["name"], nodes=nodes, links=links)
