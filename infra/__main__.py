"""The Pulumi program: a thin face like the CLI (`teton.deploy.program` does the work).

Stack config names the spec (`teton:spec`) and the target (`teton:target`: `twin` or `live`) and holds the secrets
(`teton:secrets`, a secret object).  The program reads the spec's build folder (`teton:build`, default
build/<cluster>; `teton render SPEC` writes it), never designs, and registers one resource per switch and per rack
of hosts, in waves with health gates between them (components Cluster -> Zone -> Rack).
"""

from __future__ import annotations

from pathlib import Path

import pulumi  # type: ignore[import-not-found]
from pulumi.runtime.settings import get_monitor, get_root_resource  # type: ignore[import-not-found]

from teton.deploy.program import Settings, deploy, plan_stack
from teton.deploy.registrar import Registrar
from teton.deploy.rollout import RolloutPolicy
from teton.findings import SpecError, TetonError
from teton.spec.load import load_spec

config = pulumi.Config("teton")
spec = config.require("spec")
canary = config.get_object("canary")
policy = RolloutPolicy(fraction=float(config.get("rolloutFraction") or 0.25),
                       max_wave=int(config.get("rolloutMaxWave") or 64),
                       canary=tuple(canary) if canary else None)
try:
    plan = plan_stack(Settings(Path(config.get("build") or Path("build") / load_spec(spec).name),
                               target=config.get("target") or "twin", twin=config.get("twin"), policy=policy))
except SpecError as exc:                 # the spec named in teton:spec does not load
    raise pulumi.RunError("\n".join(str(f) for f in exc.findings)) from None
except (TetonError, ValueError) as exc:   # no build, a bad canary ...: one line, not a traceback
    raise pulumi.RunError(str(exc)) from None


async def main() -> dict:
    root = get_root_resource()
    registrar = Registrar(get_monitor())
    try:
        return await deploy(plan, registrar, await root.urn.future())
    except TetonError as exc:        # the rollout stopped: the engine shows the resource's own error above this
        raise pulumi.RunError(str(exc)) from None
    finally:
        registrar.close()


pulumi.run(main)
