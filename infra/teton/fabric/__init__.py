"""The Fabric: the typed, frozen set of facts that the design decides and every target, check and tool reads."""

from teton.catalogue.ports import Port
from teton.fabric.intent import (
    BgpTimersIntent,
    Ecn,
    ManagementIntent,
    Neighbor,
    PeerGroup,
    PfcWatchdog,
    Qos,
    Queue,
    Routing,
)
from teton.fabric.model import Device, End, Fabric, Interface, Link

__all__ = ["BgpTimersIntent", "Device", "Ecn", "End", "Fabric", "Interface", "Link", "ManagementIntent", "Neighbor",
           "PeerGroup", "PfcWatchdog", "Port", "Qos", "Queue", "Routing"]
