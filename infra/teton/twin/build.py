"""A rendered build folder -> a TwinPlan of the backend fabric (switches, GPU hosts, links per the cabling plan).

Deploy reads artifacts, never the spec: SONiC switches get their `frr.conf` unchanged and their addresses from
`config_db.json`; EOS switches get the FRR equivalent of `structured-config.json` (see `teton.twin.eos_frr`); hosts
get their NICs from `hosts/backend.json`, each NIC source-routed to its own rack switch port (one rail per NIC); links
follow `cabling.csv`, with the MTU both ends are configured with.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from teton.twin.eos_frr import frr_conf_for_eos
from teton.twin.plan import TwinInterface, TwinLink, TwinNode, TwinPlan

BACKEND_LINKS = ("host-rtsw", "rtsw-ctsw", "ctsw-atsw")


@dataclass
class TwinSource:
    """How each switch of the twin got its routing config: 'frr.conf (SONiC, unchanged)' or 'FRR equivalent of EOS'."""

    plan: TwinPlan
    origin: dict[str, str] = field(default_factory=dict)
    neighbors: dict[str, int] = field(default_factory=dict)   # expected BGP sessions per switch


def plan_name(cluster: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", cluster)[:16]


def _sonic(build: Path, name: str) -> tuple[TwinNode, int]:
    db = json.loads((build / "devices" / name / "config_db.json").read_text())
    frr = (build / "devices" / name / "frr.conf").read_text()
    addrs: dict[str, list[str]] = {}
    for key in db.get("INTERFACE", {}):
        if "|" in key:
            port, cidr = key.split("|", 1)
            addrs.setdefault(port, []).append(cidr)
    lo = tuple(k.split("|", 1)[1] for k in db.get("LOOPBACK_INTERFACE", {}) if "|" in k)
    interfaces = [TwinInterface("lo", lo, 65536)] + [
        TwinInterface(port, tuple(cidrs), int(db["PORT"][port]["mtu"])) for port, cidrs in sorted(addrs.items())]
    sessions = sum(1 for line in frr.splitlines() if re.match(r"^ neighbor \S+ remote-as ", line))
    return TwinNode(name, "switch", tuple(interfaces), frr), sessions


def _eos(build: Path, name: str) -> tuple[TwinNode, int]:
    cfg = json.loads((build / "devices" / name / "structured-config.json").read_text())
    lo = next((x for x in cfg.get("loopback_interfaces", []) if x["name"] == "Loopback0"), {})
    lo_addrs = tuple([lo["ip_address"]] if lo.get("ip_address") else []) + tuple(lo.get("ipv6_addresses", []))
    interfaces = [TwinInterface("lo", lo_addrs, 65536)]
    for e in cfg.get("ethernet_interfaces", []):
        cidrs = tuple(([e["ip_address"]] if e.get("ip_address") else []) + list(e.get("ipv6_addresses", [])))
        interfaces.append(TwinInterface(e["name"], cidrs, int(e.get("mtu", 1500))))
    return (TwinNode(name, "switch", tuple(interfaces), frr_conf_for_eos(cfg)),
            len(cfg.get("router_bgp", {}).get("neighbors", [])))


def _hosts(build: Path, wanted: set[str]) -> list[TwinNode]:
    data = json.loads((build / "hosts" / "backend.json").read_text())
    by_host: dict[str, list[dict]] = {}
    for nic in data["nics"]:
        if nic["host"] in wanted:
            by_host.setdefault(nic["host"], []).append(nic)
    nodes = []
    for host, nics in sorted(by_host.items()):
        interfaces = tuple(TwinInterface(n["nic"], tuple(a for a in (n["ipv4"], n["ipv6"]) if a), n["mtu"])
                           for n in nics)
        first = nics[0]
        routes = tuple(r for r in (("default", first["gateway4"], first["nic"]) if first["gateway4"] else None,
                                   ("default", first["gateway6"], first["nic"]) if first["gateway6"] else None) if r)
        source = tuple((addr.split("/")[0], gw, n["nic"]) for n in nics
                       for addr, gw in ((n["ipv4"], n["gateway4"]), (n["ipv6"], n["gateway6"])) if addr and gw)
        nodes.append(TwinNode(host, "host", interfaces, None, routes, source))
    return nodes


def twin_plan(build: Path, name: str) -> TwinSource:
    """The backend fabric of the build folder `build` as a twin plan named `name`."""
    build = Path(build)
    with (build / "cabling.csv").open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["kind"] in BACKEND_LINKS]
    devices = sorted({r["a_device"] for r in rows} | {r["b_device"] for r in rows})
    source = TwinSource(TwinPlan(name, (), ()))
    nodes: list[TwinNode] = []
    hosts = set()
    for d in devices:
        folder = build / "devices" / d
        if (folder / "config_db.json").is_file():
            node, n = _sonic(build, d)
            source.origin[d] = "SONiC frr.conf, unchanged"
        elif (folder / "structured-config.json").is_file():
            node, n = _eos(build, d)
            source.origin[d] = "FRR equivalent of the EOS structured config"
        else:
            hosts.add(d)
            continue
        nodes.append(node)
        source.neighbors[d] = n
    nodes += _hosts(build, hosts)
    mtu = {(n.name, i.name): i.mtu for n in nodes for i in n.interfaces}
    links = tuple(TwinLink(r["a_device"], r["a_port"], r["b_device"], r["b_port"],
                           min(mtu[(r["a_device"], r["a_port"])], mtu[(r["b_device"], r["b_port"])])) for r in rows)
    source.plan = TwinPlan(name, tuple(nodes), links)
    return source
