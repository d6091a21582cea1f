"""The cluster spec: typed model, loaders and JSON Schema."""

from teton.spec.floor import Floor  # noqa: F401
from teton.spec.hosts import HostSetup, Scheduler, ServiceHost  # noqa: F401
from teton.spec.model import (  # noqa: F401
    Addressing,
    AddressPools,
    AsnPlan,
    AtswTier,
    Bgp,
    BgpTimers,
    Cluster,
    CtswTier,
    Edge,
    Frontend,
    HostPlatform,
    InfinibandBackend,
    Management,
    RoceBackend,
    RoceQos,
    Room,
    RtswTier,
    Share,
    SswTier,
    StorageRacks,
    SwitchModel,
    Tier,
)
