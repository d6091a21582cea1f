"""Inbound policy (issue 34): every eBGP session accepts only what the design lets the neighbour send
(`teton.design.routing.imports`).  `teton verify` models it from the files: a rack switch that announces another rack's
aggregate, or a default route, changes no other switch's routes (no blackhole: the other rack's traffic is not
taken), and the same build with the spines' inbound policy opened is caught drawing that traffic."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np

from tests.verify.test_verify import _accept_all, _rules, run
from teton.verify.model import build_model
from teton.verify.rules import Checked
from teton.verify.run import load, read_views
from teton.verify.solve import Down, prefix_count, solve

ROGUE, VICTIM = "z01-r001-rtsw", "z01-r002-rtsw"
THEIRS = "10.64.0.32/27"            # z01-r002-rtsw's rack aggregate
SPINES = ("z01-ctsw01", "z01-ctsw02", "z01-ctsw03", "z01-ctsw04")


def _solved(build: Path) -> Checked:
    source, fabric = load(build)
    views, _ = read_views(source, fabric)
    model, _ = build_model(views, fabric)
    return Checked.of(model, solve(model, np.arange(prefix_count(model)), Down.none(model)))


def _rogue(lab_build: Path, tmp_path: Path) -> Path:
    """The lab with ROGUE holding THEIRS on a port of its own, announcing it (a network its export permits) and
    sending its spines a default route."""
    build = tmp_path / "build"
    shutil.copytree(lab_build, build)
    db_path = build / "devices" / ROGUE / "config_db.json"
    db = json.loads(db_path.read_text())
    db["INTERFACE"]["Ethernet104|10.64.0.33/27"] = {}
    db_path.write_text(json.dumps(db))
    conf = build / "devices" / ROGUE / "frr.conf"
    text = conf.read_text()
    for old, new in (("ip prefix-list ORIGINATE_V4 seq 10 ",
                      f"ip prefix-list ORIGINATE_V4 seq 5 permit {THEIRS}\nip prefix-list ORIGINATE_V4 seq 10 "),
                     ("  redistribute connected route-map CONNECTED_V4\n",
                      f"  redistribute connected route-map CONNECTED_V4\n  network {THEIRS}\n"
                      "  neighbor CTSW_V4 default-originate\n")):
        assert old in text
        text = text.replace(old, new)
    conf.write_text(text)
    return build


def test_a_rack_switch_announcing_another_racks_prefix_or_a_default_is_dropped_at_its_peers(lab_build, tmp_path):
    clean, build = _solved(lab_build), _rogue(lab_build, tmp_path)
    rogue = _solved(build)
    m = rogue.model
    holders = {m.names[i] for i in m.prefixes["ipv4"].originators[m.prefixes["ipv4"].position[THEIRS]]}
    assert holders == {ROGUE, VICTIM}                        # it really announces it
    others = np.array([n != ROGUE for n in m.names])
    d, c = rogue.dist(THEIRS), clean.dist(THEIRS)
    assert d is not None and c is not None
    # every other switch routes THEIRS as before: same path length and ECMP width, towards the victim only
    assert (d[others] == c[others]).all()
    assert (rogue.solution.width[rogue.row[THEIRS]][others] == clean.solution.width[clean.row[THEIRS]][others]).all()
    backend = [i for i, n in enumerate(m.names) if m.network[i] == "roce"]
    default = rogue.dist("0.0.0.0/0")
    assert default is not None and (default[backend] < 0).all()  # no backend switch installs the rogue's default
    # verify names the sender, and nothing it would break
    code, report = run(str(build))
    assert code == 1 and set(_rules(report)) == {"unexpected-prefix"}
    assert {f["file"] for f in report["findings"]} == {f"devices/{ROGUE}/frr.conf"}


def test_without_the_spines_inbound_policy_the_rogue_draws_the_other_racks_traffic(lab_build, tmp_path):
    build = _rogue(lab_build, tmp_path)
    for spine in SPINES:
        _accept_all(build, spine, f"IMPORT_{ROGUE}_V4")
    clean, rogue = _solved(lab_build), _solved(build)
    m = rogue.model
    spines = [m.index[s] for s in SPINES]
    width = rogue.solution.width[rogue.row[THEIRS]]
    assert (width[spines] == 2 * clean.solution.width[clean.row[THEIRS]][spines]).all()   # half to the rogue
    default = rogue.dist("0.0.0.0/0")
    assert default is not None and (default[spines] >= 0).all()
    code, report = run(str(build))
    assert code == 1 and "ecmp-width" in _rules(report)
