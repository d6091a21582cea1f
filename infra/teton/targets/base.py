"""What a target is: a package that renders its own files from the Fabric, validates them with its vendor's tools and
reads them back into a NOS-neutral view.

- `Target` is the whole contract; fabric-wide outputs (fabric.json, cabling, hosts) subclass it directly.
- `DeviceTarget` is a switch NOS: one folder of files per device whose `nos` it configures, rendered, validated and
  read back on all cores.
- `DeviceView` is the NOS-neutral view a read-back gives: what the cross-device checks (`teton validate --rendered`)
  and the digital twin use, so neither knows any vendor's format.
- `BuildFiles` is the `teton.buildfolder.BuildFolder` a read-back reads: on disk or in memory; every problem names the
  file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, Protocol

from teton.buildfolder import BuildFileError as BuildFileError  # re-exported: what a read-back raises
from teton.buildfolder import BuildFolder, device_dir, device_path
from teton.catalogue.naming import LldpPortId, PortNaming
from teton.fabric.bgpview import BgpView, PortAddress
from teton.fabric.model import Device, Fabric
from teton.findings import Finding
from teton.frr.conf import read_frr_bgp
from teton.secrets import resolve
from teton.targets.parallel import map_chunks, render_devices
from teton.targets.reference import ReferenceData

Files = dict[str, str]
_NO_STATE = object()
# set by the render's scheduler (`teton.targets.schedule`): each worker's chunk states, built once per target and
# render (not per chunk)
_STATES: dict[tuple[str, int], Any] | None = None


class Staged(NamedTuple):
    """A file a render's forked worker wrote into the build being published itself (`teton.targets.schedule.Stage`):
    its sha256 and size in bytes; its text stays on disk and never comes back to the parent."""

    sha256: str
    size: int


class DeviceCache(Protocol):
    """Rendered, validated files of one device by a content hash of its inputs (`teton.pipeline.cache.RenderCache`)."""

    def lookup(self, target: DeviceTarget, fabric: Fabric, device: str,
               ctx: RenderContext) -> tuple[str, Files | None]: ...

    def store(self, key: str, files: Files) -> None: ...

    def read_entry(self, key: str) -> Files | None:
        """The files stored under `key` (from `lookup`), not counted: another process may have stored them since."""
        ...

    def one_at_a_time(self, what: str, *, wait: bool = True) -> AbstractContextManager[bool]:
        """A lock of the processes sharing the cache folder (the two sides of a `teton diff`, two renders): whether
        this one holds it (with `wait`, always, once the holder let it go; without, False at once if another does)."""
        ...


@dataclass(frozen=True)
class RenderContext:
    """What every target gets besides the Fabric."""

    # reference data folders given by the caller, by `ReferenceData.name` (`--yang-dir`: {"sonic-yang-models": DIR});
    # what is not here, the target's own lookup finds (teton.targets.reference)
    folders: Mapping[str, Path] = field(default_factory=dict)
    validate: bool = True               # validate structured configs with the vendor's schema before writing text
    cache: DeviceCache | None = None    # per-device targets: files of devices whose inputs are unchanged, from here
    devices: frozenset[str] | None = None   # per-device targets: only these devices' files (None: every device)

    def folder(self, data: ReferenceData) -> Path | None:
        """The folder the caller gave for `data` (None: `data.find` looks where it is declared to)."""
        return self.folders.get(data.name)


BuildFiles = BuildFolder   # the name read-backs take: a build folder on disk or a render in memory


@dataclass
class PortView:
    mtu: int | None
    addresses: tuple[str, ...]        # with prefix lengths
    where: str                        # path inside the file where the MTU is set
    gateways: tuple[str, ...] = ()    # hosts: the next hop of this NIC, per family


@dataclass(frozen=True)
class QueueView:
    """One egress queue of one port as a switch's files schedule it (numbers as the NOS counts them: bytes)."""

    port: str
    queue: int
    strict: bool
    weight: int | None                # round-robin weight (EOS bandwidth percent, SONiC DWRR weight)
    ecn: tuple[int, int, int] | None  # WRED/ECN marking: min bytes, max bytes, probability percent
    where: str


@dataclass(frozen=True)
class QosView:
    lossless: tuple[int, ...]         # priorities with PFC (no-drop)
    dscp_to_tc: Mapping[int, int]
    where: str
    tc_to_queue: Mapping[int, int] | None = None   # None: queue n carries traffic class n (a NIC, EOS's default)
    queues: tuple[QueueView, ...] = ()             # switches: every queue of every port


@dataclass(frozen=True)
class LldpView:
    """What a device announces over LLDP, as its files configure it: the system name, and for each port (as the
    device names it) the port id (SONiC's lldpmgrd: the PORT alias; EOS and FBOSS: the port's name; a server: the
    interface name, from the lldpd role's variables)."""

    system: str
    ports: Mapping[str, str]
    where: str                        # the file and path it was read from


@dataclass
class DeviceView:
    """A device as its rendered files describe it, in no vendor's terms."""

    name: str
    kind: str                         # "switch" or "host"
    file: str                         # the file its BGP and interfaces were read from
    loopbacks: tuple[str, ...] = ()
    interfaces: dict[str, PortView] = field(default_factory=dict)
    bgp: BgpView | None = None        # its BGP in no vendor's terms (None: it runs none), the NOS's one BGP reader's
    qos: QosView | None = None
    qos_file: str = ""                # the file its interfaces and QoS were read from
    frr_conf: str | None = None       # the device's own FRR configuration, where it runs FRR (SONiC's bgpd)
    lldp: LldpView | None = None      # what it announces over LLDP, where its files say

    @property
    def asn(self) -> int | None:
        return self.bgp.asn if self.bgp is not None else None

    @property
    def router_id(self) -> str | None:
        return self.bgp.router_id if self.bgp is not None else None


def frr_bgp(view: DeviceView) -> BgpView | None:
    """The BGP of a view that hands over its frr.conf, read by teton's one FRR parser over the view's port addresses
    (None: no frr.conf, or no `router bgp` in it)."""
    if view.frr_conf is None:
        return None
    ports = [PortAddress(port, cidr) for port, p in view.interfaces.items() for cidr in p.addresses]
    return read_frr_bgp(view.name, view.file, view.frr_conf, ports, view.loopbacks)


@dataclass(frozen=True)
class ZeroTouch:
    """Day 0 of one switch as its NOS spells it (`DeviceTarget.zero_touch`, `teton ztp`): the file DHCP points the
    switch at (option 67), the provisioning files beside its build files, and the installer ONIE is pointed at
    (option 114), if its NOS is one ONIE installs and the spec names an image."""

    entry: str                      # a name among `files`
    files: Mapping[str, str]        # {file name: text}, served from the device's folder beside its build files
    onie_installer: str | None = None


class Target:
    """A target: one package of infra/teton/targets/, registered by the `TARGET` it defines."""

    name: ClassVar[str]               # the CLI's name for it (`teton render --only NAME`)
    summary: ClassVar[str]            # one line for `--help`
    nos: ClassVar[str | None] = None  # the switch NOS it configures; None for fabric-wide outputs
    version: ClassVar[str] = "1"      # bumped when the same Fabric would render differently
    # how its NOS names ports: {a switch model's `port_naming`: naming}, registered with the target
    port_namings: ClassVar[Mapping[str, PortNaming]] = {}
    # how its NOS announces a port over LLDP: {nos: port id}, registered with the target (none: the port's name)
    lldp_port_ids: ClassVar[Mapping[str, LldpPortId]] = {}
    # the vendor's reference data it reads (YANG models, IDL, CRDs), where it looks for each (teton.targets.reference)
    reference: ClassVar[tuple[ReferenceData, ...]] = ()

    # the estimate of its render's time (`cost`): seconds of one core per device of the fabric and per link, measured
    # on the 24k references (RoCE and InfiniBand) on a 2-core machine; only their ratios order the render's tasks
    cost_per_device: ClassVar[float] = 0.0002
    cost_per_link: ClassVar[float] = 0.0

    def cost(self, fabric: Fabric) -> float:
        """A rough estimate of its render's time in seconds (the render's scheduler starts long tasks first, and
        renders in place what would not pay for forking)."""
        return self.cost_per_device * len(fabric.devices) + self.cost_per_link * len(fabric.links)

    def check(self, fabric: Fabric, file: str) -> Iterator[Finding]:
        """Intents this target cannot spell, as findings with the spec path to change (run by `teton validate`)."""
        return iter(())

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        """{path relative to the build folder: text}, validated; SpecError listing every problem."""
        raise NotImplementedError

    def read_back(self, source: BuildFiles, fabric: Fabric, ctx: RenderContext,
                  vendor: bool = True) -> tuple[list[DeviceView], list[Finding]]:
        """Views of the devices whose files this target wrote, and findings (vendor validation when `vendor`)."""
        return [], []

    def resolve_secrets(self, files: Files, secrets: Mapping[str, str]) -> Files:
        """The files as pushed to a device: every `TETON_SECRET_<name>` reference replaced by what this NOS expects
        (here the cleartext value; a NOS that stores ciphertext overrides it).  Only for the push, in memory: the
        build folder never holds a secret.  SecretError (a KeyError) names a secret that is
        referenced but not given, or whose value its kind does not accept (teton.secrets)."""
        return {path: resolve(text, secrets, _json_string if path.endswith(".json") else None)
                for path, text in files.items()}


def _json_string(value: str) -> str:
    """`value` as it goes inside a JSON string."""
    return json.dumps(value)[1:-1]


class DeviceTarget(Target):
    """A switch NOS: a folder of files per switch whose `nos` is this target's (`teton.buildfolder.device_path`)."""

    nos: ClassVar[str]
    files: ClassVar[tuple[str, ...]]  # the file names it writes in each device's folder
    # a rough estimate of one device's render in seconds (the scheduler's chunks): this, and as much per interface
    device_cost: ClassVar[float] = 0.005
    interface_cost: ClassVar[float] = 0.0

    def device_estimate(self, device: Device) -> float:
        """`device_cost`, and `interface_cost` per interface of `device` (the scheduler's estimate of its render)."""
        return self.device_cost + self.interface_cost * len(device.interfaces)

    def devices(self, fabric: Fabric) -> list[Device]:
        return fabric.switches(self.nos)

    def zero_touch(self, device: Device, url: str, image: str | None) -> ZeroTouch | None:
        """Day 0: what this NOS's zero-touch provisioning fetches to come up with `device`'s files, which are served
        at `url` (the device's folder, ending in "/") beside what this returns; `image` the NOS image the spec names
        (`ztp.images`), if any.  None: teton spells no zero-touch provisioning for this NOS."""
        return None

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        """`prepare`, every device's files (`render_device`, in chunks on all cores), then `finish`.  The render's
        scheduler (`teton.targets.schedule`) runs the same three steps with the chunks among every other target's
        tasks (a device target does not override this)."""
        self.prepare(fabric, ctx)
        return self.finish(fabric, ctx, render_devices(partial(self._render_chunk, fabric, ctx),
                                                       self.device_names(fabric, ctx)))

    def device_names(self, fabric: Fabric, ctx: RenderContext) -> list[str]:
        """The devices whose files a render of `ctx` writes (`ctx.devices`: only those)."""
        only = ctx.devices
        return [d.name for d in self.devices(fabric) if only is None or d.name in only]

    def prepare(self, fabric: Fabric, ctx: RenderContext) -> None:
        """What the workers should inherit, done once in the parent before they fork (an IDL parsed)."""

    def finish(self, fabric: Fabric, ctx: RenderContext, files: Files,
               written: frozenset[str] = frozenset()) -> Files:
        """The target's files from its devices' files: those and any fabric-wide ones (per HwSKU files, EOS's ANTA
        catalogs).  `written`: the paths of its tasks' files that a build's forked workers wrote into the build
        themselves (`teton.targets.schedule.Stage`), which are not in `files` and must not be returned: nothing of a
        render reads a file's text once its task has ended but `finish`, which is told these paths only."""
        return files

    def render_chunk(self, fabric: Fabric, ctx: RenderContext, names: Sequence[str]) -> tuple[Files, list[Finding]]:
        """The files of the devices `names` and the findings; what one task of the render's scheduler runs."""
        return self._render_chunk(fabric, ctx, names)

    def _chunk_state(self, ctx: RenderContext) -> Any:
        if _STATES is None:
            return self.chunk_state(ctx)
        key = (self.name, id(ctx))
        if key not in _STATES:
            _STATES[key] = self.chunk_state(ctx)
        return _STATES[key]

    def _render_chunk(self, fabric: Fabric, ctx: RenderContext, names: Sequence[str]) -> tuple[Files, list[Finding]]:
        state: Any = _NO_STATE   # built at the first device that is not in the cache
        files: Files = {}
        problems: list[Finding] = []
        for name in names:
            key, cached = ctx.cache.lookup(self, fabric, name, ctx) if ctx.cache is not None else ("", None)
            if cached is not None:
                files.update(cached)
                continue
            if state is _NO_STATE:
                state = self._chunk_state(ctx)
            f, p = self.render_device(fabric, fabric.devices[name], ctx, state)
            files.update(f)
            problems += p
            if ctx.cache is not None and not p:
                ctx.cache.store(key, f)
        return files, problems

    def chunk_state(self, ctx: RenderContext) -> Any:
        """Something a worker builds once and reuses for its devices (a loaded schema, a templar)."""
        return None

    def render_device(self, fabric: Fabric, device: Device, ctx: RenderContext,
                      state: Any) -> tuple[Files, list[Finding]]:
        raise NotImplementedError

    def read_back(self, source: BuildFiles, fabric: Fabric, ctx: RenderContext,
                  vendor: bool = True) -> tuple[list[DeviceView], list[Finding]]:
        names = [d.name for d in self.devices(fabric)]
        views: list[DeviceView] = []
        findings: list[Finding] = []
        for v, f in map_chunks(partial(self._read_chunk, source, fabric, ctx, vendor), names):
            views += v
            findings += f
        return views, findings

    def _read_chunk(self, source: BuildFiles, fabric: Fabric, ctx: RenderContext, vendor: bool,
                    names: Sequence[str]) -> tuple[list[DeviceView], list[Finding]]:
        state = self.chunk_state(ctx) if vendor else None
        views: list[DeviceView] = []
        findings: list[Finding] = []
        for name in names:
            try:
                view, found = self.read_device(source, fabric.devices[name], state)
            except BuildFileError as exc:
                findings.append(Finding(exc.path, "", exc.problem, rule="io"))
                continue
            except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
                findings.append(Finding(device_dir(name), "", f"cannot be read back: {type(exc).__name__}: {exc}",
                                        rule="io"))
                continue
            if view is not None:
                if view.bgp is None:
                    view.bgp = frr_bgp(view)   # a target that hands over an frr.conf: its BGP from that
                views.append(view)
            findings += found
        return views, findings

    def read_device(self, source: BuildFiles, device: Device, state: Any) -> tuple[DeviceView | None, list[Finding]]:
        """The device's view from its files (None if they cannot be read back: a finding says why); with `state`
        (vendor checks on), also the vendor's findings."""
        raise NotImplementedError

    def read_bgp(self, source: BuildFiles, device: Device) -> BgpView | None:
        """The device's BGP as its files configure it (`teton verify`'s model; None: it runs no BGP): the view's
        `bgp`, or for a view that hands over an frr.conf, that.  A target overrides it only to read its BGP without
        the rest of the view, with the same reader `read_device` uses.  Raises what `read_device` raises."""
        view, _ = self.read_device(source, device, None)
        if view is None:
            return None
        return view.bgp if view.bgp is not None else frr_bgp(view)

    def read_bgp_views(self, source: BuildFiles, fabric: Fabric) -> tuple[list[BgpView], list[Finding]]:
        """`read_bgp` of every device of this target, on all cores; a device that cannot be read is a finding."""
        views: list[BgpView] = []
        findings: list[Finding] = []
        for v, f in map_chunks(partial(self._bgp_chunk, source, fabric), [d.name for d in self.devices(fabric)]):
            views += v
            findings += f
        return views, findings

    def _bgp_chunk(self, source: BuildFiles, fabric: Fabric,
                   names: Sequence[str]) -> tuple[list[BgpView], list[Finding]]:
        views: list[BgpView] = []
        findings: list[Finding] = []
        for name in names:
            try:
                view = self.read_bgp(source, fabric.devices[name])
            except BuildFileError as exc:
                findings.append(Finding(exc.path, "", exc.problem, rule="io"))
                continue
            except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
                findings.append(Finding(device_dir(name), "", f"cannot be read back: {type(exc).__name__}: {exc}",
                                        rule="io"))
                continue
            if view is not None:
                views.append(view)
        return views, findings

    @staticmethod
    def path(device: str, file: str) -> str:
        return device_path(device, file)
