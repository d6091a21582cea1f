"""cabling.csv: cable ids are unique, short, and stable under changes in other racks (a review diff of a one-rack
change shows that rack's cables only)."""

from __future__ import annotations

import csv
import io

from teton.design import design
from teton.spec.model import Cluster
from teton.targets import RenderContext
from teton.targets.cabling import TARGET


def _rows(cluster: Cluster) -> dict[tuple[str, str, str, str], str]:
    text = TARGET.render(design(cluster), RenderContext(validate=False))["cabling.csv"]
    rows = list(csv.DictReader(io.StringIO(text)))
    ids = [r["cable_id"] for r in rows]
    assert len(ids) == len(set(ids))
    assert all(r["cable_id"].startswith(r["rack"] + "-") for r in rows)
    return {(r["a_device"], r["a_port"], r["b_device"], r["b_port"]): r["cable_id"] for r in rows}


def test_removing_a_host_renumbers_no_cable_of_another_rack(lab_cluster):
    before = _rows(lab_cluster)
    after = _rows(Cluster.model_validate({**lab_cluster.model_dump(), "racks": {"z01-r001": {"hosts": 1}}}))
    gone = {k for k in before if k not in after}
    assert gone and all(k[0] == "z01-r001-h2" for k in gone)
    renumbered = {k for k in after if before[k] != after[k]}
    assert all(k[0].startswith("z01-r001") or k[2].startswith("z01-r001") for k in renumbered)
    assert len(after) == len(before) - len(gone)


def test_growing_within_the_room_renumbers_no_cable(tmp_path):
    """A zone, an aggregator and a spine added (upper-tier ports kept for them) leave every existing cable's id."""
    from tests.design.test_growth import lab_with_room
    from tests.helpers import write_spec
    from teton.spec.load import load_spec

    data = lab_with_room()
    before = _rows(load_spec(write_spec(tmp_path, data, "before.yaml")))
    data["zones"] = 3
    data["backend"]["atsw"]["count"] = 3
    data["frontend"]["ssw"]["per_plane"] = 2
    data["backend"]["ctsw"]["oversubscription"] = 2 / 3
    after = _rows(load_spec(write_spec(tmp_path, data, "after.yaml")))
    assert {k: after[k] for k in before} == before
    assert len(after) > len(before)
    assert before[("z01-r001-h1", "be0", "z01-r001-rtsw", "Ethernet8")] == "z01-r001-45-000"   # rack, RU, port
