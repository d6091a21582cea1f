"""`monitoring/` (issue 36): Prometheus's own tools accept what teton renders (`promtool check rules`, `promtool test
rules` on the unit tests rendered beside the rules, `promtool check config`, `promtool check metrics` on the designed
series); every designed session and cable is in the designed series exactly once; a threshold or a duration changed
in the rules and not in the design fails the rendered tests; the spec's thresholds flow into the rules; the render is
the same bytes every time.  The 24k reference's files pass the same checks (marked scale24k)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.helpers import LAB, write_spec
from teton.design import design
from teton.fabric.cables import cables
from teton.fabric.model import Fabric
from teton.spec.load import load_spec
from teton.targets import RenderContext
from teton.targets.monitoring import TARGET
from teton.targets.monitoring.text import quote, series

PROMTOOL = shutil.which("promtool")
SERIES = re.compile(r'^(\w+)\{(.*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def promtool(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    assert PROMTOOL is not None, "promtool is not installed (scripts/setup installs Debian's prometheus package)"
    return subprocess.run([PROMTOOL, *args], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=300)


def check_all(folder: Path) -> None:
    """Every promtool check of a build's monitoring/ passes."""
    tests = sorted(p.name for p in (folder / "tests").glob("*.test.yml"))
    assert {"links.test.yml", "bgp.test.yml", "meta.test.yml"} <= set(tests)
    for args in (("check", "rules", "rules/teton.rules.yml"), ("test", "rules", *(f"tests/{t}" for t in tests)),
                 ("check", "config", "prometheus.yml")):
        result = promtool(*args, cwd=folder)
        assert result.returncode == 0, f"promtool {' '.join(args)}:\n{result.stdout}\n{result.stderr}"
    for prom in sorted((folder / "designed").glob("*.prom")):
        result = promtool("check", "metrics", cwd=folder, stdin=prom.read_text())
        assert result.returncode == 0, f"{prom.name}: {result.stdout}{result.stderr}"


def parse(text: str) -> list[tuple[str, dict[str, str], str]]:
    out = []
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        match = SERIES.match(line)
        assert match, line
        out.append((match[1], dict(LABEL.findall(match[2])), match[3]))
    return out


def expected_sessions(fabric: Fabric) -> dict[tuple[str, str], tuple[str, str]]:
    """{(cable id, family): (south end's address, north end's)} of every neighbour the design configures."""
    by_end = {(e.device, e.port): c for c in cables(fabric) for e in (c.a, c.b)}
    out: dict[tuple[str, str], tuple[str, str]] = {}
    ends = Counter()
    for d in fabric.devices.values():
        for n in d.routing.neighbors if d.routing is not None else ():
            c = by_end[(d.name, n.interface)]
            south = (c.a.device, c.a.port) == (d.name, n.interface)
            pair = (n.local_address, n.address) if south else (n.address, n.local_address)
            assert out.setdefault((c.id, n.family), pair) == pair     # both ends agree on the addresses
            ends[(c.id, n.family)] += 1
    assert set(ends.values()) == {2}                                  # every session configured at both ends
    return out


def check_counts(folder: Path, fabric: Fabric) -> None:
    links = parse((folder / "designed/links.prom").read_text())
    ids = Counter(labels["cable_id"] for _, labels, _ in links)
    found = cables(fabric)
    assert ids == Counter(c.id for c in found) and set(ids.values()) == {1}
    assert {(x["device"], x["port"], x["peer_device"], x["peer_port"]) for _, x, _ in links} == \
        {(c.a.device, c.a.port, c.b.device, c.b.port) for c in found}
    sessions = parse((folder / "designed/sessions.prom").read_text())
    keys = Counter((x["cable_id"], x["afi"]) for _, x, _ in sessions)
    want = expected_sessions(fabric)
    assert keys == Counter(list(want)) and set(keys.values()) == {1}
    assert {(x["cable_id"], x["afi"]): (x["address"], x["peer_address"]) for _, x, _ in sessions} == want
    neighbours = sum(len(d.routing.neighbors) for d in fabric.devices.values() if d.routing is not None)
    assert 2 * len(sessions) == neighbours


@pytest.fixture(scope="module")
def lab_monitoring(lab_build: Path) -> Path:
    return lab_build / "monitoring"


def test_promtool_accepts_the_labs_rules_tests_config_and_designed_series(lab_monitoring):
    check_all(lab_monitoring)


def test_the_dcqcn_infiniband_and_fboss_variants_pass_promtool_too(lab_dcqcn_build, lab_ib_build, lab_data,
                                                                   tmp_path):
    """With ECN on, the rendered tests exercise TetonEcnMarkingHigh; on InfiniBand and FBOSS, whose switches teton
    names no exporter for, their ends are marked unmonitored and no test expects them to fire."""
    from tests.helpers import fboss

    check_all(lab_dcqcn_build / "monitoring")
    ecn = (lab_dcqcn_build / "monitoring/tests/roce.test.yml").read_text()
    assert "alertname: TetonEcnMarkingHigh" in ecn and "TetonEcnMarksUndesigned" not in ecn
    check_all(lab_ib_build / "monitoring")
    assert 'monitored="false",nos="opensm"' in (lab_ib_build / "monitoring/designed/devices.prom").read_text()
    fabric = design(load_spec(write_spec(tmp_path, fboss(lab_data))))
    folder = tmp_path / "fboss"
    for path, text in TARGET.render(fabric, RenderContext(validate=False)).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    check_all(folder / "monitoring")
    assert 'monitored="false",nos="fboss"' in (folder / "monitoring/designed/devices.prom").read_text()


def test_every_designed_session_and_cable_is_in_the_designed_series_once(lab_monitoring, lab_fabric):
    check_counts(lab_monitoring, lab_fabric)
    devices = parse((lab_monitoring / "designed/devices.prom").read_text())
    assert sorted(x["device"] for _, x, _ in devices) == sorted(lab_fabric.devices)


def test_the_rules_name_no_device_and_the_tests_exercise_every_alert(lab_monitoring, lab_fabric):
    rules = (lab_monitoring / "rules/teton.rules.yml").read_text()
    assert not any(name in rules for name in lab_fabric.devices)
    alerts = {r["alert"] for g in yaml.safe_load(rules)["groups"] for r in g["rules"] if "alert" in r}
    tested = {t["alertname"] for f in (lab_monitoring / "tests").glob("*.yml")
              for g in yaml.safe_load(f.read_text())["tests"] for t in g.get("alert_rule_test", [])}
    assert alerts - tested == {"TetonEcnMarkingHigh"}          # the lab runs PFC only: no port marks ECN by design
    fired = {t["alertname"] for f in (lab_monitoring / "tests").glob("*.yml")
             for g in yaml.safe_load(f.read_text())["tests"] for t in g.get("alert_rule_test", []) if t["exp_alerts"]}
    assert fired == tested                                      # each tested alert is seen firing, not only silent


@pytest.mark.parametrize("change", [
    ("TetonBufferOccupancyHigh", "> 0.8", "> 0.9"),            # a threshold
    ("TetonLinkDown", "for: 20s", "for: 30s"),                 # a duration
    ("TetonBgpSessionDown", "for: 20s", "for: 10s"),
    ("TetonLinkFlapping", ">= 6", ">= 8"),
])
def test_a_rule_changed_in_the_rules_file_alone_fails_the_rendered_tests(lab_monitoring, tmp_path, change):
    alert, old, new = change
    copy = shutil.copytree(lab_monitoring, tmp_path / "monitoring")
    path = copy / "rules/teton.rules.yml"
    text = path.read_text()
    start = text.index(f"- alert: {alert}\n")
    end = text.find("- alert:", start + 1)
    end = len(text) if end < 0 else end
    assert text[start:end].count(old) == 1
    path.write_text(text[:start] + text[start:end].replace(old, new) + text[end:])
    assert promtool("check", "rules", "rules/teton.rules.yml", cwd=copy).returncode == 0
    result = promtool("test", "rules", *sorted(f"tests/{p.name}" for p in (copy / "tests").glob("*.yml")), cwd=copy)
    assert result.returncode != 0 and f"alertname: {alert}" in result.stdout + result.stderr


def test_the_render_is_the_same_bytes_every_time(lab_monitoring, lab_fabric):
    ctx = RenderContext(validate=False)
    first, second = TARGET.render(lab_fabric, ctx), TARGET.render(lab_fabric, ctx)
    assert first == second
    assert {p: t for p, t in first.items()} == {
        f"monitoring/{p.relative_to(lab_monitoring)}": p.read_text() for p in lab_monitoring.rglob("*") if p.is_file()}


def test_the_render_does_not_depend_on_the_hash_seed(lab_monitoring, tmp_path):
    out = tmp_path / "b"
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(Path(__file__).parents[2] / "infra")}
    result = subprocess.run([sys.executable, "-m", "teton.cli", "render", str(LAB), "-o", str(out), "--only",
                             "monitoring"], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for p in lab_monitoring.rglob("*"):
        if p.is_file():
            assert (out / "monitoring" / p.relative_to(lab_monitoring)).read_bytes() == p.read_bytes(), p


def test_the_specs_thresholds_and_durations_flow_into_the_rules(lab_data, tmp_path):
    lab_data["monitoring"] = {"buffer_percent": 70, "link_down_for_s": 40, "bgp_down_for_s": 0, "link_flaps": 5,
                              "evaluation_interval_s": 20, "scrape_interval_s": 15, "pfc_pause_percent": 50,
                              "buffer_for_s": 60, "ecn_for_s": 300, "optics_margin_db": 1.5}
    fabric = design(load_spec(write_spec(tmp_path, lab_data)))
    assert fabric.monitoring is not None and fabric.monitoring.buffer_percent == 70
    assert fabric.policy is not None and fabric.policy.monitoring.buffer_alert_percent == 70
    files = TARGET.render(fabric, RenderContext(validate=False))
    rules = {r.get("alert") or r["record"]: r for g in yaml.safe_load(files["monitoring/rules/teton.rules.yml"])
             ["groups"] for r in g["rules"]}
    assert rules["TetonBufferOccupancyHigh"]["expr"].endswith("> 0.7") and rules["TetonBufferOccupancyHigh"]["for"] \
        == "60s"
    assert rules["TetonLinkDown"]["for"] == "40s" and "for" not in rules["TetonBgpSessionDown"]
    assert rules["TetonLinkFlapping"]["expr"].endswith(">= 10") and "> 0.5)" in rules["TetonPfcPauseHigh"]["expr"]
    assert "+ 1.5)" in rules["TetonOpticRxPowerOutOfRange"]["expr"]
    config = yaml.safe_load(files["monitoring/prometheus.yml"])
    assert config["global"] == {"scrape_interval": "15s", "evaluation_interval": "20s",
                                "external_labels": {"cluster": "lab"}}
    folder = tmp_path / "out"
    for path, text in files.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(text)
    check_all(folder / "monitoring")                     # the rendered tests hold the new values


def test_a_duration_between_two_evaluations_is_refused_at_its_spec_path(lab_data, tmp_path):
    from teton.findings import SpecError

    lab_data["monitoring"] = {"link_down_for_s": 25}
    with pytest.raises(SpecError) as err:
        load_spec(write_spec(tmp_path, lab_data))
    assert "monitoring" in str(err.value) and "multiple of evaluation_interval_s" in str(err.value)


def test_the_docs_name_every_alert_and_every_metric_the_rules_read(lab_monitoring):
    from teton.targets.monitoring.metrics import exporter_names

    doc = (Path(__file__).parents[2] / "docs/monitoring.md").read_text()
    rules = yaml.safe_load((lab_monitoring / "rules/teton.rules.yml").read_text())
    alerts = [r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r]
    assert len(alerts) == 17 and [a for a in alerts if f"`{a}`" not in doc] == []
    assert [m for m in exporter_names() if f"`{m}`" not in doc] == []


def test_label_values_are_quoted_and_escaped():
    assert quote('a"b\\c\nd') == '"a\\"b\\\\c\\nd"'
    assert series("m", (("a", 'x"y'),)) == 'm{a="x\\"y"}'
    line = series("m", (("a", 'q"b\\'),))
    result = promtool("check", "metrics", cwd=Path("."), stdin=f"# HELP m x\n# TYPE m gauge\n{line} 1\n")
    assert result.returncode == 0, result.stdout + result.stderr


def _series_reference(name: str, labels: tuple[tuple[str, str], ...]) -> str:
    return name + "{" + ",".join(f"{k}={quote(v)}" for k, v in labels) + "}" if labels else name


def test_the_fast_label_paths_equal_the_reference_on_random_labels():
    """`fixed_labels` is `labels_of`, `series`'s unquoted join is each value quoted, `number`'s int path is the
    float's, on values with and without quotes, backslashes, newlines, None, "", ints and str subclasses."""
    import random

    from teton.targets.monitoring.text import fixed_labels, labels_of, number

    class Name(str):
        """A str subclass label value."""

    from enum import Enum

    class Role(str, Enum):  # noqa: UP042  (formats as "Role.SPINE": the label is its str data)
        SPINE = "spine"

    rng = random.Random(7)
    names = ("a", "b_c", "device", "peer", "z9")
    make = fixed_labels(*names)
    alphabet = ['x', 'y', '"', '\\', '\n', '=', ',', '{', 'é']
    for _ in range(5000):
        values = [rng.choice([None, "", 0, rng.randint(-10**20, 10**20), Name("n\""), Role.SPINE,
                              "".join(rng.choices(alphabet, k=rng.randint(0, 4)))]) for _ in names]
        labels, pairs = make(*values), list(zip(names, values, strict=True))
        assert labels == labels_of(dict(pairs)) == labels_of(pairs)
        assert [type(v) for _, v in labels] == [type(v) for _, v in labels_of(pairs)]
        assert series("m", labels) == _series_reference("m", labels)
    for v in (0, 1, -1, 2**53, -2**53, 2**53 + 1, -(2**53) - 1, 10**30, 1.5, 2.0, True):
        assert number(v) == (str(int(v)) if float(v).is_integer() else repr(float(v)))
    with pytest.raises(ValueError):
        fixed_labels("b", "a")
    with pytest.raises(ValueError):
        fixed_labels("a", "__b")


def test_the_link_samples_kept_during_test_files_are_those_computed_afresh(lab_fabric):
    import sys

    from teton.design.monitoring import monitoring as default_monitoring
    from teton.targets.monitoring import unittests_hosts

    designed = sys.modules["teton.targets.monitoring.designed"]
    m = lab_fabric.monitoring or default_monitoring()
    found = designed.designed(lab_fabric)
    assert unittests_hosts.test_files(lab_fabric, m, found) == unittests_hosts._test_files(lab_fabric, m, found)


def test_the_scrape_configuration_labels_every_target_with_its_device(lab_monitoring, lab_fabric):
    import json

    node = json.loads((lab_monitoring / "targets/node.json").read_text())
    named = {t["labels"]["device"] for t in node}
    assert {d.name for d in lab_fabric.devices.values() if d.nos is None} <= named          # every server
    assert {d.name for d in lab_fabric.switches("sonic")} <= named
    frr = json.loads((lab_monitoring / "targets/frr.json").read_text())
    assert {t["labels"]["device"] for t in frr} == {d.name for d in lab_fabric.switches("sonic")}
    gnmi = yaml.safe_load((lab_monitoring / "gnmi.yaml").read_text())
    names = {t["name"]: t["subscriptions"] for t in gnmi["targets"].values()}
    assert set(names) == {d.name for d in lab_fabric.switches()}
    assert "sonic-counters-db-lossless-p3" in names["z01-r001-rtsw"]                        # the design's priority
    assert any("SAI_PORT_STAT_PFC_3_RX_PAUSE_DURATION_US" in p for s in gnmi["subscriptions"].values()
               for p in s["paths"])


@pytest.mark.scale24k
def test_the_24k_reference_passes_promtool_with_every_session_and_cable_once(roce24k_network_build):
    fabric, build = roce24k_network_build          # the session's build of the 24k reference
    out = build / "monitoring"
    check_all(out)
    check_counts(out, fabric)
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    assert size < 25_000_000, size                 # linear in the cables: about 330 bytes per cable in all
    assert (out / "rules/teton.rules.yml").stat().st_size < 20_000          # the rules do not grow with the cluster
