"""`teton verify BUILD` (issue 22): the whole cluster's routing proven from the rendered configs.  The labs are clean
with the counts they checked; a copy of the lab with one route map, one ASN, one peer address or one maximum-paths
edited is caught, naming the device; failures are recomputed (`--fail`, `--fail-each`); the design's promised ECMP
widths are teton.expect's; results do not depend on how the prefixes are chunked."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from teton.cli import main
from teton.expect import RACK_ROLES, TIER, EcmpModel
from teton.verify.expected import design_views
from teton.verify.model import build_model
from teton.verify.run import load, merge, read_views
from teton.verify.solve import Down, prefix_count, solve
from teton.verify.whatif import down_of, parse_failures

LAB_COUNTS = {"switches": 29, "sessions": {"ipv4": 52, "ipv6": 32, "total": 84},
              "prefixes": {"ipv4": 41, "ipv6": 18, "total": 59}, "routes": 763, "held": 152}


def run(*args: str) -> tuple[int, dict]:
    result = CliRunner().invoke(main, ["verify", *args, "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, json.loads(result.stdout)


def _copy(build: Path, tmp_path: Path) -> Path:
    out = tmp_path / "build"
    shutil.copytree(build, out)
    return out


def _edit(build: Path, device: str, file: str, old: str, new: str, count: int = 1) -> None:
    path = build / "devices" / device / file
    text = path.read_text()
    assert text.count(old) >= count, (device, old)
    path.write_text(text.replace(old, new))


def _rules(report: dict) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for f in report["findings"]:
        out.setdefault(f["rule"], []).append(f)
    return out


def test_the_lab_is_clean_with_the_counts_it_checked(lab_build):
    code, report = run(str(lab_build))
    assert code == 0 and report["ok"] and report["findings"] == []
    assert report["counts"] == LAB_COUNTS
    text = CliRunner().invoke(main, ["verify", str(lab_build)])
    assert text.exit_code == 0
    assert "84 sessions agreed at both ends (52 IPv4, 32 IPv6), 59 prefixes" in text.output
    assert "763 switch x prefix routes checked" in text.output and "every assertion holds" in text.output


def test_the_lab_ib_front_end_is_clean(lab_ib_build):
    code, report = run(str(lab_ib_build))
    assert code == 0 and report["findings"] == []
    assert report["counts"] == {"switches": 14, "sessions": {"ipv4": 18, "ipv6": 0, "total": 18},
                                "prefixes": {"ipv4": 21, "ipv6": 0, "total": 21}, "routes": 260, "held": 26}


def test_a_route_map_that_drops_the_rack_aggregate_names_the_switch_and_every_rack_that_lost_it(lab_build, tmp_path):
    build = _copy(lab_build, tmp_path)
    _edit(build, "z01-r001-rtsw", "frr.conf", "route-map EXPORT_V4 permit 10\n",
          "route-map EXPORT_V4 deny 5\n match ip address prefix-list RACK_V4\nexit\n!\n"
          "route-map EXPORT_V4 permit 10\n")
    _edit(build, "z01-r001-rtsw", "frr.conf", "ip prefix-list ORIGINATE_V4 seq 10",
          "ip prefix-list RACK_V4 seq 5 permit 10.64.0.0/27\nip prefix-list ORIGINATE_V4 seq 10")
    code, report = run(str(build))
    assert code == 1
    rules = _rules(report)
    assert set(rules) == {"rack-reach"}
    (f,) = rules["rack-reach"]
    assert f["file"] == "devices/z01-r001-rtsw/frr.conf" and f["path"] == "10.64.0.0/27"
    assert "does not reach 3 of 3 racks of its network: z01-r002, z02-r001, z02-r002" in f["message"]
    assert "z01-r001-rtsw: route-map EXPORT_V4 out to CTSW_V4 (4 sessions) denies it" in f["message"]


def test_a_transit_route_map_that_drops_an_aggregate_narrows_the_ecmp_behind_it(lab_build, tmp_path):
    build = _copy(lab_build, tmp_path)
    path = build / "devices/z01-ctsw01/structured-config.json"
    cfg = json.loads(path.read_text())
    export = next(rm for rm in cfg["route_maps"] if rm["name"] == "EXPORT_V4")
    export["sequence_numbers"].insert(0, {"sequence": 5, "type": "deny", "match": ["ip address prefix-list RACK1"]})
    cfg["prefix_lists"].append({"name": "RACK1", "sequence_numbers": [{"sequence": 10,
                                                                      "action": "permit 10.64.0.0/27"}]})
    path.write_text(json.dumps(cfg))
    code, report = run(str(build))
    assert code == 1
    widths = {f["file"]: f for f in _rules(report)["ecmp-width"]}
    f = widths["devices/z01-r002-rtsw/frr.conf"]
    assert f["path"] == "10.64.0.0/27" and "10.64.0.0/27 3 (design 4)" in f["message"]
    assert "devices/atsw01/structured-config.json" in widths      # one CTSW fewer behind the aggregation tier


def test_a_changed_asn_is_found_at_both_ends_and_by_what_it_breaks(lab_build, tmp_path):
    build = _copy(lab_build, tmp_path)
    _edit(build, "z01-r002-rtsw", "frr.conf", "router bgp 4201001002", "router bgp 4201001099")
    code, report = run(str(build))
    assert code == 1
    rules = _rules(report)
    sessions = rules["bgp-session"]
    assert len(sessions) == 8 and all("expects AS 4201001002 but z01-r002-rtsw runs AS 4201001099" in f["message"]
                                      for f in sessions)
    lost = {f["path"]: f["message"] for f in rules["rack-reach"]}
    assert "z01-r002-rtsw has no ipv4 session up" in lost["10.64.0.32/27"]


def test_a_changed_peer_address_is_found_naming_the_device(lab_build, tmp_path):
    build = _copy(lab_build, tmp_path)
    _edit(build, "z01-r001-rtsw", "frr.conf", "neighbor 10.1.0.0 ", "neighbor 10.1.0.100 ", count=3)
    code, report = run(str(build))
    assert code == 1
    rules = _rules(report)
    messages = [f["message"] for f in rules["bgp-session"]]
    assert any(m.startswith("z01-r001-rtsw: the session with neighbour 10.1.0.100 cannot come up: no switch")
               for m in messages)
    assert any(m.startswith("z01-ctsw01: the session with neighbour 10.1.0.1 cannot come up: z01-r001-rtsw "
                            "configures no neighbour 10.1.0.0") for m in messages)
    assert any(f["file"] == "devices/z01-r001-rtsw/frr.conf" for f in rules["ecmp-width"])


def test_a_lowered_maximum_paths_is_found_naming_the_device_and_the_prefixes(lab_build, tmp_path):
    build = _copy(lab_build, tmp_path)
    _edit(build, "z02-r001-rtsw", "frr.conf", "maximum-paths 4", "maximum-paths 2", count=2)
    code, report = run(str(build))
    assert code == 1
    (f,) = _rules(report)["ecmp-width"]
    assert f["file"] == "devices/z02-r001-rtsw/frr.conf"
    assert "10.64.0.0/27 2 (design 4)" in f["message"] and "maximum-paths: ipv4 2, ipv6 2" in f["message"]
    assert set(_rules(report)) == {"ecmp-width"}


def _accept_all(build: Path, device: str, route_map: str) -> None:
    """An EOS switch's route map `route_map` edited to permit everything (no match)."""
    path = build / "devices" / device / "structured-config.json"
    cfg = json.loads(path.read_text())
    rm = next(rm for rm in cfg["route_maps"] if rm["name"] == route_map)
    rm["sequence_numbers"] = [{"sequence": 10, "type": "permit"}]
    path.write_text(json.dumps(cfg))


def test_a_leaked_link_subnet_and_an_unplanned_prefix_are_found(lab_build, tmp_path):
    """A rack switch that sends every connected route: its peers' inbound policy drops them (sent, not spread); a
    spine whose inbound policy accepts everything from it spreads its link subnets."""
    build = _copy(lab_build, tmp_path)
    _edit(build, "z01-r001-rtsw", "frr.conf", "  redistribute connected route-map CONNECTED_V4\n",
          "  redistribute connected\n")
    _edit(build, "z01-r001-rtsw", "frr.conf", "route-map EXPORT_V4 permit 10\n match ip address prefix-list "
          "ORIGINATE_V4\n", "route-map EXPORT_V4 permit 10\n")   # and it sends everything it has
    code, report = run(str(build))
    assert code == 1
    rules = _rules(report)
    assert set(rules) == {"unexpected-prefix"}                       # sent, and dropped at z01-r001-rtsw's peers
    assert all(f["file"] == "devices/z01-r001-rtsw/frr.conf" and "; 1 switches hold it" in f["message"]
               for f in rules["unexpected-prefix"])
    _accept_all(build, "z01-ctsw02", "IMPORT_z01-r001-rtsw_V4")
    code, report = run(str(build))
    rules = _rules(report)
    leaked = {f["path"] for f in rules["link-prefix"]}
    assert "10.1.0.0/31" in leaked                                   # its uplink to z01-ctsw01, now everywhere
    assert all(f["file"] == "devices/z01-r001-rtsw/frr.conf" for f in rules["unexpected-prefix"])


def test_fail_a_ctsw_recomputes_paths_bandwidth_pairs_and_oversubscription(lab_build):
    code, report = run(str(lab_build), "--fail", "z01-ctsw01")
    assert code == 0
    (w,) = report["whatif"]
    tiers = {(t["network"], t["zone"], t["role"]): t for t in w["tiers"]}
    rtsw = tiers[("roce", 1, "rtsw")]
    assert rtsw["paths"] == [4, 3] and rtsw["design_paths"] == 3 and rtsw["bandwidth_gbps"] == [1600, 1200]
    assert rtsw["oversubscription"] == [4.0, 5.333]                 # 8 x 400G of hosts over 3 x 400G up
    assert tiers[("roce", 2, "rtsw")]["paths"] == [4, 4]             # the other zone keeps its CTSWs
    assert tiers[("roce", None, "atsw")]["paths"] == [4, 3]
    assert w["pairs_lost"] == 0 and all(r["with_path"] == [28, 28] for r in w["rails"])
    assert w["deviations"] == []
    text = CliRunner().invoke(main, ["verify", str(lab_build), "--fail", "z01-ctsw01"]).output
    assert "roce zone 1 rtsw (2 up): ECMP paths 4 -> 3 (design 3), bandwidth 1,600 -> 1,200 Gb/s" in text


def test_fail_a_link_and_a_rack_switch(lab_build):
    link = "z01-r001-rtsw:Ethernet48--z01-ctsw01:Ethernet3/1/1"
    code, report = run(str(lab_build), "--fail", link)
    assert code == 0
    tiers = {(t["network"], t["zone"], t["role"]): t for t in report["whatif"][0]["tiers"]}
    assert tiers[("roce", 1, "rtsw")]["paths"] == [4, 3]
    assert tiers[("roce", 1, "ctsw")]["unreached_routes"] == 2       # RFC 7938: its zone's ASN is on every way round
    code, report = run(str(lab_build), "--fail", "z01-r001-rtsw")
    (w,) = report["whatif"]
    assert w["pairs_lost"] == sum(r["with_path"][0] - r["with_path"][1] for r in w["rails"]) > 0


def test_fail_each_ctsw_sweeps_every_single_failure_and_reports_the_worst(lab_build):
    code, report = run(str(lab_build), "--fail-each", "ctsw")
    assert code == 0
    s = report["sweep"]
    assert s["failures"] == 8 and len(s["each"]) == 8
    assert s["worst"]["drop"]["paths"] == [4, 3] and s["worst"]["pairs_lost"] == 0
    assert s["worst_oversubscription"] == 5.333


@pytest.mark.parametrize("args, needle", [
    (["--fail", "nosuch"], "--fail nosuch: no device 'nosuch'"),
    (["--fail", "z01-r001-rtsw:Ethernet48--z01-ctsw02:Ethernet3/1/1"], "has no link z01-r001-rtsw:Ethernet48"),
    (["--fail-each", "spine"], "--fail-each spine: the build has no device of that role"),
    (["--dask", "nowhere:1"], "--dask nowhere:1: give a scheduler's address"),
])
def test_bad_input_exits_2_naming_the_argument(lab_build, args, needle):
    result = CliRunner().invoke(main, ["verify", str(lab_build), *args])
    assert result.exit_code == 2 and needle in result.output and "Traceback" not in result.output


def test_a_folder_that_is_no_build_exits_2_naming_the_file(tmp_path):
    result = CliRunner().invoke(main, ["verify", str(tmp_path / "nothing")])
    assert result.exit_code == 2 and "no such build folder" in result.output
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "fabric.json").write_text("{not json")
    result = CliRunner().invoke(main, ["verify", str(tmp_path / "b")])
    assert result.exit_code == 2 and "fabric.json" in result.output and "Traceback" not in result.output


def test_the_design_promises_the_ecmp_widths_of_teton_expect(lab_build, lab_fabric):
    """Every routed switch towards every rack switch of its network, without and with failures."""
    design, _ = build_model(design_views(lab_fabric), lab_fabric)
    for failed in ((), ("z01-ctsw01",), ("atsw02", "z02-ctsw03")):
        down = down_of(design, parse_failures(failed, lab_fabric))
        sol = solve(design, np.arange(prefix_count(design)), down)
        row = {p: k for k, p in enumerate(design.prefixes["ipv4"].table.prefixes)}
        expect = EcmpModel(lab_fabric, frozenset(failed))
        for x in expect.alive:
            for t in expect.alive:
                d = lab_fabric.devices[t]
                if d.role not in RACK_ROLES or x == t or not d.prefixes4 or \
                        (TIER[lab_fabric.devices[x].role] == 1) != (lab_fabric.devices[x].role in RACK_ROLES):
                    continue
                if {lab_fabric.devices[x].plane, d.plane} != {d.plane}:
                    continue
                got = int(sol.width[row[d.prefixes4[0]], design.index[x]])
                assert got == expect.next_hops(x, t), (failed, x, t)


def test_results_do_not_depend_on_how_prefixes_are_chunked(lab_build):
    source, fabric = load(lab_build)
    views, _ = read_views(source, fabric)
    model, _ = build_model(views, fabric)
    ids = np.arange(prefix_count(model))
    whole = solve(model, ids, Down.none(model))
    for size in (1, 7):
        parts = merge([solve(model, ids[k:k + size]) for k in range(0, len(ids), size)], model)
        assert (parts.dist == whole.dist).all() and (parts.width == whole.width).all()
        assert all((parts.received[f] == whole.received[f]).all() for f in whole.received)
    shuffled = np.random.default_rng(0).permutation(ids)
    again = solve(model, shuffled)
    assert (again.dist[np.argsort(shuffled)] == whole.dist).all()


def test_sessions_count_only_when_both_ends_agree_on_the_password(lab_build, tmp_path):
    build = _copy(lab_build, tmp_path)
    _edit(build, "z02-r002-rtsw", "frr.conf", "password TETON_SECRET_bgp_backend", "password TETON_SECRET_other",
          count=2)
    code, report = run(str(build))
    assert code == 1
    messages = [f["message"] for f in _rules(report)["bgp-session"]]
    assert len(messages) == 8 and all(re.search(r"has the password of secret (bgp_backend|other), z02-r002-rtsw", m)
                                      or "z02-r002-rtsw has the password of secret other" in m for m in messages)


def test_a_failure_patched_onto_the_base_equals_solving_again(lab_build):
    """--fail-each's shortcut (teton.verify.incremental) against a full solve, for every switch and every
    switch-to-switch link of the lab."""
    from teton.verify.incremental import fail_solution, solve_bases
    from teton.verify.whatif import rack_prefix_ids

    source, fabric = load(lab_build)
    views, _ = read_views(source, fabric)
    model, _ = build_model(views, fabric)
    ids = np.arange(prefix_count(model))
    bases = solve_bases(model, ids)
    links = [f"{lk.a.device}:{lk.a.port}--{lk.b.device}:{lk.b.port}" for lk in fabric.links
             if lk.a.device in model.index and lk.b.device in model.index]
    for spec in [*model.names, *links]:
        down = down_of(model, parse_failures([spec], fabric))
        fast, full = fail_solution(model, bases, down), solve(model, ids, down, count=False)
        for a, b in ((fast.dist, full.dist), (fast.width, full.width), (fast.valley, full.valley)):
            assert (a == b).all(), spec
        assert np.allclose(fast.bandwidth, full.bandwidth), spec
    assert len(rack_prefix_ids(model, fabric, "roce")) == 8


@pytest.mark.parametrize("prepend", [False, True])
def test_the_compiled_search_equals_the_vectorized_one(lab_build, lab_ib_build, tmp_path, monkeypatch, prepend):
    """teton.verify.kernel (numba) and the numpy search of teton.verify.solve give the same arrays, received counts
    included; with a drained switch's prepends too."""
    from teton.verify import solve as solve_module

    if solve_module.KERNEL is None:
        pytest.fail("numba is not installed (pyproject.toml pins it): the compiled search cannot be compared")
    builds = [lab_build, lab_ib_build]
    if prepend:
        build = _copy(lab_build, tmp_path)
        _edit(build, "z01-r002-rtsw", "frr.conf", " match ip address prefix-list ORIGINATE_V4\n",
              " match ip address prefix-list ORIGINATE_V4\n set as-path prepend 4201001002 4201001002\n")
        builds = [build]
    for build in builds:
        source, fabric = load(build)
        views, _ = read_views(source, fabric)
        model, _ = build_model(views, fabric)
        ids = np.arange(prefix_count(model))
        for down in (Down.none(model), down_of(model, parse_failures(["z01-ctsw01"] if "z01-ctsw01" in
                                                                    fabric.devices else [], fabric))):
            monkeypatch.delenv("TETON_VERIFY_NUMPY", raising=False)
            compiled = solve(model, ids, down)
            monkeypatch.setenv("TETON_VERIFY_NUMPY", "1")
            vectorized = solve(model, ids, down)
            for a, b in ((compiled.dist, vectorized.dist), (compiled.width, vectorized.width),
                         (compiled.valley, vectorized.valley)):
                assert (a == b).all()
            assert np.allclose(compiled.bandwidth, vectorized.bandwidth)
            assert all((compiled.received[f] == vectorized.received[f]).all() for f in compiled.received)


def _renumber(build: Path, device: str, asn: int) -> None:
    """Give `device` (an EOS switch) another ASN, and every neighbour of it the same, so its sessions stay up."""
    path = build / "devices" / device / "structured-config.json"
    cfg = json.loads(path.read_text())
    old = str(cfg["router_bgp"]["as"])
    cfg["router_bgp"]["as"] = str(asn)
    path.write_text(json.dumps(cfg))
    mine = {e["ip_address"].split("/")[0] for e in cfg["ethernet_interfaces"] if e.get("ip_address")}
    for conf in build.glob("devices/*/frr.conf"):
        text = conf.read_text()
        for a in mine:
            text = text.replace(f"neighbor {a} remote-as {old}\n", f"neighbor {a} remote-as {asn}\n")
        conf.write_text(text)
    for sc in build.glob("devices/*/structured-config.json"):
        data = json.loads(sc.read_text())
        for n in data.get("router_bgp", {}).get("neighbors", []):
            if n["ip_address"] in mine:
                n["remote_as"] = str(asn)
        sc.write_text(json.dumps(data))


def test_a_rack_switch_that_passes_routes_on_makes_valleys(lab_build, tmp_path):
    """A front-end rack switch whose export permits everything, between two FSWs of different ASNs: the FSWs' inbound
    policy keeps it harmless; with theirs accepting everything, paths from one FSW down to it and up to the other are
    valleys (RFC 7938's rack switches send only their own prefixes)."""
    build = _copy(lab_build, tmp_path)
    _renumber(build, "z01-fsw02", 4210000099)
    code, report = run(str(build))
    assert code == 0, report["findings"]                     # another ASN, both ends agreeing: still clean
    _edit(build, "z01-r001-frsw", "frr.conf", "route-map EXPORT_V4 permit 10\n match ip address prefix-list "
          "ORIGINATE_V4\n", "route-map EXPORT_V4 permit 10\n")
    code, report = run(str(build))
    assert code == 0, report["findings"]          # the FSWs take only the rack's own prefixes from it: no valley
    for fsw in ("z01-fsw01", "z01-fsw02"):
        _accept_all(build, fsw, "IMPORT_z01-r001-frsw_V4")
    code, report = run(str(build))
    assert code == 1
    valleys = _rules(report)["valley"]
    assert valleys and all("go down a tier and up again" in f["message"] for f in valleys)
    assert any("z01-fsw0" in f["message"] for f in valleys)


def test_a_storage_rack_switch_that_sends_nothing_breaks_the_front_ends_reach(lab_build, tmp_path):
    build = _copy(lab_build, tmp_path)
    _edit(build, "s1-r01-frsw", "frr.conf", " match ip address prefix-list ORIGINATE_V4\n",
          " match ip address prefix-list NOTHING_V4\n")
    code, report = run(str(build))
    assert code == 1
    reach = _rules(report)["frontend-reach"]
    assert {f["file"] for f in reach} >= {"devices/z01-r001-frsw/frr.conf", "devices/z02-r002-frsw/frr.conf"}
    assert all("of storage rack s1-r01 (s1-r01-frsw)" in f["message"] for f in reach)
