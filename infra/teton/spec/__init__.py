"""The cluster spec: typed model, loaders and JSON Schema."""

from teton.spec.floor import Floor  # noqa: F401
from teton.spec.hosts import HostSetup, Scheduler, ServiceHost  # noqa: F401
from teton.spec.management import AddressRange, Management, Ztp  # noqa: F401
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
    RoceBackend,
    RoceQos,
    Room,
    RtswTier,
    SswTier,
    SwitchModel,
    Tier,
)
from teton.spec.monitoring import Monitoring  # noqa: F401
from teton.spec.storage import DataVolume, Share, StorageRacks, TectonicClient  # noqa: F401
