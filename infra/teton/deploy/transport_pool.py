"""The transports one engine run opened: one per (deploy mode, twin) or (deploy mode, NOS), made by the factory
registered for them (`teton.targets.transports`) and kept for the run (a twin is loaded once, an eAPI client once)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import cast

from teton.deploy import modes  # noqa: F401  (registers the built-in transports)
from teton.deploy.transports import Transport
from teton.findings import TetonError
from teton.targets.transports import TransportSettings, transport_factory


class TransportPool:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[tuple[str, str], Transport] = {}

    def get(self, how: str, nos: str, twin: str, settings: Callable[[], TransportSettings]) -> Transport:
        """The transport of deploy mode `how` for a switch running `nos` (on the twin `twin` in mode `twin`);
        `settings` is asked only when the transport is made."""
        key = (how, twin if how == "twin" else nos)
        with self._lock:
            if key not in self._open:
                try:
                    factory = transport_factory(how, nos)
                except LookupError as exc:
                    raise TetonError(str(exc)) from None
                self._open[key] = cast(Transport, factory(settings()))
            return self._open[key]
