"""The lab cluster of inventory/lab.yaml, written in Python: the same model, rendering byte-identically.

Run `teton render inventory/lab.py`; a Python spec binds `cluster` to a `teton.spec.Cluster`.
"""

from teton.spec import (
    Addressing,
    AddressPools,
    AsnPlan,
    AtswTier,
    Bgp,
    BgpTimers,
    Cluster,
    CtswTier,
    Edge,
    Floor,
    Frontend,
    HostPlatform,
    Management,
    RoceBackend,
    RoceQos,
    RtswTier,
    ServiceHost,
    Share,
    SswTier,
    StorageRacks,
    Tier,
)

cluster = Cluster(
    name="lab",
    site="lab-hall-1",
    zones=2,
    racks_per_zone=2,
    hosts_per_rack=2,
    host=HostPlatform(platform="grand-teton"),
    backend=RoceBackend(
        rtsw=RtswTier(model="minipack2", nos="sonic", uplinks_per_ctsw=1, oversubscription=4.0),
        ctsw=CtswTier(model="arista-7804r3", nos="eos", per_zone=4, uplinks_per_atsw=1, oversubscription=1.0),
        atsw=AtswTier(model="arista-7804r3", nos="eos", count=2),
        mtu=9100,
        qos=RoceQos(roce_dscp=26, lossless_priority=3, cnp_dscp=48, cnp_priority=6, control_dscp=46,
                    control_priority=5, ecn=False, pfc_watchdog=True, pfc_watchdog_ms=200),
        bgp=Bgp(timers=BgpTimers(keepalive=1, hold=3, connect_retry=1), password_secret="bgp_backend",
                ttl_security_hops=1),
        asn=AsnPlan(atsw=4200000000, ctsw=4200000100, rtsw=4201000000, rtsw_zone_stride=1000),
        addressing=Addressing(
            ipv4=AddressPools(loopbacks="10.0.0.0/24", fabric_links="10.1.0.0/24", host_links="10.64.0.0/24"),
            ipv6=AddressPools(loopbacks="fd00:0:0:1::/64", fabric_links="fd00:0:0:2::/64", host_links="fd00:1::/56"),
        ),
    ),
    frontend=Frontend(
        rsw=Tier(model="wedge400", nos="sonic", medium_down="auto"),
        fsw=Tier(model="arista-7804r3", nos="eos"),
        ssw=SswTier(model="minipack2", nos="sonic", per_plane=1, uplinks_per_ssw=1),
        edge=Edge(default_route=True),
        fsw_per_zone=2,
        uplinks_per_fsw=1,
        mtu=9100,
        password_secret="bgp_frontend",
        ttl_security_hops=1,
        addressing=Addressing(
            ipv4=AddressPools(loopbacks="10.128.0.0/24", fabric_links="10.129.0.0/24", host_links="10.192.0.0/22"),
        ),
    ),
    storage=[
        StorageRacks(role="tectonic", racks=1, servers_per_rack=4, drives_per_server=16, client_gbps=10, shares=[
            Share(name="checkpoints", path="/checkpoints", mount_point="/mnt/tectonic", mounted_by=[],
                  options=["allow_other", "default_permissions"]),
        ]),
        StorageRacks(role="hammerspace", racks=1, servers_per_rack=2, drives_per_server=16, client_gbps=4, shares=[
            Share(name="checkpoints", path="/checkpoints", mount_point="/mnt/checkpoints"),
            Share(name="datasets", path="/datasets", mount_point="/mnt/datasets", access="ro",
                  options=["vers=4.2", "nconnect=16", "hard", "ro"]),
        ]),
    ],
    services=[ServiceHost(name="slurmctl", role="slurm-controller")],
    floor=Floor(rack_power_kw=30.0),
    management=Management(
        network="192.0.2.0/24",
        gateway="192.0.2.1",
        prefixes=["192.0.2.0/24", "198.51.100.0/24"],
        ntp_servers=["192.0.2.123", "198.51.100.123"],
        syslog_servers=["192.0.2.51", "198.51.100.51"],
        aaa_protocol="tacacs+",
        aaa_servers=["192.0.2.49", "198.51.100.49"],
        telemetry="gnmi",
        ntp_key_secret="ntp_key",
        syslog_tls=True,
    ),
)
