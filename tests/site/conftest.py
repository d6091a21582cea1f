"""The lab site (inventory/site-lab.yaml: lab-a and lab-b joined by two BAG switches) designed and rendered once per
test session as a site's build folder: OUT/lab-a, OUT/lab-b, the tier's OUT/lab-site and the index OUT/site.json
(read-only: copy it before breaking it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import ROOT

SITE_SPEC = ROOT / "inventory" / "site-lab.yaml"


@pytest.fixture(scope="session")
def lab_site(tmp_path_factory) -> Path:
    from teton.pipeline import build_fabric
    from teton.site.design import design_site
    from teton.site.index import write_index
    from teton.site.load import load_site

    design = design_site(load_site(SITE_SPEC))
    out = tmp_path_factory.mktemp("site") / "lab-site"
    out.mkdir()
    for name, fabric in design.members.items():
        build_fabric(fabric, out / name)
    build_fabric(design.tier, out / design.name)
    write_index(out, design.name, design.name, {name: name for name in design.members})
    return out
