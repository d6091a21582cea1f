"""The cluster spec: typed model, loaders and JSON Schema."""

from teton.spec.model import (  # noqa: F401
    Addressing,
    AddressPools,
    AsnPlan,
    AtswTier,
    Bgp,
    BgpTimers,
    Cluster,
    CtswTier,
    Frontend,
    HostPlatform,
    InfinibandBackend,
    Management,
    RoceBackend,
    RoceQos,
    RtswTier,
    StorageRacks,
    SwitchModel,
    Tier,
)
