"""Secrets are resolved per NOS for the push only: EOS gets type-7 ciphertext keyed per peer group, FRR cleartext;
the build folder keeps references."""

from __future__ import annotations

import re

import pytest
from pyavd._utils.password_utils import bgp_decrypt, tacacs_decrypt

from teton.deploy.push import pushable_files
from teton.findings import TetonError
from teton.secrets import PREFIX

SECRETS = {"bgp_backend": "bgp-s3cret%", "bgp_frontend": "bgp-fe-s3cret%", "ntp_key": "ntp-s3cret",
           "aaa_key": "t@cacs-key", "breakglass_sha512": "$6$salt$hash",
           "snmpv3_auth": "auth-pass", "snmpv3_priv": "priv-pass"}


def test_eos_gets_a_type7_ciphertext_per_peer_group_that_decrypts_to_the_secret(lab_build):
    files = pushable_files(lab_build, "z01-ctsw01", SECRETS)
    text = files["devices/z01-ctsw01/startup-config"]
    ciphers = dict(re.findall(r"^   neighbor (\S+) password 7 (\S+)$", text, re.MULTILINE))
    assert set(ciphers) == {"ATSW_V4", "ATSW_V6", "RTSW_V4", "RTSW_V6"}
    assert len(set(ciphers.values())) == 4                     # keyed by the group's name: four ciphertexts
    assert all(bgp_decrypt(c, key=g) == SECRETS["bgp_backend"] for g, c in ciphers.items())
    (tacacs,) = re.findall(r"^tacacs-server host 192.0.2.49 vrf mgmt key 7 (\S+)$", text, re.MULTILINE)
    assert tacacs_decrypt(tacacs) == SECRETS["aaa_key"]
    assert "secret sha512 $6$salt$hash" in text
    assert PREFIX not in text and PREFIX not in files["devices/z01-ctsw01/structured-config.json"]


def test_frr_gets_the_cleartext_only_in_the_pushed_file(lab_build):
    files = pushable_files(lab_build, "z01-r001-rtsw", SECRETS)
    assert " neighbor CTSW_V4 password bgp-s3cret%" in files["devices/z01-r001-rtsw/frr.conf"]
    assert '"passkey": "t@cacs-key"' in files["devices/z01-r001-rtsw/config_db.json"]
    on_disk = (lab_build / "devices/z01-r001-rtsw/frr.conf").read_text()
    assert "bgp-s3cret%" not in on_disk and f"password {PREFIX}bgp_backend" in on_disk


def test_a_missing_secret_is_named(lab_build):
    with pytest.raises(TetonError, match="z01-ctsw01: secret 'bgp_backend' is referenced but not provided"):
        pushable_files(lab_build, "z01-ctsw01", {})
