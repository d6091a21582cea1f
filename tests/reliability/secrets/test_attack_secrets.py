"""Attacks through secret values: a value its kind does not accept is refused at resolution, by the secret's name
and kind, never shown; nothing is substituted."""

from __future__ import annotations

import pytest

from teton.deploy.push import pushable_files
from teton.findings import TetonError
from teton.secrets import BREAKGLASS_HASH, SM_KEY, SNMP_KEY, SecretError, resolve

GOOD = {"bgp_backend": "bgp-s3cret%", "bgp_frontend": "bgp-fe-s3cret%", "ntp_key": "ntp-s3cret",
        "aaa_key": "t@cacs-key", "breakglass_sha512": "$6$salt$hash",
        "snmpv3_auth": "auth-pass", "snmpv3_priv": "priv-pass"}


@pytest.mark.parametrize("value", ["pw\n network 203.0.113.0/24", 'pw" x', "pw!", "pw word", "pw#c", "x" * 81, ""])
def test_bgp_password_cannot_add_lines_or_tokens_to_the_pushed_frr_conf(lab_build, value):
    with pytest.raises(TetonError) as exc:
        pushable_files(lab_build, "z01-r001-rtsw", {**GOOD, "bgp_backend": value})
    message = str(exc.value)
    assert "z01-r001-rtsw: secret 'bgp_backend' (BGP password)" in message
    assert (value not in message) if value else True
    assert "203.0.113" not in message


def test_every_kind_is_checked_on_eos_too(lab_build):
    with pytest.raises(TetonError, match=r"secret 'aaa_key' \(TACACS\+/RADIUS key\)"):
        pushable_files(lab_build, "z01-ctsw01", {**GOOD, "aaa_key": "k e y"})
    with pytest.raises(TetonError, match=r"secret 'breakglass_sha512' \(break-glass"):
        pushable_files(lab_build, "z01-ctsw01", {**GOOD, "breakglass_sha512": "plaintext"})


def test_kinds_by_field():
    with pytest.raises(SecretError, match="SM_Key"):
        resolve("sm_key TETON_SECRET_ib_sm_key\n", {"ib_sm_key": "0xZZ\nroutes"})
    assert resolve("sm_key TETON_SECRET_k\n", {"k": "0x00000000000000ab"}) == "sm_key 0x00000000000000ab\n"
    with pytest.raises(SecretError, match="8 to 64"):
        resolve('"SNMP_USER_AUTH_PASSWORD": "TETON_SECRET_a"', {"a": "short"})
    assert SNMP_KEY.problem("long-enough") is None and SM_KEY.problem("12") is not None
    assert BREAKGLASS_HASH.problem("$6$rounds=5000$salt$" + "a" * 86) is None


def test_json_targets_quote_what_they_substitute():
    assert resolve('{"passkey": "TETON_SECRET_k"}', {"k": "a/b"}, quote=lambda v: v.replace("/", "\\/")) == \
        '{"passkey": "a\\/b"}'
    with pytest.raises(SecretError):
        resolve('{"passkey": "TETON_SECRET_k"}', {"k": 'a"b'})
