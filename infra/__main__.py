"""The Pulumi program: a thin face like the CLI (`teton.deploy.program` does the work).

Stack config names the spec (`teton:spec`) and the deploy mode (`teton:mode`: `twin` or `live`; `teton:target` is its
older spelling) and holds the secrets (`teton:secrets`, a secret object).  The program reads the spec's build folder
(`teton:build`, default build/<cluster>; `teton render SPEC` writes it), never designs, and registers one resource
per switch and per rack of hosts, in waves with health gates between them (components Cluster -> Zone -> Rack).
"""

from __future__ import annotations

from pathlib import Path

import pulumi  # type: ignore[import-not-found]
from pulumi.runtime.config import get_config  # type: ignore[import-not-found]
from pulumi.runtime.settings import get_monitor, get_root_directory, get_root_resource  # type: ignore[import-not-found]

import teton
from teton import environment
from teton.deploy import settings as stack_settings
from teton.deploy.program import Settings, check_secrets, deploy, plan_stack
from teton.deploy.registrar import Registrar

try:          # every setting checked before anything is registered: one line naming the setting, no traceback
    project = stack_settings.project_folder(get_root_directory() or environment.get(stack_settings.PROJECT_DIR_ENV),
                                            Path.cwd())
    stack = stack_settings.parse(lambda key: get_config(f"teton:{key}"), project)
    build = stack.build or project / "build" / teton.load(stack.spec).name
    plan = plan_stack(Settings(build, mode=stack.mode, twin=stack.twin, policy=stack.policy))
    if not stack.adopt:     # adopting touches no device: it needs no secret
        check_secrets(plan, stack_settings.secret_values(get_config("teton:secrets")))
except teton.SpecError as exc:           # the spec named in teton:spec does not load
    raise pulumi.RunError("\n".join(str(f) for f in exc.findings)) from None
except (teton.Error, ValueError) as exc:  # no build, a bad canary ...: one line, not a traceback
    raise pulumi.RunError(str(exc)) from None


async def main() -> dict:
    root = get_root_resource()
    registrar = Registrar(get_monitor())
    try:
        return await deploy(plan, registrar, await root.urn.future())
    except teton.Error as exc:       # the rollout stopped: the engine shows the resource's own error above this
        raise pulumi.RunError(str(exc)) from None
    finally:
        registrar.close()


pulumi.run(main)
