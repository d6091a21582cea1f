"""The project's own Pulumi language host (`pulumi-language-python`), so that plain `pulumi up` runs the program.

The engine built from the Go modules has no Python language host (its Go module is refused by the module proxy here),
and without one `pulumi preview` fails with "no language plugin 'pulumi-language-python' found".  The engine starts
this host (scripts/pulumi-language-python runs it with the venv's Python) with flags and, as its last argument, the
engine's address; the host prints the port of its gRPC `LanguageRuntime` server on its first line of stdout and
serves until the engine kills it.

The servicer is the Python SDK's own (`pulumi.automation._server.LanguageServer`, private API: the SDK version is
pinned in pyproject.toml and tests/deploy/test_pulumi_e2e.py runs it under the engine).  `Run` points it at the
project's program (`request.info`: program directory and entry point, `main:` of Pulumi.yaml) and at the engine's
address from the command line, runs the program with `runpy` as `python <dir>` would, in the engine's working
directory, and reports the program's errors to the engine.  The project folder (where Pulumi.yaml is) goes to the
program as `$TETON_PROJECT_DIR`: the paths of the stack config are relative to it.
"""

from __future__ import annotations

import os
import runpy
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pulumi.automation._server import LanguageServer
from pulumi.runtime.proto import language_pb2, language_pb2_grpc, plugin_pb2

from teton import environment
from teton.deploy.plugin import serve_plugin
from teton.deploy.settings import PROJECT_DIR_ENV

SDK_VERSION = "3.272.0"    # the pinned SDK whose servicer this host serves (pyproject.toml)
_SDK_RUN: Callable[[LanguageServer, Any, Any], Any] = LanguageServer.Run
"""The SDK server's own Run (the SDK does not annotate it; this is its signature: request, context -> response)."""


def program_path(info_dir: str, entry_point: str, fallback: str) -> Path:
    """The file or folder to run: `main:` of Pulumi.yaml as the engine resolved it."""
    base = Path(info_dir or fallback)
    return base if entry_point in ("", ".") else base / entry_point


class ProgramHost(LanguageServer):
    """The SDK's language server, running the project's program from disk instead of an inline function."""

    def __init__(self, engine_address: str) -> None:
        super().__init__(program=self._run_program)
        self.engine_address = engine_address
        self._target: Path | None = None

    def _run_program(self) -> None:
        assert self._target is not None
        target = self._target
        folder = target if target.is_dir() else target.parent
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        runpy.run_path(str(target), run_name="__main__")

    def Run(self, request: Any, context: Any) -> Any:  # noqa: N802 (gRPC method name)
        self._target = program_path(request.info.program_directory, request.info.entry_point, request.program)
        if request.pwd:
            os.chdir(request.pwd)
        if request.info.root_directory:        # where Pulumi.yaml is: the program resolves config paths there
            environment.export(PROJECT_DIR_ENV, request.info.root_directory)
        run = language_pb2.RunRequest()
        run.CopyFrom(request)
        del run.args[:]
        run.args.append(self.engine_address)   # the SDK's server takes the engine's address from args[0]
        if profile := environment.get("TETON_PROGRAM_PROFILE"):   # where the program's time goes (bench/)
            import cProfile

            with cProfile.Profile() as prof:
                result = _SDK_RUN(self, run, context)
            prof.dump_stats(profile)
            return result
        return _SDK_RUN(self, run, context)

    def GetPluginInfo(self, request: Any, context: Any) -> Any:  # noqa: N802
        return plugin_pb2.PluginInfo(version=SDK_VERSION)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    engine_address = args[-1] if args and not args[-1].startswith("-") else ""   # always the last argument
    serve_plugin(lambda server: language_pb2_grpc.add_LanguageRuntimeServicer_to_server(ProgramHost(engine_address),
                                                                                     server), threads=4)

if __name__ == "__main__":
    main()
