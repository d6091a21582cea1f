"""Registering resources with the engine's resource monitor directly, many at a time.

The SDK's `CustomResource`/`ComponentResource` build Outputs, futures and asyncio tasks for every property of every
resource; measured with the real engine on the 24k stack (6,676 resources), the program alone spent about 200 s of CPU
in a preview that took 299 s.  The program's resources have plain inputs (files, names) and no output is ever fed to
another resource, so this registrar sends `RegisterResourceRequest`s itself (the engine's public gRPC protocol,
`pulumi.runtime.proto`) from a thread pool and keeps only the URNs; parents and dependencies are URNs of resources
it registered before.  Under `pulumi.runtime.set_mocks` the SDK's mock monitor answers the same requests.

In an update the engine answers a registration only once the resource's step is done (pushed, gated); with
`supportsResultReporting` a failed step is answered with result FAIL, and the registrar raises `StepFailed` so the
program registers nothing that depends on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from google.protobuf import struct_pb2
from pulumi.runtime.proto import resource_pb2

from teton.findings import TetonError


class StepFailed(TetonError):
    """The engine reported a failed step (it reports the resource's error itself)."""


def to_struct(props: dict[str, Any] | None) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    if props:
        s.update(props)
    return s


class Registrar:
    def __init__(self, monitor: Any, workers: int = 32):
        self.monitor = monitor
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="teton-register")

    async def register(self, type_: str, name: str, parent: str, *, custom: bool,
                       props: dict[str, Any] | None = None, depends_on: Iterable[str] = ()) -> str:
        """The URN of the registered resource; StepFailed when the engine says its step failed."""
        req = resource_pb2.RegisterResourceRequest(
            type=type_, name=name, parent=parent, custom=custom, object=to_struct(props),
            dependencies=list(depends_on), acceptSecrets=True, supportsPartialValues=True,
            supportsResultReporting=True)
        resp = await asyncio.get_running_loop().run_in_executor(self.pool, self.monitor.RegisterResource, req)
        if getattr(resp, "result", resource_pb2.Result.SUCCESS) == resource_pb2.Result.FAIL:
            raise StepFailed(f"{type_} {name}")
        return str(resp.urn)

    async def component(self, type_: str, name: str, parent: str) -> str:
        urn = await self.register(type_, name, parent, custom=False)
        req = resource_pb2.RegisterResourceOutputsRequest(urn=urn, outputs=to_struct({}))
        await asyncio.get_running_loop().run_in_executor(self.pool, self.monitor.RegisterResourceOutputs, req)
        return urn

    def close(self) -> None:
        self.pool.shutdown(wait=False)
