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

The servicer here decodes each request and answers it; the work is elsewhere: the typed inputs in
`teton.deploy.inputs`, the push/gate/rollback of a wave in `teton.deploy.orchestration`, the transports one run opens
in `teton.deploy.transport_pool`, and the twin a gate verifies in `teton.deploy.twin_client`.

Provider configuration (stack config `teton:*`): `secrets` (a Pulumi secret: {name: value}, resolved per NOS at
push time, in memory only), `checkTimeout` (seconds a device may take to become healthy, default 30),
`eapiVerify` (CA file, or `false`), `eapiPort`, `adopt` (record the build as deployed without touching a device),
`build`, `playbooks` (default: the checkout's playbooks/).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import grpc
from google.protobuf import empty_pb2, struct_pb2
from google.protobuf.json_format import MessageToDict
from pulumi.runtime.proto import plugin_pb2, provider_pb2, provider_pb2_grpc

from teton import environment
from teton.deploy.inputs import GATE, HOST_RACK, SUBNET_MANAGER, SWITCH
from teton.deploy.orchestration import Orchestrator
from teton.deploy.plugin import serve_plugin
from teton.deploy.registrar import to_struct
from teton.findings import TetonError

VERSION = "0.1.0"
DIFFED = {SWITCH: ("files", "nos", "transport", "twin", "mgmt"),
          HOST_RACK: ("files", "hosts", "transport", "twin", "playbooks"),
          GATE: ("digest", "devices", "transport", "twin"),
          SUBNET_MANAGER: ("files", "hosts", "config_dir", "transport")}
"""Inputs whose change is a change on the device; the others (`wave`, `cluster`, placement) only describe it."""

_Kind = provider_pb2.PropertyDiff.Kind
_T = TypeVar("_T")


def _plain(s: struct_pb2.Struct) -> dict[str, Any]:
    return MessageToDict(s, preserving_proto_field_name=True)


def _secret_free(value: Any) -> Any:
    """Pulumi wraps a secret as {"4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
    "value": ...}; the provider gets plain values (acceptSecrets is off), but unwrap defensively."""
    if isinstance(value, dict) and "4dabf18193072939515e22adb298388d" in value:
        return value.get("value")
    return value


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
    """The ResourceProvider gRPC service: decodes each request, hands the work to its `Orchestrator`."""

    def __init__(self) -> None:
        self.orchestrator = Orchestrator()

    @property
    def config(self) -> dict[str, Any]:
        return self.orchestrator.config

    @config.setter
    def config(self, value: dict[str, Any]) -> None:
        self.orchestrator.config = value

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
        outputs = _guard(context, lambda: self.orchestrator.apply(kind, props))
        return provider_pb2.CreateResponse(id=name, properties=to_struct(outputs))

    def Update(self, request: Any, context: Any) -> Any:  # noqa: N802
        kind = request.type or _type_of(request.urn)
        news = _plain(request.news)
        if request.preview:
            return provider_pb2.UpdateResponse(properties=request.olds)
        outputs = _guard(context, lambda: self.orchestrator.apply(kind, news))
        return provider_pb2.UpdateResponse(properties=to_struct(outputs))

    def Read(self, request: Any, context: Any) -> Any:  # noqa: N802
        kind = request.type or _type_of(request.urn)
        inputs = _plain(request.inputs) if request.HasField("inputs") else {}
        state = _plain(request.properties) if request.HasField("properties") else dict(inputs)
        if kind == SWITCH and inputs:
            drift = _guard(context, lambda: self.orchestrator.drift(inputs))
            state = {**state, "drift": drift}
        return provider_pb2.ReadResponse(id=request.id, properties=to_struct(state),
                                         inputs=request.inputs if request.HasField("inputs") else None)

    def Delete(self, request: Any, context: Any) -> Any:  # noqa: N802
        return empty_pb2.Empty()        # a switch or rack left out of the build is not wiped: it is forgotten

    def Cancel(self, request: Any, context: Any) -> Any:  # noqa: N802
        return empty_pb2.Empty()


def _guard(context: Any, fn: Callable[[], _T]) -> _T:
    """`fn`'s answer; a TetonError (or a bug) reaches the engine as the request's error, not a dead plugin."""
    try:
        return fn()
    except TetonError as exc:
        context.abort(grpc.StatusCode.UNKNOWN, str(exc))
    except Exception as exc:   # noqa: BLE001 (a bug must reach the engine as an error, not kill the plugin)
        context.abort(grpc.StatusCode.INTERNAL, f"{type(exc).__name__}: {exc}\n{traceback.format_exc()[-1500:]}")
    raise AssertionError("unreachable")


def _type_of(urn: str) -> str:
    return urn.split("::")[-2].split("$")[-1] if "::" in urn else ""


def _name_of(kind: str, props: dict[str, Any]) -> str:
    return str(props.get("device") or props.get("rack") or props.get("name") or kind)


def serve() -> None:
    """Run as the engine's plugin: print the port on the first line of stdout, serve until killed."""
    serve_plugin(lambda server: provider_pb2_grpc.add_ResourceProviderServicer_to_server(Provider(), server),
                 threads=int(environment.get("TETON_PROVIDER_THREADS") or 16))

if __name__ == "__main__":
    serve()
