"""teton's own Pulumi resource provider (`pulumi-resource-teton`): the ResourceProvider gRPC service, implemented
directly, with no dynamic-provider pickling.

Why not a Python dynamic provider: each of its calls unpickles the provider and goes through the SDK's generic
serialization; measured here, about 140 ms per resource in a preview, 8 minutes for the 24k cluster's switches.  This
provider answers `Check` with the inputs as they came and `Diff` by comparing the old and new input messages
(protobuf equality, in C) before decoding anything, so a resource that did not change costs a few tens of
microseconds here; only a changed resource is decoded to name the files (and so the lines) that differ.

Resource types (inputs are what the program reads from the build folder; outputs stay small, a digest and the
drift, so the state holds each file once):
- `teton:index:Switch`: one switch; `files` {name: text} as rendered (secret *references*), `nos`, `transport`
  (`twin`/`live`), `twin`, `mgmt`, `wave`, `cluster` (no path: the build folder is `teton:build` or
  build/<cluster>, so moving it changes no input).  Create/Update: snapshot, push, health check, and on a failed
  check roll back and fail.  Read (`pulumi refresh`): `drift`, the lines the device runs that differ.
- `teton:index:HostRack`: the hosts of one rack; `files` their host variables.  Live: the playbooks through
  ansible-runner limited to the rack's group; twin: the twin's host namespaces are checked against them.
- `teton:index:SubnetManager` (InfiniBand): the OpenSM target's files, pushed to the subnet manager hosts (live).
- `teton:index:Gate`: the health gate after a wave: the twin's whole `verify`, or every device of the wave checked;
  a failed gate rolls back the devices this run pushed in that wave, in reverse order, and fails the update.

Provider configuration (stack config `teton:*`): `secrets` (a Pulumi secret: {name: value}, resolved per NOS at
push time, in memory only), `checkTimeout` (seconds a device may take to become healthy, default 30),
`eapiVerify` (CA file, or `false`), `eapiPort`, `adopt` (record the build as deployed without touching a device),
`build`, `playbooks` (default: the checkout's playbooks/).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import traceback
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import empty_pb2, struct_pb2
from google.protobuf.json_format import MessageToDict
from pulumi.runtime.proto import plugin_pb2, provider_pb2, provider_pb2_grpc

from teton.buildfolder import BuildFolder
from teton.deploy import modes  # noqa: F401  (registers the built-in transports)
from teton.deploy import settings as stack_settings
from teton.deploy.hosts import HostRack, host_transport
from teton.deploy.plugin import serve_plugin
from teton.deploy.program import GATE, HOST_RACK, PLAYBOOKS, SUBNET_MANAGER, SWITCH
from teton.deploy.push import resolve_files
from teton.deploy.registrar import to_struct
from teton.deploy.transports import Device, SubnetManagerSsh, Transport
from teton.fabric.model import Fabric
from teton.findings import TetonError
from teton.targets.transports import TransportSettings, transport_factory

VERSION = "0.1.0"
DIFFED = {SWITCH: ("files", "nos", "transport", "twin", "mgmt"),
          HOST_RACK: ("files", "hosts", "transport", "twin", "playbooks"),
          GATE: ("digest", "devices", "transport", "twin"),
          SUBNET_MANAGER: ("files", "hosts", "config_dir", "transport")}
"""Inputs whose change is a change on the device; the others (`wave`, `cluster`, placement) only describe it."""

_Kind = provider_pb2.PropertyDiff.Kind


def _plain(s: struct_pb2.Struct) -> dict[str, Any]:
    return MessageToDict(s, preserving_proto_field_name=True)


def _secret_free(value: Any) -> Any:
    """Pulumi wraps a secret as {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
    "value": ...}; the provider gets plain values (acceptSecrets is off), but unwrap defensively."""
    if isinstance(value, dict) and "4dabf18193072939515e22adb298388d" in value:
        return value.get("value")
    return value


def digest(files: dict[str, str]) -> str:
    h = hashlib.sha256()
    for name in sorted(files):
        h.update(name.encode() + b"\0" + files[name].encode() + b"\0")
    return h.hexdigest()


def detailed_diff(kind: str, olds: dict[str, Any], news: dict[str, Any],
                  drift: list[Any]) -> dict[str, provider_pb2.PropertyDiff]:
    """Property path -> kind of change, for the keys that are changes on the device; one entry per file."""
    out: dict[str, provider_pb2.PropertyDiff] = {}
    for key in DIFFED[kind]:
        old, new = olds.get(key), news.get(key)
        if key == "files":
            old, new = old or {}, new or {}
            for name in sorted(set(old) | set(new)):
                if old.get(name) != new.get(name):
                    k = _Kind.ADD if name not in old else _Kind.DELETE if name not in new else _Kind.UPDATE
                    out[f'files["{name}"]'] = provider_pb2.PropertyDiff(kind=k, inputDiff=True)
        elif old != new:
            out[key] = provider_pb2.PropertyDiff(kind=_Kind.UPDATE, inputDiff=True)
    if drift:
        out["drift"] = provider_pb2.PropertyDiff(kind=_Kind.UPDATE, inputDiff=False)
    return out


class Provider(provider_pb2_grpc.ResourceProviderServicer):
    def __init__(self) -> None:
        self.config: dict[str, Any] = {}
        self._folders: dict[Path, BuildFolder] = {}
        self._transports: dict[tuple[str, str], Any] = {}
        self._lock = threading.Lock()
        self.pushed: dict[int, list[tuple[Device, Transport, Any]]] = defaultdict(list)   # wave -> this run

    # ------------------------------------------------------------------ configuration

    def GetPluginInfo(self, request: Any, context: Any) -> Any:  # noqa: N802
        return plugin_pb2.PluginInfo(version=VERSION)

    def GetSchema(self, request: Any, context: Any) -> Any:  # noqa: N802
        return provider_pb2.GetSchemaResponse(schema=json.dumps({"name": "teton", "version": VERSION}))

    def CheckConfig(self, request: Any, context: Any) -> Any:  # noqa: N802
        return provider_pb2.CheckResponse(inputs=request.news)

    def DiffConfig(self, request: Any, context: Any) -> Any:  # noqa: N802
        return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)

    def Configure(self, request: Any, context: Any) -> Any:  # noqa: N802
        args = _plain(request.args) if request.HasField("args") else {}
        for key, value in request.variables.items():         # "teton:secrets" -> "secrets"
            args.setdefault(key.split(":", 1)[-1], value)
        self.config = {k: _secret_free(v) for k, v in args.items()}
        return provider_pb2.ConfigureResponse(acceptSecrets=False, supportsPreview=True, acceptResources=False)

    def secrets(self) -> dict[str, str]:
        raw = self.config.get("secrets") or {}
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raise TetonError("config teton:secrets must be an object {name: value}") from None
        return {str(k): str(v) for k, v in raw.items()}

    # ------------------------------------------------------------------ check and diff: the hot path

    def Check(self, request: Any, context: Any) -> Any:  # noqa: N802
        return provider_pb2.CheckResponse(inputs=request.news)

    def Diff(self, request: Any, context: Any) -> Any:  # noqa: N802
        olds = request.old_inputs if request.HasField("old_inputs") else request.olds
        drift_value = request.olds.fields.get("drift")
        drift = list(drift_value.list_value.values) if drift_value is not None else []
        if olds == request.news and not drift:
            return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)
        diff = detailed_diff(request.type or _type_of(request.urn), _plain(olds), _plain(request.news), drift)
        if not diff:
            return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_NONE)
        return provider_pb2.DiffResponse(changes=provider_pb2.DiffResponse.DIFF_SOME, diffs=sorted(diff),
                                         detailedDiff=diff, hasDetailedDiff=True)

    # ------------------------------------------------------------------ create, update, read, delete

    def Create(self, request: Any, context: Any) -> Any:  # noqa: N802
        kind = request.type or _type_of(request.urn)
        props = _plain(request.properties)
        name = _name_of(kind, props)
        if request.preview:
            return provider_pb2.CreateResponse(id=name)
        outputs = self._guard(context, lambda: self._apply(kind, props))
        return provider_pb2.CreateResponse(id=name, properties=to_struct(outputs))

    def Update(self, request: Any, context: Any) -> Any:  # noqa: N802
        kind = request.type or _type_of(request.urn)
        news = _plain(request.news)
        if request.preview:
            return provider_pb2.UpdateResponse(properties=request.olds)
        outputs = self._guard(context, lambda: self._apply(kind, news))
        return provider_pb2.UpdateResponse(properties=to_struct(outputs))

    def Read(self, request: Any, context: Any) -> Any:  # noqa: N802
        kind = request.type or _type_of(request.urn)
        inputs = _plain(request.inputs) if request.HasField("inputs") else {}
        state = _plain(request.properties) if request.HasField("properties") else dict(inputs)
        if kind == SWITCH and inputs:
            drift = self._guard(context, lambda: self._drift(inputs))
            state = {**state, "drift": drift}
        return provider_pb2.ReadResponse(id=request.id, properties=to_struct(state),
                                         inputs=request.inputs if request.HasField("inputs") else None)

    def Delete(self, request: Any, context: Any) -> Any:  # noqa: N802
        return empty_pb2.Empty()        # a switch or rack left out of the build is not wiped: it is forgotten

    def Cancel(self, request: Any, context: Any) -> Any:  # noqa: N802
        return empty_pb2.Empty()

    # ------------------------------------------------------------------ the work

    def _guard(self, context: Any, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except TetonError as exc:
            context.abort(grpc.StatusCode.UNKNOWN, str(exc))
        except Exception as exc:   # noqa: BLE001 (a bug must reach the engine as an error, not kill the plugin)
            context.abort(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
        raise AssertionError("unreachable")

    def build(self, props: dict[str, Any]) -> Path:
        """The build folder: `teton:build`, else build/<cluster> (relative to the project folder, the engine runs its
        plugins there), as the program reads it."""
        return Path(self.config.get("build") or Path("build") / str(props.get("cluster", ""))).resolve()

    def fabric(self, build: str | Path) -> Fabric:
        """The Fabric of the build folder `build`, read once for the life of the provider (one engine run)."""
        with self._lock:
            folder = self._folders.setdefault(Path(build), BuildFolder(build))
            return folder.fabric()

    def transport(self, props: dict[str, Any], nos: str) -> Any:
        how = props.get("transport", "twin")
        key = (how, props.get("twin", "") if how == "twin" else nos)
        with self._lock:
            if key not in self._transports:
                self._transports[key] = self._make_transport(how, nos, props)
            return self._transports[key]

    def _make_transport(self, how: str, nos: str, props: dict[str, Any]) -> Any:
        """The transport registered for (deploy mode, NOS): `teton.targets.transports`."""
        try:
            factory = transport_factory(how, nos)
        except LookupError as exc:
            raise TetonError(str(exc)) from None
        return factory(TransportSettings(self.secrets(), self.config, str(props.get("twin", ""))))

    def device(self, props: dict[str, Any]) -> Device:
        return Device(props["device"], props["nos"], dict(props.get("files") or {}), props.get("mgmt"),
                      self.fabric(self.build(props)))

    def timeout(self) -> float:
        return stack_settings.check_timeout(self.config.get("checkTimeout"))

    def adopting(self) -> bool:
        """`teton:adopt true`: record the build as what the devices run, touching none (a cluster configured before
        teton managed it); `pulumi refresh` then reports any drift."""
        return stack_settings.adopt(self.config.get("adopt"))

    def _apply(self, kind: str, props: dict[str, Any]) -> dict[str, Any]:
        if self.adopting():
            return {"digest": digest(dict(props.get("files") or {}))} | ({"drift": []} if kind == SWITCH else {})
        if kind == SWITCH:
            return self._push_switch(props)
        if kind == HOST_RACK:
            rack = HostRack(props["rack"], list(props.get("hosts") or []), dict(props.get("files") or {}),
                            str(self.build(props)), str(self.config.get("playbooks") or PLAYBOOKS))
            host_transport(props.get("transport", "twin"), props.get("twin", ""), self.secrets()).apply(rack)
            return {"digest": digest(rack.files)}
        if kind == GATE:
            return self._gate(props)
        if kind == SUBNET_MANAGER:
            return self._subnet_manager(props)
        raise TetonError(f"unknown resource type {kind}")

    def _push_switch(self, props: dict[str, Any]) -> dict[str, Any]:
        device = self.device(props)
        transport = self.transport(props, device.nos)
        snapshot = transport.snapshot(device)
        try:
            transport.push(device)
        except TetonError as exc:
            _rollback(transport, device, snapshot)
            raise TetonError(f"{exc}; rolled back to its previous config") from None
        problems = transport.check(device, self.timeout())
        if problems:
            _rollback(transport, device, snapshot)
            after = transport.check(device, self.timeout())
            state = "healthy again" if not after else "still unhealthy: " + "; ".join(after[:3])
            raise TetonError(f"{device.name} (wave {int(props.get('wave', 0))}): unhealthy after the push: "
                             f"{'; '.join(problems[:5])}; rolled back to its previous config ({state}); the "
                             "rollout stops here, later waves are untouched")
        with self._lock:
            self.pushed[int(props.get("wave", 0))].append((device, transport, snapshot))
        return {"digest": digest(device.files), "drift": []}

    def _gate(self, props: dict[str, Any]) -> dict[str, Any]:
        wave = int(props.get("wave", 0))
        with self._lock:    # the wave's snapshots (resolved configs): needed only until its gate has run
            pushed = list(reversed(self.pushed.pop(wave, [])))
        problems: list[str] = []
        if props.get("transport", "twin") == "twin":
            from teton.twin import service

            report = service.verify(str(props.get("twin")))
            if not report["ok"]:
                problems.append(_verify_summary(report))
        else:
            for name in props.get("devices") or []:
                d = Device(name, props["nos_of"][name], {}, props["mgmt_of"].get(name), self.fabric(self.build(props)))
                problems += [f"{name}: {p}" for p in self.transport(props, d.nos).check(d, self.timeout())]
        if problems:
            for device, transport, snapshot in pushed:
                _rollback(transport, device, snapshot)
            names = ", ".join(d.name for d, _, _ in pushed) or "none"
            raise TetonError(f"gate after wave {props.get('name', wave)} failed: {'; '.join(problems[:5])}; rolled "
                             f"back what this run pushed in that wave ({names}); the stack still records them as "
                             "updated: run `pulumi refresh` (or `pulumi up --refresh`) before the next update")
        return {"checked": len(props.get("devices") or [])}

    def _subnet_manager(self, props: dict[str, Any]) -> dict[str, Any]:
        if props.get("transport") != "live":
            raise TetonError("the twin has no InfiniBand fabric (tests/ib runs OpenSM over ibsim): use mode live")
        secrets = self.secrets()
        files = resolve_files("opensm", dict(props.get("files") or {}), secrets)
        SubnetManagerSsh(secrets, user=secrets.get("ssh_user", "admin")).push(
            list(props.get("hosts") or []), str(props.get("config_dir", "/etc/opensm")), files)
        return {"digest": digest(dict(props.get("files") or {}))}

    def _drift(self, props: dict[str, Any]) -> list[str]:
        device = self.device(props)
        return list(self.transport(props, device.nos).drift(device))


def _rollback(transport: Any, device: Device, snapshot: Any) -> None:
    try:
        transport.restore(device, snapshot)
    except TetonError as exc:
        raise TetonError(f"{device.name}: the push failed and so did the rollback: {exc}") from None


def _verify_summary(report: dict[str, Any]) -> str:
    bgp, ping, ecmp = report["bgp"], report["same_rail_ping"], report["ecmp"]
    parts = []
    if bgp["mismatched"]:
        parts.append(f"BGP {bgp['established']}/{bgp['expected_sessions']} sessions "
                     f"({', '.join(sorted(bgp['mismatched'])[:4])})")
    if ping["failed"]:
        parts.append(f"{len(ping['failed'])}/{ping['pinged']} same-rail pings failed")
    if ecmp["mismatched"]:
        parts.append(f"{len(ecmp['mismatched'])} ECMP widths off the design")
    if report.get("unchecked"):
        parts.append("nothing probed: " + ", ".join(report["unchecked"]))
    return f"twin verify of {report['twin']}: " + ("; ".join(parts) or "not ok")


def _type_of(urn: str) -> str:
    return urn.split("::")[-2].split("$")[-1] if "::" in urn else ""


def _name_of(kind: str, props: dict[str, Any]) -> str:
    return str(props.get("device") or props.get("rack") or props.get("name") or kind)


def serve() -> None:
    """Run as the engine's plugin: print the port on the first line of stdout, serve until killed."""
    serve_plugin(lambda server: provider_pb2_grpc.add_ResourceProviderServicer_to_server(Provider(), server),
                 threads=int(os.environ.get("TETON_PROVIDER_THREADS", 16)))

if __name__ == "__main__":
    serve()
