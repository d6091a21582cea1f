"""How a NOS names the front-panel ports of a switch: a registry the NOS packages register into.

A switch model's `port_naming` (catalogue data) is a key of this registry.  The catalogue sits below the targets, so
the NOS packages (`teton.targets.<nos>`, or a plugin's own target) register their namings here through their target's
`port_namings`, and `teton.targets` installs the loader that registers the built-in ones.

Plugin discovery: the first lookup (`port_naming`, `port_namings`, `lldp_port_id`) imports the built-in plugin
package, `BUILTIN` (`teton.targets`), by name, which installs its loader (`add_loader`); then every loader runs.  So a
design or a fabric.json load works in a fresh interpreter whatever was imported before, and the catalogue still
imports nothing above it (the layers contract sees no import of the targets).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class PortPlace:
    """Where a port sits on its switch: what a naming may spell."""

    index: int        # position in the model's port list, 0-based
    first_lane: int   # its first SerDes lane (lanes are counted across the whole model)
    slot: int         # line card or port module holding it; 1 on a fixed switch
    position: int     # port number on that slot, 1-based


PortNaming = Callable[[PortPlace], str]
LldpPortId = Callable[[str, PortPlace, int], str]
"""The port id a NOS announces over LLDP for a port: (its name, its place, the model's slots) -> id."""

_NAMINGS: dict[str, PortNaming] = {}
_LLDP: dict[str, LldpPortId] = {}
_LOADERS: list[Callable[[], object]] = []
BUILTIN = "teton.targets"   # the package of the built-in NOS packages: imported by name at the first lookup


def register_port_naming(name: str, naming: PortNaming) -> None:
    """Add (or replace) the naming a switch model selects with `port_naming: <name>`."""
    _NAMINGS[name] = naming


def unregister_port_naming(name: str) -> None:
    _NAMINGS.pop(name, None)


def register_lldp_port_id(nos: str, port_id: LldpPortId) -> None:
    """Add (or replace) how switches running `nos` announce their ports over LLDP (unregistered: by name)."""
    _LLDP[nos] = port_id


def unregister_lldp_port_id(nos: str) -> None:
    _LLDP.pop(nos, None)


def lldp_port_id(nos: str) -> LldpPortId | None:
    """How switches running `nos` announce a port over LLDP; None: by the port's name."""
    if nos not in _LLDP:
        _load()
    return _LLDP.get(nos)


def add_loader(load: Callable[[], object]) -> None:
    """Something that registers namings when first needed (`teton.targets` loads its packages)."""
    if load not in _LOADERS:
        _LOADERS.append(load)


def _load() -> None:
    """Discover the built-in plugins (importing `BUILTIN` installs their loader), then run every loader."""
    importlib.import_module(BUILTIN)   # a no-op once imported
    for load in list(_LOADERS):
        load()


def port_namings() -> list[str]:
    """The registered namings, sorted."""
    _load()
    return sorted(_NAMINGS)


def port_naming(name: str) -> PortNaming:
    """The naming registered as `name`; KeyError listing the registered ones."""
    if name not in _NAMINGS:
        _load()
    try:
        return _NAMINGS[name]
    except KeyError:
        raise KeyError(f"no port naming {name!r} is registered (registered: {', '.join(sorted(_NAMINGS)) or 'none'}; "
                       f"the NOS packages register theirs when teton.targets is imported)") from None
