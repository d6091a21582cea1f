"""Deploy: a build folder onto switches and hosts, through the real Pulumi engine.

- `push`: a device's files with every secret reference resolved the way its NOS expects (in memory only: the build
  folder, the logs and the Pulumi state carry references, never values).
- `program`, `registrar`, `rollout`: what the Pulumi program (infra/__main__.py) registers, in which waves.
- `provider`: teton's own resource provider plugin (`pulumi-resource-teton`); `langhost`: the language host.
- `transports`, `eapi`, `hosts`: how files reach the twin, EOS, SONiC, the subnet manager and hosts
  (FRR through its own tools: `teton.frr.vtysh`).
- `drift`: what the twin's switches run that differs from a build (`teton drift`); `engine`: running the CLI.
"""
