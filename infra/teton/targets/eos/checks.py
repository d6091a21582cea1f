"""teton's own checks of an EOS structured config: what pyavd 6.4.0 accepts silently.

- unknown top-level keys (the schema root allows any key, so a typo such as ``hostnme`` passes silently);
- values that are not JSON data (pyavd silently replaces them with the string ``"<not serializable>"``);
- line breaks in single-line fields (they would inject CLI lines);
- IP address syntax, host bits and overlapping interface subnets per VRF;
- BGP AS number syntax and range, router-id and neighbour address syntax.
"""

from __future__ import annotations

import functools
import ipaddress
import math
import pickle
import re
import socket
from collections.abc import Iterator
from typing import Any

from teton.targets.eos.issues import ROOT, AvdIssue

_JSON_SCALARS = (str, int, float, bool, type(None))
# str leaves that may legitimately hold several lines (eos_cli, banners.motd/login, aliases, event handler scripts)
_MULTILINE_KEYS = frozenset({"eos_cli", "motd", "login", "aliases", "bash_command"})
# interface lists whose ip_address may be "dhcp"
_DHCP_OK = frozenset({"ethernet_interfaces", "port_channel_interfaces", "vlan_interfaces", "management_interfaces"})
_INTERFACE_LISTS = (*sorted(_DHCP_OK), "loopback_interfaces", "tunnel_interfaces")
_ASDOT = re.compile(r"(\d{1,5})\.(\d{1,5})")


def teton_checks(device: str, cfg: dict[str, Any], clean: int | None = None) -> Iterator[AvdIssue]:
    """Every issue teton finds in `cfg`; `clean` is `plain_json(cfg)` where the caller has it (else it is made)."""
    yield from _unknown_top_level_keys(device, cfg)
    yield from _data_shape(device, cfg, clean)
    yield from _interface_addresses(device, cfg)
    yield from _bgp(device, cfg)


@functools.cache
def _schema_top_level_keys() -> frozenset[str] | None:
    try:
        from pyavd._schema.constants import EOS_CLI_CONFIG_GEN_PICKLED_SCHEMA_PATH

        with open(EOS_CLI_CONFIG_GEN_PICKLED_SCHEMA_PATH, "rb") as f:
            return frozenset(pickle.load(f)["keys"])
    except Exception:  # noqa: BLE001 - internal layout changed: skip the check rather than fail
        return None


def _unknown_top_level_keys(device: str, cfg: dict[str, Any]) -> Iterator[AvdIssue]:
    known = _schema_top_level_keys()
    if known is None:
        return
    for key in cfg:
        if key not in known:
            yield AvdIssue(device, str(key), "unknown top-level key (pyavd accepts any root key and ignores it)")


PLAIN = 1    # `plain_json`: plain JSON data the walk finds nothing in
FLOATS = 2   # ... and a float in it


def plain_json(cfg: Any) -> int:
    """0 where `_walk_shape` may find something in `cfg`, else `PLAIN` (| `FLOATS` where it holds a float): exact
    dicts with str keys, lists, str (a line break only under a `_MULTILINE_KEYS` key), int, bool, None and finite
    floats, no cycle (`_shape_clean`)."""
    try:
        return _shape_clean(cfg, False, set())
    except RecursionError:
        return 0


def _data_shape(device: str, cfg: dict[str, Any], clean: int | None = None) -> Iterator[AvdIssue]:
    """Non-JSON values and line breaks in single-line strings.  Fast path: one pass that only says whether the walk
    below would find anything (`plain_json`); the walk, which names each problem, runs only when it would."""
    if clean is None:
        clean = plain_json(cfg)
    if clean:
        return
    yield from _walk_shape(device, cfg, "", None, set())


def _shape_clean(node: Any, multiline_ok: bool, ancestors: set[int]) -> int:
    """Non-zero only where `_walk_shape` would yield nothing: `PLAIN`, with `FLOATS` where a float is in `node`.
    Anything else (a subclass, a tuple, a non-str key, a cycle) is 0 and left to the walk, which decides and names
    it.  The leaves are tested in their container's loop (`_clean_dict`, `_clean_list`): a call per container only."""
    t = type(node)
    if t is dict:
        return _clean_dict(node, ancestors)
    if t is list:
        return _clean_list(node, multiline_ok, ancestors)
    return _clean_list([node], multiline_ok, set())


def _clean_dict(node: dict[Any, Any], ancestors: set[int]) -> int:
    i = id(node)
    if i in ancestors:
        return 0
    ancestors.add(i)
    shape = PLAIN
    for k, v in node.items():
        if type(k) is not str:
            return 0
        t = type(v)
        if t is str:
            if ("\n" in v or "\r" in v) and k not in _MULTILINE_KEYS:
                return 0
        elif t is dict:
            sub = _clean_dict(v, ancestors)
            if not sub:
                return 0
            shape |= sub
        elif t is list:
            sub = _clean_list(v, k in _MULTILINE_KEYS, ancestors)
            if not sub:
                return 0
            shape |= sub
        elif t is float:
            if not math.isfinite(v):
                return 0
            shape |= FLOATS
        elif not (t is int or t is bool or v is None):
            return 0
    ancestors.discard(i)
    return shape


def _clean_list(node: list[Any], multiline_ok: bool, ancestors: set[int]) -> int:
    i = id(node)
    if i in ancestors:
        return 0
    ancestors.add(i)
    shape = PLAIN
    for v in node:
        t = type(v)
        if t is str:
            if not multiline_ok and ("\n" in v or "\r" in v):
                return 0
        elif t is dict:
            sub = _clean_dict(v, ancestors)
            if not sub:
                return 0
            shape |= sub
        elif t is list:
            sub = _clean_list(v, multiline_ok, ancestors)
            if not sub:
                return 0
            shape |= sub
        elif t is float:
            if not math.isfinite(v):
                return 0
            shape |= FLOATS
        elif not (t is int or t is bool or v is None):
            return 0
    ancestors.discard(i)
    return shape


def _walk_shape(device: str, node: Any, path: str, key: str | None, seen: set[int]) -> Iterator[AvdIssue]:
    where = path or ROOT
    if isinstance(node, dict | list):
        if id(node) in seen:
            yield AvdIssue(device, where, "the structure refers to itself")
            return
        seen = seen | {id(node)}
        if isinstance(node, dict):
            for k, v in node.items():
                if not isinstance(k, str):
                    where_k = f"{path}.{k!r}" if path else repr(k)
                    yield AvdIssue(device, where_k, f"key of type {type(k).__name__}; keys must be str")
                yield from _walk_shape(device, v, f"{path}.{k}" if path else str(k), str(k), seen)
        else:
            for i, v in enumerate(node):
                yield from _walk_shape(device, v, f"{path}[{i}]", key, seen)
    elif not isinstance(node, _JSON_SCALARS):
        yield AvdIssue(
            device,
            where,
            f"value of type {type(node).__name__} is not JSON data (pyavd would render '<not serializable>')",
        )
    elif isinstance(node, float) and not math.isfinite(node):
        yield AvdIssue(device, where, f"{node} is not a valid number")
    elif isinstance(node, str) and key not in _MULTILINE_KEYS and ("\n" in node or "\r" in node):
        yield AvdIssue(device, where, "line break in a single-line value (would inject EOS CLI lines)")


def _interface_addresses(device: str, cfg: dict[str, Any]) -> Iterator[AvdIssue]:
    """IP syntax, host bits, and overlapping subnets per VRF, over every *_interfaces[].ip_address-like field."""
    subnets: list[tuple[str, _Subnet, str]] = []  # (vrf, subnet, path)
    for list_key in _INTERFACE_LISTS:
        items = cfg.get(list_key)
        if not isinstance(items, list):
            continue
        for i, intf in enumerate(items):
            if not isinstance(intf, dict):
                continue
            base = f"{list_key}[{i}]"
            vrf = str(intf.get("vrf") or "default")
            fields: list[tuple[str, Any, int]] = [(f"{base}.ip_address", intf.get("ip_address"), 4)]
            fields += [(f"{base}.ip_address_secondaries[{j}]", a, 4) for j, a in _items(intf, "ip_address_secondaries")]
            fields.append((f"{base}.ipv6_address", intf.get("ipv6_address"), 6))
            fields += [(f"{base}.ipv6_addresses[{j}]", a, 6) for j, a in _items(intf, "ipv6_addresses")]
            for path, value, version in fields:
                dhcp = value == "dhcp" and path.endswith(".ip_address") and list_key in _DHCP_OK
                if value is None or dhcp:
                    continue
                subnet = _interface_subnet(value, version)
                if isinstance(subnet, str):
                    yield AvdIssue(device, path, subnet)
                elif subnet is not None:
                    subnets.append((vrf, subnet, path))
    yield from _overlaps(device, subnets)


def _items(d: dict[str, Any], key: str) -> list[tuple[int, Any]]:
    v = d.get(key)
    return list(enumerate(v)) if isinstance(v, list) else []


# (ip version, first address, last address, prefix length) of an interface's subnet, as integers
_Subnet = tuple[int, int, int, int]
_OCTET = r"(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4_CIDR = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}/(3[0-2]|[12]?\d)")
_IPV4 = re.compile(rf"{_OCTET}\.{_OCTET}\.{_OCTET}\.{_OCTET}")


def _interface_subnet(value: Any, version: int) -> _Subnet | str | None:
    """The subnet of interface address `value` ("A.B.C.D/len" or IPv6 "X::Y/len"), a problem (str), or None to skip."""
    m = _IPV4_CIDR.fullmatch(value) if version == 4 and isinstance(value, str) else None
    if m:  # fast path for the common case; ipaddress is ~10x slower
        a, b, c, d, plen = (int(g) for g in m.groups())
        ip = a << 24 | b << 16 | c << 8 | d
        size = 1 << (32 - plen)
        first = ip & ~(size - 1)
        subnet = (4, first, first + size - 1, plen)
    elif version == 6 and (fast := _ipv6_cidr(value)) is not None:
        ip, plen = fast
        if ip >> 118 == 0x3FA:   # fe80::/10
            return None  # link-local addresses may repeat on every interface
        size = 1 << (128 - plen)
        first = ip & ~(size - 1)
        subnet = (6, first, first + size - 1, plen)
    else:
        kind = "IPv4" if version == 4 else "IPv6"
        if not isinstance(value, str) or "/" not in value:
            return f"{value!r} is not an {kind} address with prefix length (address/len)"
        try:
            intf = ipaddress.ip_interface(value)
        except ValueError as exc:
            return f"{value!r} is not a valid {kind} interface address: {exc}"
        if intf.version != version:
            return f"{value!r} is IPv{intf.version}, expected {kind}"
        if version == 6 and intf.ip.is_link_local:
            return None  # link-local addresses may repeat on every interface
        ip, net = int(intf.ip), intf.network
        subnet = (version, int(net.network_address), int(net.broadcast_address), net.prefixlen)
    if subnet[0] == 4 and subnet[3] <= 30 and ip in (subnet[1], subnet[2]):
        return f"{value!r} is the network or broadcast address of {_subnet_text(subnet)}, not a host address"
    return subnet


_IPV6_TEXT = re.compile(r"[0-9A-Fa-f:]{2,39}")


def _ipv6_int(text: str) -> int | None:
    """The IPv6 address `text` as an int: a fast path for hex-and-colon text only (no IPv4 tail, no scope), where
    the C parser and `ipaddress` agree (tests/targets/test_eos_avd.py compares them); None: ask `ipaddress`."""
    if not _IPV6_TEXT.fullmatch(text):
        return None
    try:
        return int.from_bytes(socket.inet_pton(socket.AF_INET6, text), "big")
    except OSError:
        return None


def _ipv6_cidr(value: Any) -> tuple[int, int] | None:
    """(address, prefix length) of "X::Y/len" on the fast path, else None (then `ipaddress` decides and explains)."""
    if not isinstance(value, str):
        return None
    text, slash, plen = value.partition("/")
    if not slash or not (plen.isascii() and plen.isdigit()) or int(plen) > 128:
        return None
    ip = _ipv6_int(text)
    return None if ip is None else (ip, int(plen))


def _subnet_text(subnet: _Subnet) -> str:
    version, first, _, plen = subnet
    return str(ipaddress.ip_network((first, plen)) if version == 4 else ipaddress.IPv6Network((first, plen)))


def _overlaps(device: str, subnets: list[tuple[str, _Subnet, str]]) -> Iterator[AvdIssue]:
    by_vrf: dict[tuple[str, int], list[tuple[_Subnet, str]]] = {}
    for vrf, subnet, path in subnets:
        by_vrf.setdefault((vrf, subnet[0]), []).append((subnet, path))
    for (vrf, _), items in sorted(by_vrf.items()):
        items.sort(key=lambda sp: (sp[0][1], -sp[0][2]))
        cover: tuple[_Subnet, str] | None = None  # the subnet seen so far that reaches furthest
        for subnet, path in items:
            if cover is not None and subnet[1] <= cover[0][2]:
                yield AvdIssue(
                    device,
                    path,
                    f"subnet {_subnet_text(subnet)} overlaps {_subnet_text(cover[0])} of {cover[1]} in VRF {vrf}",
                )
            if cover is None or subnet[2] > cover[0][2]:
                cover = (subnet, path)


def _bgp(device: str, cfg: dict[str, Any]) -> Iterator[AvdIssue]:
    bgp = cfg.get("router_bgp")
    if not isinstance(bgp, dict):
        return
    yield from _asn(device, "router_bgp.as", bgp.get("as"))
    rid = bgp.get("router_id")
    if rid is not None and not _is_ip(rid, 4):
        yield AvdIssue(device, "router_bgp.router_id", f"{rid!r} is not an IPv4 address")
    for list_key in ("peer_groups", "neighbors"):
        for i, item in _items(bgp, list_key):
            if not isinstance(item, dict):
                continue
            for k in ("remote_as", "local_as"):
                yield from _asn(device, f"router_bgp.{list_key}[{i}].{k}", item.get(k))
            address = item.get("ip_address")
            if list_key == "neighbors" and address is not None and not _is_ip(address, None):
                yield AvdIssue(device, f"router_bgp.neighbors[{i}].ip_address", f"{address!r} is not an IP address")


def _asn(device: str, path: str, value: Any) -> Iterator[AvdIssue]:
    if value is None:
        return
    text = str(value) if isinstance(value, int) and not isinstance(value, bool) else value
    if isinstance(text, str):
        if text.isdigit() and 1 <= int(text) <= 4294967295:
            return
        m = _ASDOT.fullmatch(text)
        if m and int(m[1]) <= 65535 and int(m[2]) <= 65535 and (int(m[1]), int(m[2])) != (0, 0):
            return
    yield AvdIssue(device, path, f"{value!r} is not a BGP AS number (1-4294967295 or asdot N.M)")


def _is_ip(value: Any, version: int | None) -> bool:
    if not isinstance(value, str):
        return False
    if version != 6 and _IPV4.fullmatch(value):   # fast paths; ipaddress is ~10x slower
        return True
    if version != 4 and _ipv6_int(value) is not None:
        return True
    try:
        addr = ipaddress.ip_address(value)
    except ValueError:
        return False
    return version is None or addr.version == version
