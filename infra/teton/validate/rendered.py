"""Checks over a rendered build folder (the files, not the spec): `teton validate --rendered DIR`.

Each device's artifacts are read into a neutral view (ASN, router-id, interfaces with MTU and addresses, BGP sessions,
RoCE QoS); then the rules compare devices with their neighbours:

- every BGP session is configured on both ends, with matching addresses and ASNs;
- MTU agrees at both ends of every link (ends are paired by their shared /31 or /127);
- the lossless priority and the DSCP map are the same on every backend switch and on the hosts;
- no two devices share a router-id;
- inside a SONiC device, frr.conf and the BGP_NEIGHBOR table describe the same sessions.

Vendor validation runs too: every config_db.json through SONiC's YANG models, every EOS structured config through
pyavd.  Findings name the file and the path inside it (table|key/field, a YAML path, or a line).
"""

from __future__ import annotations

import ipaddress
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from teton.findings import Finding
from teton.render.parallel import map_chunks


@dataclass
class Session:
    peer_ip: str
    remote_as: int
    where: str            # path inside the file that configures it


@dataclass
class View:
    name: str
    file: str             # the file the sessions and interfaces were read from (relative to the build folder)
    asn: int | None = None
    router_id: str | None = None
    interfaces: dict[str, tuple[int | None, list[str], str]] = field(default_factory=dict)  # name -> (mtu, cidrs, path)
    sessions: list[Session] = field(default_factory=list)
    qos: dict[str, Any] | None = None   # {"lossless": [3], "dscp_to_tc": {dscp: tc}}
    qos_file: str = ""    # the file its interfaces and QoS were read from


_NEIGHBOR = re.compile(r"^ neighbor (\S+) remote-as (\d+)$")


def _frr_sessions(text: str, file: str) -> tuple[int | None, str | None, list[Session]]:
    asn = rid = None
    sessions = []
    for n, line in enumerate(text.splitlines(), start=1):
        if line.startswith("router bgp "):
            asn = int(line.split()[2])
        elif line.startswith(" bgp router-id "):
            rid = line.split()[2]
        elif m := _NEIGHBOR.match(line):
            sessions.append(Session(m.group(1), int(m.group(2)), f"line {n}"))
    return asn, rid, sessions


def read_sonic(build: Path, name: str, db: dict[str, Any]) -> tuple[View, list[Finding]]:
    rel = f"devices/{name}/config_db.json"
    frr_rel = f"devices/{name}/frr.conf"
    asn, rid, sessions = _frr_sessions((build / frr_rel).read_text(), frr_rel)
    view = View(name, frr_rel, asn=asn, router_id=rid, sessions=sessions, qos_file=rel)
    findings = []
    meta_asn = db.get("DEVICE_METADATA", {}).get("localhost", {}).get("bgp_asn")
    if meta_asn is not None and asn is not None and str(asn) != meta_asn:
        findings.append(Finding(rel, "DEVICE_METADATA|localhost/bgp_asn", f"{meta_asn} but frr.conf runs router bgp "
                                f"{asn}", rule="sonic-frr-mismatch"))
    table = db.get("BGP_NEIGHBOR", {})
    in_frr = {s.peer_ip: s.remote_as for s in sessions}
    for ip, row in sorted(table.items()):
        if ip not in in_frr:
            findings.append(Finding(rel, f"BGP_NEIGHBOR|{ip}", "not configured in frr.conf", rule="sonic-frr-mismatch"))
        elif str(in_frr[ip]) != row.get("asn"):
            findings.append(Finding(rel, f"BGP_NEIGHBOR|{ip}/asn", f"{row.get('asn')} but frr.conf says remote-as "
                                    f"{in_frr[ip]}", rule="sonic-frr-mismatch"))
    for ip in sorted(set(in_frr) - set(table)):
        findings.append(Finding(frr_rel, f"neighbor {ip}", "missing from BGP_NEIGHBOR in config_db.json",
                                rule="sonic-frr-mismatch"))
    ports = db.get("PORT", {})
    addrs: dict[str, list[str]] = defaultdict(list)
    for key in db.get("INTERFACE", {}):
        if "|" in key:
            port, cidr = key.split("|", 1)
            addrs[port].append(cidr)
    for port, cidrs in addrs.items():
        mtu = ports.get(port, {}).get("mtu")
        view.interfaces[port] = (int(mtu) if mtu and mtu.isdigit() else None, cidrs, f"PORT|{port}/mtu")
    for key, row in db.get("PORT_QOS_MAP", {}).items():
        pfc = row.get("pfc_enable")
        mapname = row.get("dscp_to_tc_map")
        dscp = db.get("DSCP_TO_TC_MAP", {}).get(mapname, {})
        q = {"lossless": sorted(int(p) for p in pfc.split(",") if p.isdigit()) if pfc else [],
             "dscp_to_tc": {int(k): int(v) for k, v in dscp.items() if k.isdigit() and v.isdigit()},
             "where": f"PORT_QOS_MAP|{key}/pfc_enable"}
        if view.qos is None:
            view.qos = q
        elif (q["lossless"], q["dscp_to_tc"]) != (view.qos["lossless"], view.qos["dscp_to_tc"]):
            findings.append(Finding(rel, q["where"], f"port QoS differs from {view.qos['where']} on the same switch",
                                    rule="qos-mismatch"))
    return view, findings


_DSCP_LINE = re.compile(r"^([\d ]+) to traffic-class (\d+)$")


def read_eos(name: str, cfg: dict[str, Any]) -> tuple[View, list[Finding]]:
    rel = f"devices/{name}/structured-config.json"
    bgp = cfg.get("router_bgp", {})
    view = View(name, rel, asn=int(bgp["as"]) if str(bgp.get("as", "")).isdigit() else None,
                router_id=bgp.get("router_id"), qos_file=rel)
    for n, nb in enumerate(bgp.get("neighbors", [])):
        if str(nb.get("remote_as", "")).isdigit():
            view.sessions.append(Session(nb["ip_address"], int(nb["remote_as"]), f"router_bgp.neighbors[{n}]"))
    lossless: set[int] = set()
    findings: list[Finding] = []
    for n, e in enumerate(cfg.get("ethernet_interfaces", [])):
        cidrs = [c for c in [e.get("ip_address")] + list(e.get("ipv6_addresses", [])) if c]
        view.interfaces[e["name"]] = (e.get("mtu"), cidrs, f"ethernet_interfaces[{n}].mtu")
        pfc = e.get("priority_flow_control") or {}
        prios = sorted(p["priority"] for p in pfc.get("priorities", []) if p.get("no_drop"))
        if prios:
            if lossless and set(prios) != lossless:
                findings.append(Finding(rel, f"ethernet_interfaces[{n}].priority_flow_control", "no-drop priorities "
                                        f"{prios} differ from the switch's other ports {sorted(lossless)}",
                                        rule="qos-mismatch"))
            lossless |= set(prios)
    dscp: dict[int, int] = {}
    for line in cfg.get("qos", {}).get("map", {}).get("dscp", []):
        if m := _DSCP_LINE.match(str(line)):
            for d in m.group(1).split():
                dscp[int(d)] = int(m.group(2))
    if lossless or dscp:
        view.qos = {"lossless": sorted(lossless), "dscp_to_tc": dscp, "where": "qos.map.dscp"}
    return view, findings


def read_hosts(build: Path) -> list[View]:
    rel = "hosts/backend.json"
    p = build / rel
    if not p.is_file():
        return []
    data = json.loads(p.read_text())
    q = data["qos"]
    qos = {"lossless": sorted(q["pfc_priorities"]), "dscp_to_tc": {int(k): v for k, v in q["dscp_to_priority"].items()},
           "where": "qos"}
    views: dict[str, View] = {}
    for n, nic in enumerate(data["nics"]):
        v = views.setdefault(nic["host"], View(nic["host"], rel, qos=qos, qos_file=rel))
        v.interfaces[nic["nic"]] = (nic["mtu"], [c for c in (nic["ipv4"], nic["ipv6"]) if c], f"nics[{n}].mtu")
    return list(views.values())


# ------------------------------------------------------------------------------------------------------------- rules


def check_bgp_sessions(views: list[View]) -> list[Finding]:
    """Every session exists on both ends with matching addresses and ASNs."""
    owner: dict[str, tuple[View, str]] = {}   # address -> (view, the address with its prefix length)
    for v in views:
        for _, cidrs, _ in v.interfaces.values():
            for c in cidrs:
                owner[c.split("/")[0]] = (v, c)
    sessions = {(v.name, s.peer_ip): s for v in views for s in v.sessions}
    out = []
    for v in views:
        for s in v.sessions:
            if s.peer_ip not in owner:
                out.append(Finding(v.file, s.where, f"neighbor {s.peer_ip} is no address of any device",
                                   rule="bgp-session"))
                continue
            peer, peer_cidr = owner[s.peer_ip]
            local = _local_address(v, peer_cidr, owner)
            if peer.asn != s.remote_as:
                out.append(Finding(v.file, s.where, f"neighbor {s.peer_ip} ({peer.name}) has ASN {peer.asn}, "
                                   f"configured remote-as {s.remote_as}", rule="bgp-session"))
            back = sessions.get((peer.name, local)) if local else None
            if back is None:
                out.append(Finding(v.file, s.where, f"{peer.name} has no session back to {local or v.name}",
                                   rule="bgp-session"))
    return out


def _local_address(v: View, peer_cidr: str, owner: dict[str, tuple[View, str]]) -> str | None:
    """v's own address on the point-to-point subnet of `peer_cidr` (the other end of the /31 or /127)."""
    iface = ipaddress.ip_interface(peer_cidr)
    if iface.network.prefixlen not in (31, 127):
        return None
    for other in (iface.network.network_address, iface.network.broadcast_address):
        if other != iface.ip and owner.get(str(other), (None,))[0] is v:
            return str(other)
    return None


def check_mtu(views: list[View]) -> list[Finding]:
    """Both ends of every point-to-point link (paired by their /31 or /127) have the same MTU."""
    ends: dict[str, list[tuple[View, str, int | None, str]]] = defaultdict(list)
    for v in views:
        for port, (mtu, cidrs, where) in v.interfaces.items():
            for c in cidrs:
                net = ipaddress.ip_interface(c).network
                if net.prefixlen in (31, 127):
                    ends[str(net)].append((v, port, mtu, where))
    out: dict[tuple[str, str, str, str], Finding] = {}
    for net in sorted(ends):
        e = ends[net]
        if len(e) == 2 and e[0][2] != e[1][2]:
            (va, pa, ma, wa), (vb, pb, mb, _) = e
            out.setdefault((va.name, pa, vb.name, pb), Finding(
                va.qos_file, wa, f"MTU {ma} on {va.name} {pa} but {mb} on {vb.name} {pb} (link {net})",
                rule="mtu-mismatch"))
    return list(out.values())


def check_qos(views: list[View]) -> list[Finding]:
    """The lossless priority and the DSCP map are the same everywhere RoCE runs (switches and hosts)."""
    with_qos = [v for v in views if v.qos is not None]
    if not with_qos:
        return []
    key = Counter((tuple(v.qos["lossless"]), tuple(sorted(v.qos["dscp_to_tc"].items()))) for v in with_qos)
    (lossless, dscp), _ = key.most_common(1)[0]
    bad: dict[tuple[str, str, str], list[str]] = defaultdict(list)   # (file, where, problem) -> devices
    for v in with_qos:
        q = v.qos
        if tuple(q["lossless"]) != lossless:
            bad[(v.qos_file, q["where"], f"lossless priority {q['lossless']} but {list(lossless)} everywhere "
                 "else")].append(v.name)
        elif tuple(sorted(q["dscp_to_tc"].items())) != dscp:
            diff = sorted(d for d, tc in q["dscp_to_tc"].items() if dict(dscp).get(d) != tc)
            bad[(v.qos_file, q["where"], f"DSCP map differs from every other device's for DSCP {diff[:8]}")].append(
                v.name)
    return [Finding(file, where, f"{names[0]}{f' and {len(names) - 1} more' if len(names) > 1 else ''}: {problem}",
                    rule="qos-mismatch") for (file, where, problem), names in sorted(bad.items())]


def check_router_ids(views: list[View]) -> list[Finding]:
    seen: dict[str, list[View]] = defaultdict(list)
    for v in views:
        if v.router_id:
            seen[v.router_id].append(v)
    return [Finding(vs[1].file, "router-id", f"router-id {rid} is also {vs[0].name}'s", rule="router-id-clash")
            for rid, vs in sorted(seen.items()) if len(vs) > 1]


# ------------------------------------------------------------------------------------------------------ entry point


def _device_chunk(build: Path, yang_dir: Path | None, vendor: bool,
                  names: list[str]) -> tuple[list[View], list[Finding]]:
    """Read each device's artifacts once: its view for the cross-device rules, and its vendor validation."""
    from teton.render.eos_avd import validate_structured_config
    from teton.render.sonic import SplitValidator

    yang = None
    views: list[View] = []
    out: list[Finding] = []
    for name in names:
        d = build / "devices" / name
        try:
            if (d / "config_db.json").is_file():
                rel = f"devices/{name}/config_db.json"
                db = json.loads((d / "config_db.json").read_text())
                view, found = read_sonic(build, name, db)
                if vendor:
                    yang = yang or SplitValidator(yang_dir)
                    found += [Finding(rel, f"{i.table}|{i.key}" + (f"/{i.field}" if i.field else ""), i.message,
                                      rule="sonic-yang") for i in yang.validate(name, db)]
            elif (d / "structured-config.json").is_file():
                rel = f"devices/{name}/structured-config.json"
                cfg = json.loads((d / "structured-config.json").read_text())
                view, found = read_eos(name, cfg)
                if vendor:
                    found += [Finding(rel, i.path, i.message, rule="avd-schema")
                              for i in validate_structured_config(name, cfg)]
            else:
                continue
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
            out.append(Finding(f"devices/{name}", "", f"cannot read: {exc}", rule="io"))
            continue
        views.append(view)
        out += found
    return views, out


def validate_rendered(build: Path, yang_dir: Path | None = None, vendor: bool = True) -> list[Finding]:
    """Every finding about the rendered build folder `build`."""
    build = Path(build)
    devices = build / "devices"
    if not devices.is_dir():
        return [Finding(str(build), "devices", "no devices/ folder: is this a teton build folder?", rule="io")]
    names = sorted(p.name for p in devices.iterdir() if p.is_dir())
    views: list[View] = []
    findings: list[Finding] = []
    for v, f in map_chunks(partial(_device_chunk, build, yang_dir, vendor), names):
        views += v
        findings += f
    views += read_hosts(build)
    for rule in (check_bgp_sessions, check_mtu, check_qos, check_router_ids):
        findings += rule(views)
    return findings
