"""What the design promises, as info series (`monitoring/designed/*.prom`, node-exporter's textfile format): the rules
join what the exporters observe with these, so a session or a port that is absent still alerts, and every alert
carries the design's names.

One series per object, never one per end: a cable is `teton_designed_link` with its south end as `device`/`port` and
its north end as `peer_device`/`peer_port` (the Fabric's orientation), a session is `teton_designed_bgp_session` on
its cable with both ends' addresses (`address` the south end's, `peer_address` the north end's); the recording rules
`teton:designed_link_end` and `teton:designed_bgp_session_end` give each end's view.  The label contract is
docs/monitoring.md's.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import NamedTuple

from teton.fabric.cables import Cable, cables
from teton.fabric.hostplan import GpuHostPlan, NfsAssignment, ServicePlan
from teton.fabric.model import Device, Fabric
from teton.targets.monitoring.metrics import monitored
from teton.targets.monitoring.text import Labels, fixed_labels, labels_of, number, series

POOLS = ("ingress_lossless_pool", "egress_lossless_pool", "egress_lossy_pool")   # SONiC's BUFFER_POOL names


class Series(NamedTuple):
    name: str
    labels: Labels
    value: float = 1

    def line(self) -> str:
        return f"{series(self.name, self.labels)} {number(self.value)}"

    def get(self, label: str) -> str:
        for name, value in self.labels:
            if name == label:
                return value
        return ""


class Family(NamedTuple):
    name: str
    file: str          # under monitoring/designed/
    help: str


FAMILIES = (
    Family("teton_designed_build_info", "build.prom", "The design these series come from: its cluster and site."),
    Family("teton_designed_device", "devices.prom", "Every device of the design: role, NOS, plane, zone, rack, ASN; "
           "monitored=false where teton names no exporter for its ports and sessions."),
    Family("teton_designed_link", "links.prom", "Every cable, once: device/port its south end, peer_device/peer_port "
           "its north end, cable_id as on its label."),
    Family("teton_designed_bgp_session", "sessions.prom", "Every eBGP session, once: its cable, family and both "
           "ends' addresses (address the south end's)."),
    Family("teton_designed_lossless", "qos.prom", "The lossless priority (= its queue) of each backend switch, its "
           "PFC watchdog's detection time and whether ECN marks it."),
    Family("teton_designed_buffer_pool_bytes", "buffers.prom", "The size of each shared buffer pool the design "
           "carves (bytes)."),
    Family("teton_designed_gpus", "gpus.prom", "GPUs of each GPU host."),
    Family("teton_designed_mount", "mounts.prom", "Every storage mount of a host, and the server the design "
                                                  "assigns it."),
)


def _address(text: str) -> str:
    """An address as FRR prints it (inet_ntop: RFC 5952 for IPv6), without a prefix length."""
    text = text.split("/", 1)[0]
    family = socket.AF_INET6 if ":" in text else socket.AF_INET
    return socket.inet_ntop(family, socket.inet_pton(family, text))


# the label sets of the many-series families (`fixed_labels`: their names sorted, their values in that order)
_DEVICE = fixed_labels("asn", "device", "monitored", "nos", "plane", "rack", "role", "zone")
_LINK = fixed_labels("cable_id", "device", "kind", "peer_device", "peer_port", "port")
_SESSION = fixed_labels("address", "afi", "cable_id", "peer_address")
_LOSSLESS = fixed_labels("device", "ecn", "priority", "queue", "watchdog_ms")


def build_info(fabric: Fabric) -> Iterator[Series]:
    yield Series("teton_designed_build_info", labels_of({"cluster": fabric.name, "site": fabric.site}))


def devices(fabric: Fabric) -> Iterator[Series]:
    for d in fabric.devices.values():
        yield Series("teton_designed_device", _DEVICE(
            d.asn, d.name, "true" if monitored(d.nos) else "false", d.nos, d.plane, d.rack, d.role, d.zone))


def link_series(c: Cable) -> Series:
    return Series("teton_designed_link", _LINK(c.id, c.a.device, c.kind, c.b.device, c.b.port, c.a.port))


def links(fabric: Fabric) -> Iterator[Series]:
    for c in cables(fabric):
        yield link_series(c)


def sessions(fabric: Fabric) -> Iterator[Series]:
    """One series per (cable, family) a designed neighbour runs on, from whichever end configures it first."""
    by_end = {(e.device, e.port): c for c in cables(fabric) for e in (c.a, c.b)}
    seen: set[tuple[str, str]] = set()
    for d in fabric.devices.values():
        if d.routing is None:
            continue
        name = d.name
        for n in d.routing.neighbors:
            port = n.interface
            cable = by_end.get((name, port))
            if cable is None:
                continue
            key = (cable.id, n.family)
            if key in seen:        # the session seen from its other end
                continue
            seen.add(key)
            south = cable.a.device == name and cable.a.port == port
            mine, theirs = _address(n.local_address), _address(n.address)
            yield Series("teton_designed_bgp_session", _SESSION(
                mine if south else theirs, n.family, cable.id, theirs if south else mine))


def lossless(fabric: Fabric) -> Iterator[Series]:
    for d in fabric.devices.values():
        if d.nos is None or d.qos is None:
            continue
        q = d.qos
        for p in q.pfc_priorities:
            yield Series("teton_designed_lossless", _LOSSLESS(
                d.name, "on" if q.ecn is not None else "off", p, p,
                q.watchdog.detection_ms if q.watchdog is not None else None))


def buffer_pools(fabric: Fabric) -> Iterator[Series]:
    for d in fabric.devices.values():
        if d.nos is None or d.buffers is None:
            continue
        for pool in POOLS:
            yield Series("teton_designed_buffer_pool_bytes", labels_of({"device": d.name, "pool": pool}),
                         getattr(d.buffers, pool))


def gpus(fabric: Fabric) -> Iterator[Series]:
    for d in fabric.by_role("host"):
        count = int(d.attrs.get("gpus", 0))
        if count:
            yield Series("teton_designed_gpus", labels_of({"device": d.name}), count)


def host_mounts(d: Device) -> tuple[NfsAssignment, ...]:
    return d.host.nfs if isinstance(d.host, GpuHostPlan | ServicePlan) else ()


def mounts(fabric: Fabric) -> Iterator[Series]:
    for d in fabric.devices.values():
        for m in host_mounts(d):
            yield Series("teton_designed_mount", labels_of({
                "device": d.name, "mountpoint": m.mount_point, "server": m.server, "server_device": m.server_name}))


def designed(fabric: Fabric) -> dict[str, list[Series]]:
    """Every designed series, by family name, in the design's order (devices by name, cables in link order)."""
    out: dict[str, list[Series]] = {f.name: [] for f in FAMILIES}
    for make in (build_info, devices, links, sessions, lossless, buffer_pools, gpus, mounts):
        for s in make(fabric):
            out[s.name].append(s)
    return out


def textfiles(found: dict[str, list[Series]]) -> dict[str, str]:
    """{file name under monitoring/designed/: text} in node-exporter's textfile format (a family with no series
    still has its file, so a site's copy of an older build loses the stale one)."""
    out = {}
    for f in FAMILIES:
        head = f"# HELP {f.name} {f.help}\n# TYPE {f.name} gauge\n"
        out[f.file] = head + "".join(s.line() + "\n" for s in found[f.name])
    return out
