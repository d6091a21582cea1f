"""teton lab site in Python: the same site as inventory/site-lab.yaml (two copies of the lab joined by two BAG
switches), written with the spec's classes: it loads into the same site (tests/site/test_python_site.py)."""

from teton.spec.management import Management
from teton.spec.model import Addressing, AddressPools
from teton.spec.site import BagTier, Site, SiteCluster, SitePlan, SiteRoom

LAB_B = {
    "backend": {
        "asn": {"atsw": 4220000000, "ctsw": 4220000100, "rtsw": 4221000000, "rtsw_zone_stride": 1000},
        "addressing": {
            "ipv4": {"loopbacks": "10.2.0.0/24", "fabric_links": "10.3.0.0/24", "host_links": "10.65.0.0/24"},
            "ipv6": {"loopbacks": "fd00:0:0:11::/64", "fabric_links": "fd00:0:0:12::/64",
                     "host_links": "fd00:2::/56"},
        },
    },
    "frontend": {"addressing": {"ipv4": {"loopbacks": "10.130.0.0/24", "fabric_links": "10.131.0.0/24",
                                         "host_links": "10.196.0.0/22"}}},
    "management": {"network": "198.18.0.0/24", "gateway": "198.18.0.1",
                   "prefixes": ["198.18.0.0/24", "198.51.100.0/24"], "domain": "lab-b.example.net"},
}

site = Site(
    site="lab-site",
    location="lab-hall-1",
    clusters=[
        SiteCluster(name="lab-a", spec="lab.yaml", overrides={"management": {"domain": "lab-a.example.net"}}),
        SiteCluster(name="lab-b", spec="lab.yaml", overrides=LAB_B),
    ],
    bag=BagTier(model="arista-7804r3", nos="eos", count=2, uplinks_per_atsw=1, oversubscription=4.0,
                asn=4290000000,
                addressing=Addressing(ipv4=AddressPools(loopbacks="10.4.0.0/28", fabric_links="10.4.1.0/24"),
                                      ipv6=AddressPools(loopbacks="fd00:0:0:21::/64",
                                                        fabric_links="fd00:0:0:22::/64"))),
    plan=SitePlan(backend=["10.0.0.0/12", "10.64.0.0/12", "fd00::/16"], frontend=["10.128.0.0/9"],
                  management=["192.0.2.0/24", "198.18.0.0/15"], asn_first=4200000000, asn_last=4294967294),
    room=SiteRoom(clusters=4, atsw_per_cluster=4),
    management=Management(network="198.19.0.0/24", gateway="198.19.0.1", prefixes=["198.19.0.0/24"],
                          ntp_servers=["192.0.2.123", "198.51.100.123"], syslog_servers=["192.0.2.51"],
                          aaa_servers=["192.0.2.49", "198.51.100.49"]),
)
