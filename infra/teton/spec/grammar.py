"""The grammar of the spec's free strings (issue 17): what each may hold, so that no value of a spec becomes a path
outside the build, a line of a config or a token of a command.  The spec model (`teton.spec.model`) types its fields
with these; `GRAMMARS` names each pattern in words, for error messages (`teton.spec.load`)."""

from __future__ import annotations

import ipaddress
import re
from typing import Annotated

from pydantic import AfterValidator, Field


def _network(value: str) -> str:
    try:
        ipaddress.ip_network(value, strict=True)
    except ValueError as exc:
        raise ValueError(f"not an IP network: {exc}") from None
    return value


def _address(value: str) -> str:
    try:
        ipaddress.ip_address(value)
    except ValueError as exc:
        raise ValueError(f"not an IP address: {exc}") from None
    return value


SECRET_NAME_PATTERN = r"^[A-Za-z0-9_]{1,64}$"


def _secret_name(value: str) -> str:
    if not re.fullmatch(SECRET_NAME_PATTERN, value):
        raise ValueError("secret names are letters, digits and '_', 1 to 64 of them")
    return value


NAME_PATTERN = r"^[A-Za-z0-9_](?:\.?[A-Za-z0-9_-]){0,63}$"
TEXT_PATTERN = r"^[^\x00-\x1f\x7f-\x9f\u2028\u2029{}]{1,128}$"
RELATIVE_PATH_PATTERN = r"^[A-Za-z0-9_](?:\.?[A-Za-z0-9_-])*(?:/[A-Za-z0-9_](?:\.?[A-Za-z0-9_-])*)*$"
ABSOLUTE_PATH_PATTERN = r"^(?:/[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}){1,32}$"
HOST_PATH_PATTERN = r"^(/[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}){1,8}$"
IP_PATTERN = r"^[0-9A-Fa-f.:/]{2,49}$"
BREAKOUT_PATTERN = r"^[1-8]x[0-9]{1,4}G$"
VRF_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"
USER_PATTERN = r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$"
PACKAGE_PATTERN = r"^[a-z0-9][a-z0-9+.-]{1,62}$"
ENDPOINT_PATTERN = (r"^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*"
                    r"|\[[0-9A-Fa-f:.]{2,45}\]):[0-9]{1,5}$")
_HOST = (r"(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*"
         r"|\[[0-9A-Fa-f:.]{2,45}\])")
URL_PATTERN = rf"^https?://{_HOST}(?::[0-9]{{1,5}})?(?:/[A-Za-z0-9_][A-Za-z0-9_.~+-]{{0,127}}){{0,16}}/?$"
DOMAIN_PATTERN = r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$"
GRAMMARS = {
    NAME_PATTERN: "a name: letters, digits, '_', '-' and single '.' between them (no '..', no '/', no space), "
                  "starting with a letter, digit or '_', at most 64",
    TEXT_PATTERN: "one line of printable text (no control character, line break, '{' or '}'), at most 128",
    RELATIVE_PATH_PATTERN: "a relative path of names ('/' between them, no '..', no leading '/' or '.')",
    ABSOLUTE_PATH_PATTERN: "an absolute path of names ('/' before each, no '..', no segment starting with '.')",
    HOST_PATH_PATTERN: "an absolute path of at most 8 names of letters, digits, '_', '.', '-' (no segment starting "
                       "with '.')",
    IP_PATTERN: "an IP address or network (hex digits, '.', ':' and '/'; no zone index)",
    BREAKOUT_PATTERN: "a breakout mode such as 2x200G",
    VRF_PATTERN: "a VRF name: a letter, then letters, digits, '_', '-', at most 32",
    USER_PATTERN: "a user name: a letter or '_', then letters, digits, '_', '.', '-', at most 32",
    PACKAGE_PATTERN: "a package name (Debian's grammar): lower-case letters, digits, '+', '.', '-', 2 to 63",
    ENDPOINT_PATTERN: "host:port: a DNS name, an IPv4 address or [an IPv6 address], then a port",
    URL_PATTERN: "an http(s) URL: a DNS name, an IPv4 address or [an IPv6 address], an optional port, then a path of "
                 "names (letters, digits, '_', '.', '~', '+', '-'; no segment starting with '.'), no query",
    DOMAIN_PATTERN: "a DNS domain name in lower case (labels of letters, digits and '-', dots between them)",
}


def _endpoint(value: str) -> str:
    port = int(value.rpartition(":")[2])
    if not 0 < port < 65536:
        raise ValueError(f"port {port} is not 1-65535")
    return value


def _url(value: str) -> str:
    port = re.match(r"^https?://(?:\[[^]]*\]|[^/:]*)(?::([0-9]+))?", value)
    if port and port.group(1) and not 0 < int(port.group(1)) < 65536:
        raise ValueError(f"port {port.group(1)} is not 1-65535")
    return value


Url = Annotated[str, Field(pattern=URL_PATTERN, max_length=512), AfterValidator(_url)]
Domain = Annotated[str, Field(pattern=DOMAIN_PATTERN, max_length=253)]
Package = Annotated[str, Field(pattern=PACKAGE_PATTERN, max_length=63)]
Endpoint = Annotated[str, Field(pattern=ENDPOINT_PATTERN, max_length=260), AfterValidator(_endpoint)]
Name = Annotated[str, Field(pattern=NAME_PATTERN, max_length=64)]
Text = Annotated[str, Field(pattern=TEXT_PATTERN, max_length=128)]
Network = Annotated[str, Field(pattern=IP_PATTERN, max_length=49), AfterValidator(_network)]
Address = Annotated[str, Field(pattern=IP_PATTERN, max_length=49), AfterValidator(_address)]
Asn = Annotated[int, Field(ge=1, le=4294967294)]
SecretName = Annotated[str, AfterValidator(_secret_name), Field(json_schema_extra={"pattern": SECRET_NAME_PATTERN})]
HostPath = Annotated[str, Field(pattern=HOST_PATH_PATTERN, max_length=255)]
MountOption = Annotated[str, Field(pattern=r"^[A-Za-z0-9_][A-Za-z0-9_.=:-]{0,63}$")]
