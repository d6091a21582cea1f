"""How a build reaches a NOS's devices: transports by deploy mode and NOS, a registry the deploy layer resolves from.

A deploy mode is how the Pulumi provider pushes a switch's rendered files: `twin` (the digital twin, for any NOS) or
`live` (the real switches, one transport per NOS).  A NOS package registers its factories here when it is imported (a
lookup loads the target packages first), so the provider needs no list of NOS.  A factory gets the deploy's settings
and returns an object with the deploy layer's `Transport` methods (snapshot, push, check, restore, drift).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ANY_NOS = "*"   # a factory registered for every NOS of a mode (the twin runs them all)


@dataclass(frozen=True)
class TransportSettings:
    """What a transport factory gets from the deploy."""

    secrets: Mapping[str, str]   # resolved secrets (credentials, keys)
    config: Mapping[str, Any]    # the provider's stack configuration (e.g. eapiPort, eapiVerify)
    twin: str = ""               # the twin's name, in mode `twin`


TransportFactory = Callable[[TransportSettings], Any]

_FACTORIES: dict[tuple[str, str], TransportFactory] = {}


def register_transport(mode: str, nos: str, factory: TransportFactory) -> None:
    """Add (or replace) how deploy mode `mode` reaches switches running `nos` (`ANY_NOS`: every NOS)."""
    _FACTORIES[(mode, nos)] = factory


def unregister_transport(mode: str, nos: str) -> None:
    _FACTORIES.pop((mode, nos), None)


def modes() -> list[str]:
    """The deploy modes with a transport, in the order they were registered."""
    return list(dict.fromkeys(mode for mode, _ in _FACTORIES))


def transport_factory(mode: str, nos: str) -> TransportFactory:
    """The factory for (mode, nos), else the mode's factory for every NOS; LookupError says which is missing."""
    from teton.targets import targets

    targets()   # every target package imported: each has registered its transports
    if mode not in modes():
        raise LookupError(f"transport {mode!r}: use {' or '.join(repr(m) for m in modes())}")
    found = _FACTORIES.get((mode, nos)) or _FACTORIES.get((mode, ANY_NOS))
    if found is None:
        raise LookupError(f"no {mode} transport for NOS {nos!r}")
    return found
