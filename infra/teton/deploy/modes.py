"""The twin transport, registered for every NOS of deploy mode `twin` (`teton.targets.transports`).

Each NOS package registers its own live transport (`register_transport("live", "<nos>", factory)` in
`teton.targets.<nos>`); the twin is the deploy layer's, because it runs any NOS with a read-back.
"""

from __future__ import annotations

from teton.deploy.transports import TwinTransport
from teton.targets.transports import ANY_NOS, TransportSettings, register_transport


def _twin(s: TransportSettings) -> TwinTransport:
    return TwinTransport(s.twin, s.secrets)


register_transport("twin", ANY_NOS, _twin)
