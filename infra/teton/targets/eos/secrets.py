"""EOS's spelling of secrets at push time: the build folder holds `TETON_SECRET_<name>` references; the pushed
structured config holds what EOS expects.

- BGP passwords: type-7 ciphertext keyed by the peer group's name (EOS derives the key from it, so one secret is a
  different ciphertext in each group);
- TACACS+ and RADIUS keys: type-7 with a salt taken from the device name (stable from one push to the next);
- the break-glass user's SHA-512 crypt hash, SNMPv3 passphrases and the NTP key (type 0): the secret itself (EOS
  takes them as they are).

pyavd's password helpers (`pyavd._utils.password_utils`, pinned pyavd 6.4.0) do the encryption.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Mapping
from typing import Any, Literal, cast

from pyavd._utils.password_utils import bgp_encrypt, radius_encrypt, tacacs_encrypt

from teton.secrets import AAA_KEY, BGP_PASSWORD, NTP_KEY, SecretKind, referenced_secrets, resolve, secret_value

Salt = Literal[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]


def _value(ref: Any, secrets: Mapping[str, str], kind: SecretKind) -> str | None:
    names = referenced_secrets(ref) if isinstance(ref, str) else set()
    if not names:
        return None
    return secret_value(next(iter(names)), secrets, kind)


def _salt(device: str) -> Salt:
    return cast(Salt, hashlib.sha256(device.encode()).digest()[0] % 16)


def resolve_structured_config(cfg: dict[str, Any], secrets: Mapping[str, str]) -> dict[str, Any]:
    """A copy of `cfg` with every secret reference resolved as EOS stores it."""
    out = copy.deepcopy(cfg)
    salt = _salt(str(out.get("hostname", "")))
    for g in out.get("router_bgp", {}).get("peer_groups", []):
        if (v := _value(g.get("password"), secrets, BGP_PASSWORD)) is not None:
            g["password"] = bgp_encrypt(v, key=g["name"])
    for h in out.get("tacacs_servers", {}).get("hosts", []):
        if (v := _value(h.get("key"), secrets, AAA_KEY)) is not None:
            h["key"] = tacacs_encrypt(v, salt)
    for vrf in out.get("radius_server", {}).get("vrfs", []):
        for h in vrf.get("servers", []):
            if (v := _value(h.get("key"), secrets, AAA_KEY)) is not None:
                h["key"] = radius_encrypt(v, salt)
    for k in out.get("ntp", {}).get("authentication_keys", []):
        if (v := _value(k.get("key"), secrets, NTP_KEY)) is not None:
            k["key"] = v                                   # type 0: EOS takes the key in clear and stores it
    return cast(dict[str, Any], _as_is(out, secrets))   # the break-glass hash, SNMPv3 passphrases


def _as_is(node: Any, secrets: Mapping[str, str], field: str = "") -> Any:
    if isinstance(node, dict):
        return {k: _as_is(v, secrets, str(k)) for k, v in node.items()}
    if isinstance(node, list):
        return [_as_is(v, secrets, field) for v in node]
    return resolve(field + ": " + node, secrets)[len(field) + 2:] if isinstance(node, str) else node
