"""The spec's management plane: the out-of-band network and what every switch gets on it (AAA, NTP, syslog,
telemetry), and day 0's zero-touch provisioning; part of the cluster spec (`teton.spec.model`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from teton import limits
from teton.spec.base import SpecModel, limit_text
from teton.spec.grammar import USER_PATTERN, VRF_PATTERN, Address, Domain, Network, SecretName, Url

# --------------------------------------------------------------------------------------------------- management


_ENTRIES = limit_text("MAX_MANAGEMENT_ENTRIES")


class Management(SpecModel):
    prefixes: list[Network] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                    description=f"prefixes admitted to the management plane, {_ENTRIES}")
    network: Network | None = Field(default=None, description="out-of-band network the switches' mgmt ports are in")
    gateway: Address | None = None
    vrf: str = Field(default="mgmt", pattern=VRF_PATTERN, description="management VRF (EOS vrf instance)")
    ntp_servers: list[Address] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                       description=f"NTP servers, {_ENTRIES}")
    syslog_servers: list[Address] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                          description=f"syslog servers, {_ENTRIES}")
    dns_servers: list[Address] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                       description=f"DNS servers DHCP hands the switches at day 0 (`teton ztp`), "
                                                   f"{_ENTRIES}")
    domain: Domain | None = Field(default=None, description="the management network's DNS domain (DHCP option 15)")
    aaa_protocol: Literal["tacacs+", "radius"] = "tacacs+"
    aaa_servers: list[Address] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                       description=f"TACACS+/RADIUS servers, {_ENTRIES}")
    reserved: list[Address] = Field(default_factory=list, max_length=limits.MAX_MANAGEMENT_ENTRIES,
                                    description="more addresses of the network that no switch may take (DNS, "
                                                "jump hosts ...); the gateway and the servers above are reserved "
                                                f"anyway; {_ENTRIES}")
    aaa_key_secret: SecretName = Field(default="aaa_key", description="name of the secret holding the AAA key")
    telemetry: Literal["gnmi", "snmpv3"] = "gnmi"
    snmpv3_user: str = Field(default="teton", pattern=USER_PATTERN, description="SNMPv3 user (one token)")
    snmpv3_auth_secret: SecretName = Field(default="snmpv3_auth", description="name of the SNMPv3 auth key's secret")
    snmpv3_priv_secret: SecretName = Field(default="snmpv3_priv", description="name of the SNMPv3 priv key's secret")
    breakglass_user: str = Field(default="breakglass", pattern=r"^[a-z_][a-z0-9_-]{0,31}$",
                                 description="local administrator that works when every AAA server is down")
    breakglass_secret: SecretName = Field(default="breakglass_sha512",
                                          description="name of the secret holding its password's SHA-512 crypt hash")
    ntp_key_secret: SecretName | None = Field(
        default=None, description="name of the secret holding the NTP servers' symmetric key (key 1, SHA-1): the "
                                  "switches then take time only from servers that sign with it; none: unauthenticated")
    syslog_tls: bool = Field(default=False, description="send syslog over TLS (RFC 5425, port 6514) where the NOS can "
                                                        "(EOS; SONiC's syslog has UDP and TCP only)")


class AddressRange(SpecModel):
    first: Address
    last: Address


class Ztp(SpecModel):
    """Day 0 (`teton ztp`): where a factory-fresh switch fetches its files, and what DHCP tells it beside its
    reservation.  `teton ztp serve` answers at `server`."""

    server: Url = Field(description="the provisioning server's base URL as the switches reach it "
                                    "(http://ADDR:PORT); each switch's files are under <server>/devices/<name>/")
    images: dict[Annotated[str, Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")], Url] = Field(
        default_factory=dict, max_length=16,
        description="the NOS image to install, by NOS: ONIE's installer URL (DHCP option 114) for a NOS ONIE "
                    "installs (sonic, fboss), SONiC's firmware step, EOS's image copied by its bootstrap")
    interface: str = Field(default="*", pattern=r"^(?:\*|[A-Za-z0-9_][A-Za-z0-9_.-]{0,14})$",
                           description="the interface Kea serves the management network on (its name on the DHCP "
                                       "server); `*`: every interface (DHCPv6 then answers relayed clients only)")
    quarantine: AddressRange | None = Field(
        default=None, description="a dynamic pool in the management network for switches not in the inventory: "
                                  "an address and nothing to fetch; none (the default): an unknown MAC gets no "
                                  "address")
