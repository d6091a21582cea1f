"""Find secret-looking values in rendered files that are not `TETON_SECRET_<name>` references.

teton never writes a secret: every password, key, passphrase or community in an artifact is a reference that deploy
resolves.  A value in such a place that is not a reference was put there by hand (or by a bug) and would reach a
review, a repository or a Pulumi state in plaintext.  Two readers:
- JSON files: every string whose key names a secret (ends in password, passkey, passphrase, secret or community,
  send_community aside, or is exactly "key", an SSL profile's certificate key file and an NTP_SERVER's key id aside);
  fabric.json is not scanned: its `*_secret` fields hold secret names;
- configuration text (frr.conf, startup-config): the word after `password`, `key` (not on a `certificate` line, whose
  key is a file, nor on an `ntp server` line, whose key is the id of an `ntp authentication-key`), `secret`,
  `community`, `passphrase`, or after the algorithm of SNMP's `auth`/`priv` or NTP's `authentication-key ID`,
  skipping an encryption-type digit (`key 7 X`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from teton.findings import Finding
from teton.secrets import PREFIX

RULE = "plaintext-secret"
_SECRET_KEY = re.compile(r"(^|_)(password|passkey|passphrase|secret|community)$", re.IGNORECASE)
_NOT_SECRET = frozenset({"send_community"})
_WORDS = frozenset({"password", "key", "secret", "community", "passphrase", "passkey"})
_SNMP = frozenset({"auth", "priv"})
# lines whose `key` names a key rather than holding one: an SSL profile's key file, an NTP server's key id
_KEY_NAMES = ("certificate ", "ntp server ")
_ENC_TYPE = frozenset({"0", "5", "7", "8a", "sha512"})   # a type word before the value (key 7 X, secret sha512 X)


def _is_reference(value: str) -> bool:
    return value.startswith(PREFIX) and value[len(PREFIX):].replace("_", "").isalnum()


def _json_secrets(node: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for k, v in node.items():
            sub = f"{path}.{k}" if path else str(k)
            if isinstance(v, str) and (k == "key" or _SECRET_KEY.search(str(k))) and k not in _NOT_SECRET \
                    and not sub.endswith("certificate.key") and not sub.startswith("NTP_SERVER."):
                # an SSL profile's key file by name; SONiC's NTP server's key id
                yield sub, v
            else:
                yield from _json_secrets(v, sub)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _json_secrets(v, f"{path}[{i}]")


def _text_secrets(text: str) -> Iterator[tuple[str, str]]:
    for n, line in enumerate(text.splitlines(), start=1):
        words = line.split()
        for k, w in enumerate(words[:-1]):
            if w in _WORDS and not line.lstrip().startswith(("!", "#", *_KEY_NAMES)):
                value = words[k + 1]
                if value in _ENC_TYPE and k + 2 < len(words):
                    value = words[k + 2]
                yield f"line {n}", value
            elif w == "authentication-key" and k + 3 < len(words):   # ntp authentication-key ID ALGO [TYPE] X
                rest = words[k + 3:]
                yield f"line {n}", rest[1] if rest[0] in _ENC_TYPE and len(rest) > 1 else rest[0]
            elif w in _SNMP and k + 2 < len(words):   # snmp-server user U G v3 auth sha256 X priv aes Y
                yield f"line {n}", words[k + 2]


def scan(path: str, text: str) -> list[Finding]:
    """Findings for every secret-looking value of the file `path` (relative to the build) that is not a reference."""
    found: list[tuple[str, str]] = []
    if path.endswith(".json"):
        try:
            found = list(_json_secrets(json.loads(text), ""))
        except (ValueError, RecursionError):
            return []   # not JSON: the file's own reader reports that
    elif path.endswith((".conf", "startup-config")):
        found = list(_text_secrets(text))
    return [Finding(path, where, "a secret in plaintext: artifacts carry only TETON_SECRET_<name> references, which "
                    "deploy resolves", rule=RULE) for where, value in found if value and not _is_reference(value)]
