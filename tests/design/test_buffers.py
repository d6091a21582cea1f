"""PFC headroom from the documented 802.1Qbb formula, against the upstream Tomahawk3 SKU tables, and catalogue
overrides that replace it."""

from __future__ import annotations

import pytest

from teton.catalogue import builtin_models
from teton.design.buffers import profile, xoff_bytes
from teton.spec.model import HeadroomOverride

# Dell Z9332f (Tomahawk3) pg_profile_lookup.ini in sonic-buildimage: 400G lossless xoff at 5 m and 300 m.
UPSTREAM_TH3_400G = {5: 178_562, 300: 373_888}


@pytest.mark.parametrize("cable,upstream", sorted(UPSTREAM_TH3_400G.items()))
def test_headroom_is_within_one_percent_of_upstream_th3_tables(cable, upstream):
    got = xoff_bytes(400, cable, 9100, 256)
    assert abs(got - upstream) / upstream < 0.01, (got, upstream)
    assert got % 256 == 0                                  # whole cells


def test_headroom_grows_with_speed_and_cable_and_covers_two_mtus():
    assert xoff_bytes(400, 300, 9100, 256) > xoff_bytes(400, 5, 9100, 256) > xoff_bytes(200, 5, 9100, 256)
    assert xoff_bytes(100, 0, 9100, 256) > 2 * 9100


def test_the_old_figure_was_undersized():
    """Before: 120,832 bytes at 400G and 5 m, a third below what upstream provisions."""
    assert xoff_bytes(400, 5, 9100, 256) > 120_832 * 1.4


def test_a_vendor_figure_in_the_catalogue_replaces_the_formula():
    m = builtin_models()["minipack2"].model_copy(update={"headroom": [
        HeadroomOverride(speed_gbps=400, cable_m=5, xoff_bytes=200_000)]})
    p = profile(m, 400, 5, 9100)
    assert (p.xoff, p.source) == (200_000, "vendor")
    assert profile(m, 400, 300, 9100).source == "formula"
