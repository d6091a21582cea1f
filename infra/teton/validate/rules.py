"""Cross-device rules over what the rendered files say (NOS-neutral views read back by the targets):

- every BGP session is configured on both ends, with matching addresses and ASNs (a neighbour on a port of one of the
  build's externals, a device of another build of the site, is checked against that device's ASN and subnet only,
  and counted: `external_sessions`);
- MTU agrees at both ends of every link (ends are paired by their shared /31 or /127);
- the lossless priority and the DSCP map are the same on every backend switch and on the hosts;
- RoCE's DSCP lands in a lossless (PFC) class and the CNP's DSCP does not, everywhere;
- the control class (the collective's clear-to-send messages): its DSCP -> traffic class -> queue is the design's on
  every NIC and switch, and the queue is strict priority on every switch port;
- every queue is scheduled alike (strict, or round robin with one weight) on every backend switch, whatever its NOS;
- no two devices share a router-id.
"""

from __future__ import annotations

import ipaddress
from collections import Counter, defaultdict
from collections.abc import Mapping

from teton.fabric.bgpview import BgpPeer
from teton.fabric.externals import ExternalPort
from teton.fabric.intent import Qos
from teton.findings import Finding
from teton.targets import DeviceView


def _peers(v: DeviceView) -> tuple[BgpPeer, ...]:
    """The neighbours of a view's BGP that name a remote ASN (one without configures no session)."""
    return tuple(p for p in v.bgp.peers if p.remote_as is not None) if v.bgp is not None else ()


def _owners(views: list[DeviceView]) -> dict[str, tuple[DeviceView, str]]:
    owner: dict[str, tuple[DeviceView, str]] = {}   # address -> (view, the address with its prefix length)
    for v in views:
        for port in v.interfaces.values():
            for c in port.addresses:
                owner[c.split("/")[0]] = (v, c)
    return owner


def check_bgp_sessions(views: list[DeviceView], externals: Mapping[str, ExternalPort] | None = None) -> list[Finding]:
    """Every session exists on both ends with matching addresses and ASNs; one to an external (`externals`, by
    address: another build of the site) has the external's ASN and is on a subnet of one of the switch's ports."""
    owner = _owners(views)
    sessions = {(v.name, p.address) for v in views for p in _peers(v)}
    out = []
    for v in views:
        for s in _peers(v):
            if s.address not in owner:
                ext = (externals or {}).get(s.address)
                if ext is None:
                    out.append(Finding(v.file, s.where, f"neighbor {s.address} is no address of any device",
                                       rule="bgp-session"))
                    continue
                if ext.asn != s.remote_as:
                    out.append(Finding(v.file, s.where, f"neighbor {s.address} ({ext.device}, of another build of "
                                       f"the site) has ASN {ext.asn}, configured remote-as {s.remote_as}",
                                       rule="bgp-session"))
                if not _local_address(v, ext.address, owner):
                    out.append(Finding(v.file, s.where, f"neighbor {s.address} ({ext.device} {ext.port}, of another "
                                       f"build of the site) is on no subnet of {v.name}'s ports", rule="bgp-session"))
                continue
            peer, peer_cidr = owner[s.address]
            local = _local_address(v, peer_cidr, owner)
            if peer.asn != s.remote_as:
                out.append(Finding(v.file, s.where, f"neighbor {s.address} ({peer.name}) has ASN {peer.asn}, "
                                   f"configured remote-as {s.remote_as}", rule="bgp-session"))
            if not local or (peer.name, local) not in sessions:
                out.append(Finding(v.file, s.where, f"{peer.name} has no session back to {local or v.name}",
                                   rule="bgp-session"))
    return out


def external_sessions(views: list[DeviceView], externals: Mapping[str, ExternalPort]) -> int:
    """The neighbours configured on the externals' addresses (one session each): another build's to prove."""
    owner = _owners(views)
    return sum(1 for v in views for s in _peers(v) if s.address not in owner and s.address in externals)


def _local_address(v: DeviceView, peer_cidr: str, owner: dict[str, tuple[DeviceView, str]]) -> str | None:
    """v's own address on the point-to-point subnet of `peer_cidr` (the other end of the /31 or /127)."""
    iface = ipaddress.ip_interface(peer_cidr)
    if iface.network.prefixlen not in (31, 127):
        return None
    for other in (iface.network.network_address, iface.network.broadcast_address):
        if other != iface.ip and owner.get(str(other), (None,))[0] is v:
            return str(other)
    return None


def check_mtu(views: list[DeviceView]) -> list[Finding]:
    """Both ends of every point-to-point link (paired by their /31 or /127) have the same MTU."""
    ends: dict[str, list[tuple[DeviceView, str, int | None, str]]] = defaultdict(list)
    for v in views:
        for name, port in v.interfaces.items():
            for c in port.addresses:
                link = ipaddress.ip_interface(c).network
                if link.prefixlen in (31, 127):
                    ends[str(link)].append((v, name, port.mtu, port.where))
    out: dict[tuple[str, str, str, str], Finding] = {}
    for net in sorted(ends):
        e = ends[net]
        if len(e) == 2 and e[0][2] != e[1][2]:
            (va, pa, ma, wa), (vb, pb, mb, _) = e
            out.setdefault((va.name, pa, vb.name, pb), Finding(
                va.qos_file, wa, f"MTU {ma} on {va.name} {pa} but {mb} on {vb.name} {pb} (link {net})",
                rule="mtu-mismatch"))
    return list(out.values())


def check_qos(views: list[DeviceView]) -> list[Finding]:
    """The lossless priority and the DSCP map are the same everywhere RoCE runs (switches and hosts)."""
    with_qos = [(v, v.qos) for v in views if v.qos is not None]
    if not with_qos:
        return []
    key = Counter((q.lossless, tuple(sorted(q.dscp_to_tc.items()))) for _, q in with_qos)
    (lossless, dscp), _ = key.most_common(1)[0]
    bad: dict[tuple[str, str, str], list[str]] = defaultdict(list)   # (file, where, problem) -> devices
    for v, q in with_qos:
        if q.lossless != lossless:
            bad[(v.qos_file, q.where, f"lossless priority {list(q.lossless)} but {list(lossless)} everywhere "
                 "else")].append(v.name)
        elif tuple(sorted(q.dscp_to_tc.items())) != dscp:
            diff = sorted(d for d, tc in q.dscp_to_tc.items() if dict(dscp).get(d) != tc)
            bad[(v.qos_file, q.where, f"DSCP map differs from every other device's for DSCP {diff[:8]}")].append(
                v.name)
    return _grouped(bad, "qos-mismatch")


def check_lossless_class(views: list[DeviceView], qos: Qos | None) -> list[Finding]:
    """RoCE's DSCP (as the design says) maps to a PFC-protected class and the CNP's DSCP to one that is not."""
    if qos is None:
        return []
    bad: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for v in views:
        q = v.qos
        if q is None:
            continue
        roce, cnp = q.dscp_to_tc.get(qos.roce_dscp), q.dscp_to_tc.get(qos.cnp_dscp)
        if roce not in q.lossless:
            bad[(v.qos_file, q.where, f"RoCE's DSCP {qos.roce_dscp} maps to traffic class {roce}, which has no PFC "
                 f"(lossless: {list(q.lossless)}): RoCE would be dropped under congestion")].append(v.name)
        if cnp in q.lossless:
            bad[(v.qos_file, q.where, f"the CNP DSCP {qos.cnp_dscp} maps to the lossless class {cnp}: congestion "
                 "notifications would queue behind the RoCE they are about")].append(v.name)
    return _grouped(bad, "qos-lossless")


def check_control_class(views: list[DeviceView], qos: Qos | None) -> list[Finding]:
    """The control DSCP maps to the design's priority and queue on every NIC and switch; the queue is strict."""
    if qos is None:
        return []
    bad: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for v in views:
        q = v.qos
        if q is None:
            continue
        tc = q.dscp_to_tc.get(qos.control_dscp, 0)
        queue = tc if q.tc_to_queue is None else q.tc_to_queue.get(tc, tc)
        if (tc, queue) != (qos.control_priority, qos.control_priority):
            bad[(v.qos_file, q.where, f"the control DSCP {qos.control_dscp} goes to traffic class {tc}, queue "
                 f"{queue}, not {qos.control_priority}: clear-to-send messages would wait behind data")].append(v.name)
        for x in q.queues:
            if x.queue == queue and not x.strict:
                bad[(v.qos_file, x.where, f"the control queue {queue} is round robin, not strict priority")].append(
                    v.name)
                break
    return _grouped(bad, "qos-control")


def check_scheduling(views: list[DeviceView]) -> list[Finding]:
    """Queue n is scheduled the same (strict, or round robin with the same weight) on every port of every switch."""
    seen: dict[int, Counter[tuple[bool, int | None]]] = defaultdict(Counter)
    for v in views:
        if v.qos is not None:
            for x in v.qos.queues:
                seen[x.queue][(x.strict, x.weight)] += 1
    bad: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    for v in views:
        if v.qos is None:
            continue
        for x in v.qos.queues:
            (strict, weight), _ = seen[x.queue].most_common(1)[0]
            if (x.strict, x.weight) != (strict, weight):
                said = "strict" if x.strict else f"round robin, weight {x.weight}"
                usual = "strict" if strict else f"round robin, weight {weight}"
                bad[(v.qos_file, x.where, f"queue {x.queue} is {said} but {usual} everywhere else")].append(v.name)
    return _grouped(bad, "qos-scheduling")


def _grouped(bad: dict[tuple[str, str, str], list[str]], rule: str) -> list[Finding]:
    return [Finding(file, where, f"{names[0]}{f' and {len(names) - 1} more' if len(names) > 1 else ''}: {problem}",
                    rule=rule) for (file, where, problem), names in sorted(bad.items())]


def check_router_ids(views: list[DeviceView]) -> list[Finding]:
    seen: dict[str, list[DeviceView]] = defaultdict(list)
    for v in views:
        if v.router_id:
            seen[v.router_id].append(v)
    return [Finding(vs[1].file, "router-id", f"router-id {rid} is also {vs[0].name}'s", rule="router-id-clash")
            for rid, vs in sorted(seen.items()) if len(vs) > 1]
