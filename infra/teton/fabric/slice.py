"""A device's slice of the Fabric: everything that device's own files may depend on, and a content hash of it.

A per-device target (SONiC, EOS ...) renders a switch's files from that switch's record (placement, addresses, ports,
interfaces and every intent attached to it: routing, QoS, management, buffers, policy ...), its model (port map,
lanes, SKU strings), the role of each neighbour it is cabled to (EOS writes `peer_type`) and each port's expected LLDP
neighbour with its cable id (`teton.fabric.neighbours`: SONiC's DEVICE_NEIGHBOR, EOS's descriptions).  Nothing else: not
another device's addresses, not the links list, not the fabric-wide fields (the shared intents reach a device as its
own fields).  So two devices with equal slices render identical files, which is what the incremental render
(`teton.pipeline.cache`) and `teton diff` rest on; and a change of the RoCE QoS changes the slices of the backend
switches and GPU hosts, not those of the front end.

`slice_fabric` builds the smallest Fabric holding one slice (neighbours reduced to name and role, no other device, no
link, placeholders for the fabric-wide fields); tests render every device of a fabric from it and compare, so a
target that starts reading something outside the slice fails there, not in a user's stale cache.  A target that
needs more (a neighbour's address, the cluster's name) must add it to `DeviceSlice` first.

`slice_digest` is a sha256 over a canonical JSON spelling of the slice, generic over the record types (a field added
to Device or to an intent is hashed without code here).  Objects shared by many devices (a model's port map, the
QoS, the management plane) are hashed once per `DigestMemo`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, NamedTuple

from pydantic import BaseModel

from teton.fabric.model import Device, Fabric
from teton.fabric.neighbours import Neighbour, expected, seed
from teton.spec.model import SwitchModel

# Fabric fields that are not fabric-wide facts (`head_digests`): the devices, the links, the models.
NOT_IN_HEAD = frozenset({"devices", "links", "models", "duplicate_names"})
NOT_IN_SLICE = "<not in the device's slice>"
_SCALARS = (str, int, float, bool)


class DeviceSlice(NamedTuple):
    device: Device
    model: SwitchModel | None                 # its catalogue entry (None for servers)
    peers: tuple[tuple[str, str], ...]        # (name, role) of every device it is cabled to, by name
    lldp: tuple[Neighbour, ...] = ()          # each Ethernet port's expected LLDP neighbour and cable id


def fabric_head(fabric: Fabric) -> tuple[tuple[str, Any], ...]:
    """The fabric-wide fields: cluster, site, backend, the shared intents (what `head_digests` compares)."""
    return tuple((f.name, getattr(fabric, f.name)) for f in dataclasses.fields(fabric) if f.name not in NOT_IN_HEAD)


def device_slice(fabric: Fabric, name: str) -> DeviceSlice:
    """The slice of device `name`."""
    d = fabric.devices[name]
    devices = fabric.devices
    peers = sorted({(i.peer, devices[i.peer].role) for i in d.interfaces if i.peer in devices})
    return DeviceSlice(d, fabric.models.get(d.model), tuple(peers), tuple(expected(fabric, d)))


def slice_fabric(s: DeviceSlice) -> Fabric:
    """The smallest Fabric that holds slice `s`: the device, its model, its neighbours as name and role only, the
    fabric-wide fields as placeholders (or their defaults)."""
    stubs = {peer: Device(name=peer, role=role, model=NOT_IN_SLICE, nos=None, zone=None, rack=NOT_IN_SLICE, ru=0,
                          height_ru=0) for peer, role in s.peers}
    devices = {**stubs, s.device.name: s.device}
    models = {s.model.name: s.model} if s.model is not None else {}
    alone = Fabric(name=NOT_IN_SLICE, site=NOT_IN_SLICE, backend=NOT_IN_SLICE,
                   devices=MappingProxyType(dict(sorted(devices.items()))), links=(), models=MappingProxyType(models))
    seed(alone, s.device.name, s.lldp)
    return alone


@dataclass
class DigestMemo:
    """Digests of objects shared by many devices, by identity (the object is kept, so its id cannot be reused)."""

    by_id: dict[int, tuple[object, str]] = dataclasses.field(default_factory=dict)


def _plain(o: object) -> Any:
    """JSON spelling of what json cannot spell itself: dataclasses (type name and fields), mappings, models."""
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        return [type(o).__name__, [getattr(o, f.name) for f in dataclasses.fields(o)]]
    if isinstance(o, Mapping):
        return {str(k): v for k, v in o.items()}
    if isinstance(o, BaseModel):
        return o.model_dump(mode="json")
    if isinstance(o, (set, frozenset)):
        return sorted(o)
    raise TypeError(f"cannot hash a {type(o).__name__} in a device slice")


_canon = json.JSONEncoder(sort_keys=True, separators=(",", ":"), allow_nan=True, default=_plain).encode


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _value(v: object, memo: DigestMemo) -> object:
    """A field value as it enters the digest: scalars as they are, anything else by the digest of its spelling
    (memoized by identity: shared objects are spelled once)."""
    if v is None or isinstance(v, _SCALARS):
        return v
    hit = memo.by_id.get(id(v))
    if hit is None:
        hit = (v, _sha(_canon(v)))
        memo.by_id[id(v)] = hit
    return hit[1]


def field_values(d: Device, memo: DigestMemo) -> list[list[object]]:
    """[field name, value as it enters a digest] of every field of `d`: equal for equal records, however they were
    built (designed, or read back from fabric.json)."""
    return [[f.name, _value(getattr(d, f.name), memo)] for f in dataclasses.fields(d)]


def slice_digest(s: DeviceSlice, memo: DigestMemo | None = None) -> str:
    """sha256 of the slice: equal slices, equal digests; any difference in what the slice holds, another digest."""
    memo = memo if memo is not None else DigestMemo()
    d = s.device
    return _sha(_canon([type(d).__name__, field_values(d, memo), _value(s.model, memo), s.peers, s.lldp]))


def device_digest(fabric: Fabric, name: str, memo: DigestMemo) -> str:
    """`slice_digest(device_slice(fabric, name))`, with shared objects hashed once per memo."""
    return slice_digest(device_slice(fabric, name), memo)


def fabric_digests(fabric: Fabric, names: list[str] | None = None,
                   memo: DigestMemo | None = None) -> dict[str, str]:
    """{device: slice digest} for `names` (default: every device)."""
    memo = memo if memo is not None else DigestMemo()
    return {n: device_digest(fabric, n, memo) for n in (names if names is not None else list(fabric.devices))}


def head_digests(fabric: Fabric) -> dict[str, str]:
    """{fabric-wide field: digest}: which shared intents differ between two fabrics, without comparing devices."""
    return {name: _sha(_canon(value)) for name, value in fabric_head(fabric)}
