"""Where each GPU host sits in the network, as Kubernetes node labels, and the ordered levels Kueue schedules over.

Labels of every GPU host (the Node of the same name), from the Fabric:

- Kueue's keys, as its Topology Aware Scheduling docs and samples spell them: `cloud.provider.com/topology-block`
  (the AI zone, or the InfiniBand scalable unit: the scheduler's block, as in slurm/topology.yaml) and
  `cloud.provider.com/topology-rack` (the rack: its RTSW on RoCE).
- NVIDIA Topograph's tiers, `network.topology.nvidia.com/leaf|spine|core`: the switch (group) a node hangs off and
  the tiers above it.  RoCE: the rack's RTSW, the zone (its CTSW planes), the cluster (the ATSWs).  InfiniBand: the
  SU (its rail-optimized leaves, each reaching every node of the SU: one logical leaf, as in topology.conf), then
  the pod (three levels) and the cluster.
- teton's own (prefix `teton.dev/`): `cluster`, which the ResourceFlavor selects its nodes by, and `railN`, the switch
  that NIC N of the host is cabled to (the rail-switch level; on RoCE every rail of a rack is on its RTSW).

The Kueue `Topology` levels, top to bottom: (the pod, three-level InfiniBand only), the block, the rack, and
`kubernetes.io/hostname` last (kubelet's own label: Kueue's lowest level, so it assigns single nodes).  Each level's
domains nest in the one above (a rack is in one zone, a zone in one pod), as Kueue requires.

Kubernetes' syntax (`label_key_problem`, `label_value_problem`, `name_problem`): a key is an optional DNS-subdomain
prefix (at most 253 characters) and '/', then a name of at most 63 alphanumerics, '-', '_', '.', starting and ending
alphanumeric; a value is empty or such a name; an object's name is a DNS subdomain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from teton.fabric.model import Device, Fabric
from teton.fabric.roles import rail_kinds

KUEUE_BLOCK = "cloud.provider.com/topology-block"
KUEUE_RACK = "cloud.provider.com/topology-rack"
HOSTNAME = "kubernetes.io/hostname"
TOPOGRAPH = "network.topology.nvidia.com"
LEAF, SPINE, CORE = f"{TOPOGRAPH}/leaf", f"{TOPOGRAPH}/spine", f"{TOPOGRAPH}/core"
PREFIX = "teton.dev"
CLUSTER = f"{PREFIX}/cluster"


def rail_key(rail: int) -> str:
    return f"{PREFIX}/rail{rail}"


_NAME = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?")
_DNS_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_SUBDOMAIN = re.compile(rf"{_DNS_LABEL}(\.{_DNS_LABEL})*")


def name_problem(name: str) -> str | None:
    """Why `name` is no Kubernetes object name (a DNS subdomain, RFC 1123), or None."""
    if len(name) > 253 or not _SUBDOMAIN.fullmatch(name):
        return f"{name!r} is no Kubernetes object name (a DNS subdomain: lower-case letters, digits, '-' and '.')"
    return None


def label_key_problem(key: str) -> str | None:
    prefix, _, name = key.rpartition("/")
    if "/" in key and (not prefix or len(prefix) > 253 or not _SUBDOMAIN.fullmatch(prefix)):
        return f"label key {key!r}: its prefix is no DNS subdomain of at most 253 characters"
    if len(name) > 63 or not _NAME.fullmatch(name):
        return (f"label key {key!r}: its name is not 1-63 letters, digits, '-', '_' and '.', starting and ending with "
                "a letter or digit")
    return None


def label_value_problem(value: str) -> str | None:
    if value and (len(value) > 63 or not _NAME.fullmatch(value)):
        return (f"label value {value!r} is not at most 63 letters, digits, '-', '_' and '.', starting and ending "
                "with a letter or digit")
    return None


@dataclass(frozen=True)
class Level:
    key: str            # the node label
    what: str           # what its domains are, for the file's comments


def zone_name(zone: int | None) -> str:
    return f"z{zone or 0:02d}"


def _three_levels(fabric: Fabric) -> bool:
    return fabric.backend == "infiniband" and bool(fabric.by_role("core"))


def levels(fabric: Fabric) -> list[Level]:
    """The Kueue Topology's levels, top to bottom."""
    block = "AI zone" if fabric.backend == "roce" else "scalable unit"
    out = [Level(SPINE, "pod (the SUs sharing its spine groups)")] if _three_levels(fabric) else []
    rack = "rack (its RTSW)" if fabric.backend == "roce" else "rack"
    return [*out, Level(KUEUE_BLOCK, block), Level(KUEUE_RACK, rack), Level(HOSTNAME, "node (kubelet's label)")]


def _rails(host: Device) -> list[tuple[int, str]]:
    kinds = set(rail_kinds())
    return [(i.ordinal, i.peer) for i in host.interfaces if i.kind in kinds]


def host_labels(fabric: Fabric, host: Device) -> dict[str, str]:
    """The labels of one GPU host, in the order the file lists them (teton's, Kueue's, Topograph's top down)."""
    zone = zone_name(host.zone)
    rails = _rails(host)
    labels = {CLUSTER: fabric.name, KUEUE_BLOCK: zone, KUEUE_RACK: host.rack}
    if fabric.backend == "infiniband":
        if _three_levels(fabric):
            pods = sorted({int(fabric.device(peer).attrs.get("pod", 1)) for _, peer in rails
                           if peer in fabric.devices})
            labels[CORE] = fabric.name
            labels[SPINE] = f"p{pods[0] if pods else 1:02d}"
        else:
            labels[SPINE] = fabric.name
        labels[LEAF] = zone
    else:
        labels[CORE] = fabric.name
        labels[SPINE] = zone
        if rails:
            labels[LEAF] = rails[0][1]
    for rail, peer in rails:
        labels[rail_key(rail)] = peer
    return labels


def node_labels(fabric: Fabric) -> dict[str, dict[str, str]]:
    """{GPU host: its labels}, by host name."""
    return {h.name: host_labels(fabric, h) for h in fabric.by_role("host")}


def problems(labels: dict[str, dict[str, str]], level_keys: list[str]) -> list[tuple[str, str]]:
    """(host, problem) for every host name that is no Node name, every label that breaks Kubernetes' syntax and every
    level (but kubelet's hostname) a host lacks."""
    found: list[tuple[str, str]] = []
    for host, own in labels.items():
        if (p := name_problem(host)) is not None:
            found.append((host, p))
        for key, value in own.items():
            for p in (label_key_problem(key), label_value_problem(value)):
                if p is not None:
                    found.append((host, p))
        for key in level_keys:
            if key != HOSTNAME and not own.get(key):
                found.append((host, f"no label {key}, a level of the Kueue Topology"))
    return found
