"""A site spec in Python (inventory/site-lab.py) is the same site as its YAML (inventory/site-lab.yaml), and a Python
site spec that binds no `site` is refused naming what it binds."""

from __future__ import annotations

import pytest

from tests.helpers import INVENTORY
from teton.findings import SpecError
from teton.site.load import is_site_spec, load_site


def test_the_python_lab_site_loads_into_the_yaml_one():
    yaml_site, py_site = load_site(INVENTORY / "site-lab.yaml"), load_site(INVENTORY / "site-lab.py")
    assert py_site.site == yaml_site.site
    assert py_site.clusters == yaml_site.clusters
    assert is_site_spec(INVENTORY / "site-lab.py") and not is_site_spec(INVENTORY / "lab.py")


def test_a_python_site_spec_must_bind_a_site(tmp_path):
    spec = tmp_path / "s.py"
    spec.write_text("from teton.spec.model import Cluster\nsite = 3\n")
    with pytest.raises(SpecError) as err:
        load_site(spec)
    [f] = err.value.findings
    assert f.path == "site" and "must bind `site` to a teton.spec.site.Site (it binds a value of type int)" in f.message
