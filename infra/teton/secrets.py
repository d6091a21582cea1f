"""Secret references, and secrets as values of a kind.

No secret (BGP password, TACACS+/RADIUS key, SNMPv3 auth/priv key, NTP key, SM_Key, break-glass hash, device credential)
is ever written into an artifact.  Artifacts carry a *reference* token that names the secret; the deploy layer resolves
the token at push time from the secret store (environment, Pulumi secret config or a vault).  The token is plain ASCII
letters, digits, '-' and '_' so that it passes the vendors' schemas for key fields.

A value is only substituted when it is a value of its kind (`SecretKind`): the characters and the length every NOS
that takes it accepts, none of which can end a token or a line of the config it lands in (a BGP password with a
newline would add lines to frr.conf).  The kind of a reference is the field it stands in (`kind_of`: `password`,
`key`, `sm_key`, ...); a field teton does not know takes a plain token.  A refused value is a `SecretError` that names
the secret and its kind, never the value.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from teton.findings import TetonError

PREFIX = "TETON_SECRET_"
_TOKEN = re.compile(PREFIX + r"([A-Za-z0-9_]+)")

# printable ASCII without space and what ends or comments a token in a line config or a quoted string:
# '"' and "'" (quotes), '\\' (escapes), '!' and '#' (comments in FRR/EOS), '?' (CLI help), ',' (SONiC's list separator)
_TOKEN_CHARS = r"[A-Za-z0-9$%&()*+\-./:;<=>@\[\]^_{|}~]"


class SecretError(KeyError, TetonError):
    """A secret that cannot be resolved: not given, or a value its kind does not accept.  args[0] is the message
    (a KeyError, so every caller that names a missing secret names a refused one the same way)."""


@dataclass(frozen=True)
class SecretKind:
    """What a secret of one kind may hold: `chars` (one regex character class) `min_len` to `max_len` times, or the
    whole of `pattern` when given."""

    name: str
    min_len: int
    max_len: int
    chars: str = _TOKEN_CHARS
    pattern: str | None = None
    words: str = "printable ASCII without space, quotes, backslash, backtick, '!', '#', '?' or ','"

    def problem(self, value: str) -> str | None:
        """Why `value` is not a secret of this kind (without the value), or None."""
        if not self.min_len <= len(value) <= self.max_len:
            return f"must be {self.min_len} to {self.max_len} characters long (it has {len(value)})"
        regex = self.pattern or f"{self.chars}+"
        if not re.fullmatch(regex, value):
            return f"must be {self.words}"
        return None


# TCP-MD5 keys are at most 80 bytes (RFC 2385, Linux TCP_MD5SIG_MAXKEYLEN); EOS stores them type-7, FRR in clear
BGP_PASSWORD = SecretKind("BGP password", 1, 80)
# SONiC refuses a passkey with a space, '#' or ','; TACACS+/RADIUS keys of 64 fit every NOS teton renders
AAA_KEY = SecretKind("TACACS+/RADIUS key", 1, 64)
# SNMPv3 (RFC 3414) wants at least 8 characters for a passphrase
SNMP_KEY = SecretKind("SNMPv3 auth/priv passphrase", 8, 64)
# OpenSM's sm_key is a 64-bit number in hex
SM_KEY = SecretKind("InfiniBand SM_Key", 3, 18, pattern=r"0x[0-9A-Fa-f]{1,16}", words="0x and 1 to 16 hex digits")
M_KEY = SecretKind("InfiniBand M_Key", 3, 18, pattern=r"0x[0-9A-Fa-f]{1,16}", words="0x and 1 to 16 hex digits")
# a SHA-512 crypt(3) hash: $6$[rounds=N$]salt$hash
BREAKGLASS_HASH = SecretKind("break-glass SHA-512 crypt hash", 5, 140,
                             pattern=r"\$6\$(?:rounds=[0-9]{1,9}\$)?[./0-9A-Za-z]{1,16}\$[./0-9A-Za-z]{1,86}",
                             words="a SHA-512 crypt hash: $6$<salt>$<hash> of [./0-9A-Za-z]")
# an NTP symmetric key in ASCII: ntpd takes one of more than 20 characters for hex, and no '#' (SONiC's NTP_KEY,
# docs/sources.md section 11); EOS and SONiC both take it as the value of key 1
NTP_KEY = SecretKind("NTP symmetric key", 1, 20)
# a reference in a field teton does not know: a plain token
TOKEN = SecretKind("secret", 1, 128)

KINDS = (BGP_PASSWORD, AAA_KEY, SNMP_KEY, SM_KEY, M_KEY, BREAKGLASS_HASH, NTP_KEY, TOKEN)

# the field (the word before the reference) -> the kind of secret it holds, in every format teton writes
_FIELD_KINDS = {
    "password": BGP_PASSWORD,                                   # FRR, EOS: neighbor X password [7] <ref>
    "key": AAA_KEY, "passkey": AAA_KEY,                         # EOS tacacs/radius key, SONiC passkey
    "sha512": BREAKGLASS_HASH, "sha512_password": BREAKGLASS_HASH,
    "SNMP_USER_AUTH_PASSWORD": SNMP_KEY, "SNMP_USER_ENCRYPTION_PASSWORD": SNMP_KEY,
    "auth_passphrase": SNMP_KEY, "priv_passphrase": SNMP_KEY,
    "sm_key": SM_KEY, "m_key": M_KEY,
    "sha1": NTP_KEY,                                            # EOS: ntp authentication-key 1 sha1 0 <ref>
    "value": NTP_KEY,                                           # SONiC: NTP_KEY|1 "value" (base64 when pushed)
}
_FIELD = re.compile(r"([A-Za-z0-9_]+)[\"']?\s*[:=]?\s*[\"']?(?:[0-9] )?$")


def secret_ref(name: str) -> str:
    """The token that stands for secret `name` in an artifact."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise ValueError(f"secret name {name!r} must be letters, digits and '_'")
    return PREFIX + name


def referenced_secrets(text: str) -> set[str]:
    """Names of every secret referenced in `text`."""
    return set(_TOKEN.findall(text))


def kind_of(before: str) -> SecretKind:
    """The kind of a reference that follows the text `before` (its field: `password`, `"passkey": ` ...)."""
    m = _FIELD.search(before[-64:])
    return _FIELD_KINDS.get(m.group(1), TOKEN) if m else TOKEN


def secret_value(name: str, secrets: Mapping[str, str], kind: SecretKind) -> str:
    """The value of secret `name`, checked against its kind; SecretError (naming the secret, never its value)."""
    if name not in secrets:
        raise SecretError(f"secret {name!r} is referenced but not provided")
    value = secrets[name]
    why = kind.problem(value) if isinstance(value, str) else "must be a string"
    if why is not None:
        raise SecretError(f"secret {name!r} ({kind.name}) {why}; nothing was pushed with it")
    return value


def references(text: str) -> set[tuple[str, SecretKind]]:
    """(name, kind) of every reference in `text`, the kind read from its field as `resolve` reads it."""
    return {(m.group(1), kind_of(text[max(0, m.start() - 64):m.start()])) for m in _TOKEN.finditer(text)}


def resolve(text: str, secrets: Mapping[str, str], quote: Callable[[str], str] | None = None) -> str:
    """Replace every reference in `text` with its value, each checked against the kind its field holds and passed
    through `quote` (e.g. a JSON string's escaping) when given (deploy time only; never write the result to disk)."""

    def sub(m: re.Match[str]) -> str:
        value = secret_value(m.group(1), secrets, kind_of(text[max(0, m.start() - 64):m.start()]))
        return quote(value) if quote else value

    return _TOKEN.sub(sub, text)


_KEY_VALUE = re.compile(r"\b(password|key|secret)( [0-9])? (?!TETON_SECRET_)(\S+)")


def mask(text: str, secrets: Iterable[tuple[str, str]]) -> str:
    """`text` with every secret value replaced by its reference token (longest values first), and any other value
    after `password`, `key` or `secret` (one the device runs that is no known secret) replaced by `<hidden>`: what
    an error message or a drift line may show of what a device runs."""
    for name, value in sorted(secrets, key=lambda kv: -len(kv[1])):
        if value:
            text = text.replace(value, secret_ref(name))
    return _KEY_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2) or ''} <hidden>", text)
