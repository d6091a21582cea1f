"""The address formatting the design uses is exactly ipaddress's text, for every kind of address."""

from __future__ import annotations

import ipaddress

from hypothesis import given, settings
from hypothesis import strategies as st

from teton.design import addressing

hextets = st.lists(st.sampled_from([0, 0, 0, 1, 0xFFFF]) | st.integers(0, 0xFFFF), min_size=8, max_size=8)


@settings(max_examples=3000, deadline=None)
@given(hextets)
def test_ipv6_text_is_ipaddress_text(parts):
    value = 0
    for h in parts:
        value = value << 16 | h
    assert addressing._v6(value) == str(ipaddress.IPv6Address(value))


@settings(max_examples=1000, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_ipv4_text_is_ipaddress_text(value):
    assert addressing._v4(value) == str(ipaddress.IPv4Address(value))
