"""The targets registry: every package under infra/teton/targets/ that defines `TARGET` is a target.

Adding a target (a NOS, OpenSM files, an Ansible inventory ...) is adding one package here, or registering a `Target`
from elsewhere with `register` (a plugin; a test).  The CLI's `--only` choices, the spec rule "every NOS in the spec has
a target" and every render, read-back and vendor check come from this registry, so nothing else lists targets.

A target also brings what its NOS needs elsewhere: `port_namings` (registered into `teton.catalogue.naming` with the
target, so the design names a switch's ports as its NOS does), its Jinja2 templates (`teton.targets.templates`, a
`templates/` folder in its own package) and its transports (`teton.targets.transports`, by deploy mode and NOS).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

from teton.catalogue import catalogue_for
from teton.catalogue.naming import (
    add_loader,
    port_namings,
    register_lldp_port_id,
    register_port_naming,
    unregister_lldp_port_id,
    unregister_port_naming,
)
from teton.fabric.model import Fabric
from teton.fabric.roles import tier_roles
from teton.findings import Finding
from teton.spec.model import Cluster, RoceBackend
from teton.targets.base import (
    BuildFileError,
    BuildFiles,
    DeviceTarget,
    DeviceView,
    Files,
    LldpView,
    PortView,
    QosView,
    QueueView,
    RenderContext,
    Target,
    ZeroTouch,
)

__all__ = ["BuildFileError", "BuildFiles", "DeviceTarget", "DeviceView", "Files", "LldpView", "PortView", "QosView",
           "QueueView", "RenderContext", "Target", "ZeroTouch", "check_fabric", "check_nos", "check_port_naming", "get",
           "names", "nos_target", "reference_folders", "register", "targets", "unregister"]

_EXTRA: dict[str, Target] = {}


@cache
def _builtin() -> dict[str, Target]:
    found: dict[str, Target] = {}
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"{__name__}.{info.name}")
        target = getattr(module, "TARGET", None)
        if isinstance(target, Target):
            found[target.name] = target
            _register_namings(target)
    return found


def _register_namings(target: Target) -> None:
    for naming, name_port in target.port_namings.items():
        register_port_naming(naming, name_port)
    for nos, port_id in target.lldp_port_ids.items():
        register_lldp_port_id(nos, port_id)


add_loader(_builtin)   # the design asks for a naming: the built-in packages register theirs


def targets() -> list[Target]:
    """Every registered target, by name."""
    merged = {**_builtin(), **_EXTRA}
    return [merged[n] for n in sorted(merged)]


def names() -> list[str]:
    return [t.name for t in targets()]


def get(name: str) -> Target:
    for t in targets():
        if t.name == name:
            return t
    raise KeyError(f"no target {name!r} (registered: {', '.join(names())})")


def nos_target(nos: str) -> Target | None:
    """The target that configures switches running `nos`, if one is registered."""
    return next((t for t in targets() if t.nos == nos), None)


def reference_folders(by_option: Mapping[str, str | Path | None]) -> dict[str, Path]:
    """`RenderContext.folders` from folders given by command-line option ({"--yang-dir": DIR}; None: not given): each
    under the name of the reference data a registered target declares for that option."""
    declared = {r.option: r for t in targets() for r in t.reference if r.option}
    out: dict[str, Path] = {}
    for option, folder in by_option.items():
        if folder is not None:
            if option not in declared:
                raise KeyError(f"no target declares reference data for {option} (teton.targets.reference)")
            out[declared[option].name] = Path(folder)
    return out


def register(target: Target) -> Target:
    """Add (or replace, by name) a target from outside this package."""
    if not isinstance(target, Target):
        raise TypeError(f"{target!r} is not a teton.targets.Target")
    _EXTRA[target.name] = target
    _register_namings(target)
    return target


def unregister(name: str) -> None:
    target = _EXTRA.pop(name, None)
    if target is not None:
        for naming in target.port_namings:
            unregister_port_naming(naming)
        for nos in target.lldp_port_ids:
            unregister_lldp_port_id(nos)
        _builtin.cache_clear()   # a built-in naming the extra one replaced is registered again


def _tiers(c: Cluster) -> Iterator[tuple[str, str]]:
    """(spec path of the tier, nos) of every switch tier."""
    if isinstance(c.backend, RoceBackend):
        for t in tier_roles("roce"):
            yield f"backend.{t}", getattr(c.backend, t).nos
    if c.frontend is not None:
        yield "frontend.rsw", c.frontend.rsw.nos
        yield "frontend.fsw", c.frontend.fsw.nos


def check_nos(c: Cluster, file: str) -> Iterator[Finding]:
    """Every NOS in the spec has a registered target: a switch must never silently get no configuration."""
    nos_names = sorted(t.nos for t in targets() if t.nos)
    for path, nos in _tiers(c):
        if nos_target(nos) is None:
            tier = path.rpartition(".")[2]
            yield Finding(file, f"{path}.nos", f"no target renders {nos!r} configs, so the {tier} switches would get "
                          f"no configuration; NOS with a target: {', '.join(nos_names)}", rule="nos-no-target")


def check_port_naming(c: Cluster, file: str) -> Iterator[Finding]:
    """Every switch model the spec uses names its ports with a registered naming (a NOS package brings it)."""
    known = port_namings()
    own = {m.name: i for i, m in enumerate(c.switch_models)}
    for name, model in sorted(catalogue_for(c).items()):
        where = f"switch_models[{own[name]}]" if name in own else f"catalogue {name}"
        for key, naming in [("port_naming", model.port_naming)] + sorted(
                (f"nos_port_naming.{nos}", n) for nos, n in model.nos_port_naming.items()):
            if naming not in known:
                yield Finding(file, f"{where}.{key}", f"no NOS package registers the port naming {naming!r} of "
                              f"model {name!r}; registered: {', '.join(known)}", rule="unknown-port-naming")


def check_fabric(fabric: Fabric, file: str) -> list[Finding]:
    """What each target says it cannot spell of this fabric's intents."""
    return [f for t in targets() for f in t.check(fabric, file)]

