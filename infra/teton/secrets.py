"""Secret references.

No secret (BGP password, TACACS+/RADIUS key, SNMPv3 auth/priv key, device credential) is ever written into an
artifact.  Artifacts carry a *reference* token that names the secret; the deploy layer resolves the token at push
time from the secret store (environment, Pulumi secret config or a vault).  The token is plain ASCII letters, digits,
'-' and '_' so that it passes the vendors' schemas for key fields.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

PREFIX = "TETON_SECRET_"
_TOKEN = re.compile(PREFIX + r"([A-Za-z0-9_]+)")


def secret_ref(name: str) -> str:
    """The token that stands for secret `name` in an artifact."""
    if not re.fullmatch(r"[A-Za-z0-9_]+", name):
        raise ValueError(f"secret name {name!r} must be letters, digits and '_'")
    return PREFIX + name


def referenced_secrets(text: str) -> set[str]:
    """Names of every secret referenced in `text`."""
    return set(_TOKEN.findall(text))


def resolve(text: str, secrets: Mapping[str, str]) -> str:
    """Replace every reference in `text` with its value (deploy time only; never write the result to disk)."""

    def sub(m: re.Match[str]) -> str:
        name = m.group(1)
        if name not in secrets:
            raise KeyError(f"secret {name!r} is referenced but not provided")
        return secrets[name]

    return _TOKEN.sub(sub, text)
