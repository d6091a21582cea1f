"""The lab's management plane, hardened, as its rendered files say: gNMI over TLS with client certificates (EOS: an SSL
profile trusting the site CA on the gNMI transport; SONiC: its GNMI table's client_auth and certificates), eAPI in the
management VRF only, NTP authenticated with the site's key (EOS and SONiC, the key base64 in SONiC's Config DB when
pushed), syslog over TLS on EOS (SONiC's has none: a warning), TACACS+ with CHAP on SONiC."""

from __future__ import annotations

import base64
import json

import pytest

from teton.deploy.push import pushable_files
from teton.findings import TetonError
from teton.secrets import NTP_KEY, references

EOS, SONIC = "z01-ctsw01", "z01-r001-rtsw"
SECRETS = {"bgp_backend": "bgp-s3cret%", "bgp_frontend": "bgp-fe-s3cret%", "ntp_key": "ntp-s3cret",
           "aaa_key": "t@cacs-key", "breakglass_sha512": "$6$salt$hash", "snmpv3_auth": "auth-pass",
           "snmpv3_priv": "priv-pass"}


def _section(text: str, head: str) -> str:
    """The lines of the config section that starts with `head`, up to the next top-level line."""
    lines = text.splitlines()
    start = lines.index(head)
    end = next((k for k in range(start + 1, len(lines)) if lines[k] and not lines[k].startswith((" ", "!"))),
               len(lines))
    return "\n".join(lines[start:end])


def test_eos_gnmi_takes_tls_with_the_site_ca_as_its_only_trust(lab_build):
    text = (lab_build / "devices" / EOS / "startup-config").read_text()
    profile = _section(text, "management security")
    assert "   ssl profile MGMT-TLS" in profile and "      tls versions 1.2 1.3" in profile
    assert "      certificate teton-switch.crt key teton-switch.key" in profile
    assert "      trust certificate teton-ca.crt" in profile and "trust certificate system" not in profile
    gnmi = _section(text, "management api gnmi")
    assert "      ssl profile MGMT-TLS" in gnmi and "      vrf mgmt" in gnmi and "ip access-group ACL-MGMT-IN" in gnmi


def test_eos_eapi_listens_in_the_management_vrf_only(lab_build):
    """EOS serves eAPI in the VRFs its `vrf` stanzas enable: the management VRF and no other (as SSH)."""
    api = _section((lab_build / "devices" / EOS / "startup-config").read_text(), "management api http-commands")
    vrfs = [line.strip() for line in api.splitlines() if line.startswith("   vrf ")]
    assert vrfs == ["vrf mgmt"] and "no protocol http" in api and "ip access-group ACL-MGMT-IN" in api


def test_eos_ntp_is_authenticated_and_syslog_goes_over_tls(lab_build):
    text = (lab_build / "devices" / EOS / "startup-config").read_text()
    assert "ntp authentication-key 1 sha1 0 TETON_SECRET_ntp_key\n" in text
    assert "ntp trusted-key 1\n" in text and "ntp authenticate servers\n" in text
    servers = [line for line in text.splitlines() if line.startswith("ntp server ")]
    assert len(servers) == 2 and all(line.endswith(" key 1") for line in servers), servers
    hosts = [line for line in text.splitlines() if line.startswith("logging vrf mgmt host ")]
    assert hosts and all(line.endswith(" 6514 protocol tls ssl-profile MGMT-TLS") for line in hosts), hosts
    assert ("ntp_key", NTP_KEY) in references(text)


def test_sonic_ntp_tacacs_and_gnmi(lab_build):
    db = json.loads((lab_build / "devices" / SONIC / "config_db.json").read_text())
    assert db["NTP"]["global"]["authentication"] == "enabled"
    assert db["NTP_KEY"] == {"1": {"type": "sha1", "trusted": "yes", "value": "TETON_SECRET_ntp_key"}}
    assert all(s["key"] == "1" and s["trusted"] == "yes" for s in db["NTP_SERVER"].values())
    assert db["TACPLUS"]["global"]["auth_type"] == "chap"
    assert {s["auth_type"] for s in db["TACPLUS_SERVER"].values()} == {"chap"}
    assert "pap" not in json.dumps({k: db[k] for k in ("TACPLUS", "TACPLUS_SERVER")})
    gnmi = db["GNMI"]
    assert gnmi["gnmi"]["client_auth"] == "true" and gnmi["gnmi"]["user_auth"] == "cert"
    assert set(gnmi["certs"]) == {"ca_crt", "server_crt", "server_key"}
    assert all(s["protocol"] == "udp" for s in db["SYSLOG_SERVER"].values())   # SONiC has no syslog TLS


def test_the_ntp_key_is_pushed_base64_to_sonic_and_in_clear_to_eos(lab_build):
    sonic = pushable_files(lab_build, SONIC, SECRETS)
    db = json.loads(sonic[f"devices/{SONIC}/config_db.json"])
    assert base64.b64decode(db["NTP_KEY"]["1"]["value"]).decode() == "ntp-s3cret"
    eos = pushable_files(lab_build, EOS, SECRETS)
    assert "ntp authentication-key 1 sha1 0 ntp-s3cret\n" in eos[f"devices/{EOS}/startup-config"]
    with pytest.raises(TetonError, match=r"'ntp_key' \(NTP symmetric key\) must be 1 to 20"):
        pushable_files(lab_build, SONIC, {**SECRETS, "ntp_key": "k" * 21})


def test_syslog_tls_is_where_the_nos_can(lab_fabric):
    """`syslog_tls` means TLS where the NOS has it (EOS); SONiC's SYSLOG_SERVER has UDP and TCP only, as its spec
    description and docs/switch-configs.md say: no finding per spec."""
    from teton.targets.sonic import SonicTarget

    assert lab_fabric.management is not None and lab_fabric.management.syslog_tls
    assert [f for f in SonicTarget().check(lab_fabric, "lab.yaml") if f.path == "management.syslog_tls"] == []


def test_the_plaintext_scan_passes_key_files_and_ids_and_catches_a_plaintext_ntp_key(lab_build):
    from teton.validate.plaintext import scan

    for name in ("startup-config", "structured-config.json"):
        path = f"devices/{EOS}/{name}"
        assert scan(path, (lab_build / path).read_text()) == [], name
    found = scan("x/startup-config", "ntp authentication-key 1 sha1 0 hunter2\nntp server vrf mgmt 192.0.2.1 key 1\n")
    assert [f.path for f in found] == ["line 1"]
    db = (lab_build / f"devices/{SONIC}/config_db.json").read_text()
    assert scan(f"devices/{SONIC}/config_db.json", db) == []
