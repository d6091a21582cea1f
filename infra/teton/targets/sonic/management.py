"""SONiC's management plane, spelled from the `management` intent: management VRF and port, SSH policy, AAA with
authentication, authorization and accounting (TACACS+ with CHAP, never PAP), NTP (authenticated with the site's key
when the spec names one), syslog (UDP: SONiC's syslog has no TLS), gNMI with TLS and client certificates (its
`GNMI` table: `client_auth`, `user_auth: cert` and the certificate files) or SNMPv3, and control-plane ACLs that
admit only the management prefixes (SSH, SNMP, and gNMI as an external client on its port)."""

from __future__ import annotations

from typing import Any

from teton.fabric.intent import ManagementIntent
from teton.fabric.model import Device
from teton.secrets import secret_ref

MGMT_VRF = "mgmt"   # SONiC's management VRF has this name and no other (MGMT_VRF_CONFIG, sonic-mgmt_vrf.yang)
NTP_KEY_ID = 1      # the one NTP key, as EOS's
TACACS_AUTH = "chap"


def _acl(table: str, services: list[str], prefixes: tuple[str, ...], description: str,
         port: int | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    rules: dict[str, dict[str, Any]] = {}
    for n, prefix in enumerate(prefixes, start=1):
        v6 = ":" in prefix
        rule: dict[str, Any] = {"PRIORITY": str(9999 - n), "PACKET_ACTION": "ACCEPT",
                                ("SRC_IPV6" if v6 else "SRC_IP"): prefix}
        if v6:
            rule["IP_TYPE"] = "IPV6ANY"
        if port is not None:
            rule["L4_DST_PORT"] = str(port)
        rules[f"{table}|RULE_{n * 10}"] = rule
    rules[f"{table}|DEFAULT_RULE"] = {"PRIORITY": "1", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV4ANY"}
    rules[f"{table}|DEFAULT_RULE_V6"] = {"PRIORITY": "2", "PACKET_ACTION": "DROP", "IP_TYPE": "IPV6ANY"}
    if port is not None:
        for key in (f"{table}|DEFAULT_RULE", f"{table}|DEFAULT_RULE_V6"):
            rules[key]["L4_DST_PORT"] = str(port)
    return {table: {"type": "CTRLPLANE", "stage": "ingress", "services": services, "policy_desc": description}}, rules


def mgmt_tables(device: Device, m: ManagementIntent) -> dict[str, Any]:
    aaa_key = secret_ref(m.aaa_key_secret)
    t: dict[str, Any] = {
        "MGMT_PORT": {"eth0": {"alias": "eth0", "admin_status": "up", "description": "out-of-band management"}},
        "MGMT_VRF_CONFIG": {"vrf_global": {"mgmtVrfEnabled": "true"}},
        "SSH_SERVER": {"POLICIES": {"authentication_retries": "3", "login_timeout": "60", "ports": "22",
                                    "permit_root_login": "no", "password_authentication": "false"}},
    }
    if device.mgmt:
        t["MGMT_INTERFACE"] = {f"eth0|{device.mgmt}": {"gwaddr": m.gateway} if m.gateway else {}}
    if m.ntp_servers:
        t["NTP"] = {"global": {"vrf": MGMT_VRF, "src_intf": "eth0"}}
        t["NTP_SERVER"] = {ip: {"association_type": "server", "iburst": "on", "version": "4"}
                           for ip in m.ntp_servers}
        if m.ntp_key_secret:
            # time only from servers that sign with key 1 (SHA-1); Config DB holds the key base64-encoded, which the
            # push does (`SonicTarget.resolve_secrets`): the build folder holds the reference
            t["NTP"]["global"]["authentication"] = "enabled"
            t["NTP_KEY"] = {str(NTP_KEY_ID): {"type": "sha1", "trusted": "yes", "value": secret_ref(m.ntp_key_secret)}}
            for server in t["NTP_SERVER"].values():
                server.update(key=str(NTP_KEY_ID), trusted="yes")
    if m.syslog_servers:
        t["SYSLOG_SERVER"] = {ip: {"vrf": MGMT_VRF, "port": "514", "protocol": "udp", "severity": "notice"}
                              for ip in m.syslog_servers}
    if m.aaa_servers:
        methods = f"{m.aaa_protocol},local"   # local accounts when every server is down
        t["AAA"] = {"authentication": {"login": methods, "failthrough": "true"},
                    "authorization": {"login": methods}, "accounting": {"login": methods}}
        if m.aaa_protocol == "tacacs+":
            # CHAP, not PAP: the password never crosses the wire as it is (sonic-system-tacacs.yang: pap, chap,
            # mschap, login)
            t["TACPLUS"] = {"global": {"auth_type": TACACS_AUTH, "timeout": "5", "passkey": aaa_key}}
            t["TACPLUS_SERVER"] = {ip: {"priority": str(n), "tcp_port": "49", "passkey": aaa_key, "vrf": MGMT_VRF,
                                        "auth_type": TACACS_AUTH}
                                   for n, ip in enumerate(m.aaa_servers, start=1)}
        else:
            t["RADIUS"] = {"global": {"auth_type": "pap", "timeout": "5", "passkey": aaa_key}}
            t["RADIUS_SERVER"] = {ip: {"priority": str(n), "auth_port": "1812", "passkey": aaa_key, "vrf": MGMT_VRF}
                                  for n, ip in enumerate(m.aaa_servers, start=1)}
    if m.telemetry == "gnmi":
        t["GNMI"] = {"gnmi": {"client_auth": "true", "port": str(m.gnmi_port), "log_level": "2", "user_auth": "cert",
                              "vrf": MGMT_VRF},
                     "certs": {"ca_crt": "/etc/sonic/telemetry/ca.cer", "server_crt": "/etc/sonic/telemetry/server.cer",
                               "server_key": "/etc/sonic/telemetry/server.key"}}
    else:
        t["SNMP_USER"] = {m.snmpv3_user: {
            "SNMP_USER_TYPE": "Priv", "SNMP_USER_PERMISSION": "RO", "SNMP_USER_AUTH_TYPE": "SHA",
            "SNMP_USER_AUTH_PASSWORD": secret_ref(m.snmpv3_auth_secret), "SNMP_USER_ENCRYPTION_TYPE": "AES",
            "SNMP_USER_ENCRYPTION_PASSWORD": secret_ref(m.snmpv3_priv_secret)}}
    tables, rules = _acl("MGMT_ONLY", ["SSH"] + (["SNMP"] if m.telemetry == "snmpv3" else []), m.prefixes,
                         "management prefixes only")
    if m.telemetry == "gnmi":
        more, more_rules = _acl("GNMI_ONLY", ["EXTERNAL_CLIENT"], m.prefixes, "gNMI from management prefixes only",
                                m.gnmi_port)
        tables.update(more)
        rules.update(more_rules)
    t["ACL_TABLE"] = tables
    t["ACL_RULE"] = rules
    return t
