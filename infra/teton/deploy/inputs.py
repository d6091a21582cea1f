"""The inputs of teton's Pulumi resources, typed: what the program (`teton.deploy.program`) registers and the provider
(`teton.deploy.provider`) gets back.

On the wire an input is a protobuf Struct (`to_props` is what the program sends); the provider decodes the Struct to
plain values and reads them back with `from_props` (numbers come back as floats, absent keys as defaults).  The keys
are the state's: renaming one would show every resource as changed.  No input holds a path: moving the build folder
or the checkout must not look like a change of every device.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CLUSTER, ZONE, RACK = "teton:index:Cluster", "teton:index:Zone", "teton:index:Rack"
SWITCH = "teton:index:Switch"
SUBNET_MANAGER = "teton:index:SubnetManager"
HOST_RACK = "teton:index:HostRack"
GATE = "teton:index:Gate"


def _files(props: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (props.get("files") or {}).items()}


def _names(props: Mapping[str, Any], key: str) -> tuple[str, ...]:
    return tuple(str(x) for x in props.get(key) or ())


def _optional(value: Any) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True)
class Deployment:
    """What every resource says about where it goes: the deploy mode (`twin`/`live`), the twin, the cluster."""

    transport: str = "twin"
    twin: str = ""
    cluster: str = ""

    def to_props(self) -> dict[str, Any]:
        return {"transport": self.transport, "twin": self.twin, "cluster": self.cluster}

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> Deployment:
        return cls(transport=str(props.get("transport", "twin")), twin=str(props.get("twin") or ""),
                   cluster=str(props.get("cluster", "")))


@dataclass(frozen=True)
class SwitchInputs:
    """`teton:index:Switch`: one switch and its files as rendered (secret references)."""

    device: str
    nos: str
    files: dict[str, str]
    deployment: Deployment
    role: str = ""
    wave: int = 0
    mgmt: str | None = None
    rack: str = ""

    def to_props(self) -> dict[str, Any]:
        return {"device": self.device, "nos": self.nos, "role": self.role, "wave": self.wave, "mgmt": self.mgmt,
                "rack": self.rack, "files": self.files, **self.deployment.to_props()}

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> SwitchInputs:
        return cls(device=str(props["device"]), nos=str(props["nos"]), files=_files(props),
                   deployment=Deployment.from_props(props), role=str(props.get("role", "")),
                   wave=int(props.get("wave", 0)), mgmt=_optional(props.get("mgmt")), rack=str(props.get("rack", "")))


@dataclass(frozen=True)
class HostRackInputs:
    """`teton:index:HostRack`: the hosts of one rack and their host variables; `playbooks` the playbooks' digest."""

    rack: str
    hosts: tuple[str, ...]
    files: dict[str, str]
    deployment: Deployment
    playbooks: str = ""

    def to_props(self) -> dict[str, Any]:
        return {"rack": self.rack, "hosts": list(self.hosts), "files": self.files, "playbooks": self.playbooks,
                **self.deployment.to_props()}

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> HostRackInputs:
        return cls(rack=str(props["rack"]), hosts=_names(props, "hosts"), files=_files(props),
                   deployment=Deployment.from_props(props), playbooks=str(props.get("playbooks", "")))


@dataclass(frozen=True)
class GateInputs:
    """`teton:index:Gate`: the health gate after wave `wave`; `digest` changes exactly when a file of one of its
    switches does."""

    wave: int
    name: str
    devices: tuple[str, ...]
    digest: str
    deployment: Deployment
    nos_of: dict[str, str] = field(default_factory=dict)
    mgmt_of: dict[str, str | None] = field(default_factory=dict)

    def to_props(self) -> dict[str, Any]:
        return {"wave": self.wave, "name": self.name, "devices": list(self.devices), "digest": self.digest,
                "nos_of": self.nos_of, "mgmt_of": self.mgmt_of, **self.deployment.to_props()}

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> GateInputs:
        wave = int(props.get("wave", 0))
        return cls(wave=wave, name=str(props.get("name", wave)), devices=_names(props, "devices"),
                   digest=str(props.get("digest", "")), deployment=Deployment.from_props(props),
                   nos_of={str(k): str(v) for k, v in (props.get("nos_of") or {}).items()},
                   mgmt_of={str(k): _optional(v) for k, v in (props.get("mgmt_of") or {}).items()})


@dataclass(frozen=True)
class SubnetManagerInputs:
    """`teton:index:SubnetManager` (InfiniBand): the OpenSM target's files, for the subnet manager hosts."""

    files: dict[str, str]
    hosts: tuple[str, ...]
    deployment: Deployment
    config_dir: str = "/etc/opensm"
    name: str = "opensm"
    hcas: tuple[str, ...] = ()          # the HCA each host's instance binds (its unit opensm-<hca>-1), as `hosts`

    def to_props(self) -> dict[str, Any]:
        return {"name": self.name, "files": self.files, "hosts": list(self.hosts), "config_dir": self.config_dir,
                "hcas": list(self.hcas), **self.deployment.to_props()}

    @classmethod
    def from_props(cls, props: Mapping[str, Any]) -> SubnetManagerInputs:
        return cls(files=_files(props), hosts=_names(props, "hosts"),
                   deployment=Deployment(transport=str(props.get("transport", "")), twin=str(props.get("twin") or ""),
                                         cluster=str(props.get("cluster", ""))),
                   config_dir=str(props.get("config_dir", "/etc/opensm")), name=str(props.get("name", "opensm")),
                   hcas=_names(props, "hcas"))
