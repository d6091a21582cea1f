"""Property-based: generated specs, valid and broken, never produce a traceback; only exit 0 or 2."""

from __future__ import annotations

import copy

import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import LAB
from teton.cli import main

BASE = yaml.safe_load(LAB.read_text())
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

junk = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                 st.text(max_size=12), st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=5),
                                                                                            st.integers(), max_size=2))


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, prefix + (i,))


PATHS = [p for p in _paths(BASE) if p]


def _validate(tmp_path, data_or_text) -> tuple[int, str]:
    spec = tmp_path / "gen.yaml"
    spec.write_text(data_or_text if isinstance(data_or_text, str) else yaml.safe_dump(data_or_text))
    result = CliRunner().invoke(main, ["validate", str(spec)])
    return result.exit_code, result.output


def _assert_clean(code: int, output: str, exc) -> None:
    assert code in (0, 2), output
    assert "Traceback" not in output
    assert exc is None or isinstance(exc, SystemExit), repr(exc)


@SETTINGS
@given(zones=st.integers(1, 4), racks=st.integers(1, 6), hosts=st.integers(1, 4), ctsw=st.integers(1, 8),
       atsw=st.integers(0, 4), v4=st.booleans(), v6=st.booleans(), frontend=st.booleans())
def test_generated_specs_design_or_report(tmp_path, zones, racks, hosts, ctsw, atsw, v4, v6, frontend):
    data = copy.deepcopy(BASE)
    data.update(zones=zones, racks_per_zone=racks, hosts_per_rack=hosts)
    data["backend"]["ctsw"]["per_zone"] = ctsw
    data["backend"]["atsw"]["count"] = atsw
    data["backend"]["rtsw"].pop("oversubscription")
    data["backend"]["ctsw"].pop("oversubscription")
    if not v4:
        data["backend"]["addressing"].pop("ipv4")
    if not v6:
        data["backend"]["addressing"].pop("ipv6")
    if not frontend:
        data.pop("frontend")
        data.pop("services", None)          # service hosts live on the front end (rule services)
    result = CliRunner().invoke(main, ["plan", "--json", str(_write(tmp_path, data))])
    _assert_clean(result.exit_code, result.output, result.exception)
    if result.exit_code == 0:
        import json
        p = json.loads(result.output)
        assert p["gpus"] == zones * racks * hosts * 8
        assert p["links"]["host-rtsw"] == zones * racks * hosts * 8
    else:
        assert "backend" in result.output  # what is wrong is named


def _write(tmp_path, data):
    spec = tmp_path / "gen.yaml"
    spec.write_text(yaml.safe_dump(data))
    return spec


@SETTINGS
@given(path=st.sampled_from(PATHS), value=junk)
def test_any_value_replaced_by_junk_is_reported_by_path(tmp_path, path, value):
    data = copy.deepcopy(BASE)
    node = data
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value
    result = CliRunner().invoke(main, ["validate", str(_write(tmp_path, data))])
    _assert_clean(result.exit_code, result.output, result.exception)


@SETTINGS
@given(path=st.sampled_from([p for p in PATHS if isinstance(p[-1], str)]), key=st.text(min_size=1, max_size=8))
def test_unknown_keys_are_rejected_with_their_path(tmp_path, path, key):
    data = copy.deepcopy(BASE)
    node = data
    for step in path[:-1]:
        node = node[step]
    if key in node:
        return
    node[key] = 1
    result = CliRunner().invoke(main, ["validate", str(_write(tmp_path, data))])
    _assert_clean(result.exit_code, result.output, result.exception)
    assert result.exit_code == 2


@SETTINGS
@given(text=st.text(max_size=200))
def test_arbitrary_text_never_gives_a_traceback(tmp_path, text):
    code, output = _validate(tmp_path, text)
    assert code == 2 and "Traceback" not in output


@SETTINGS
@given(cut=st.integers(0, len(LAB.read_text())))
def test_truncated_spec_never_gives_a_traceback(tmp_path, cut):
    code, output = _validate(tmp_path, LAB.read_text()[:cut])
    assert code in (0, 2) and "Traceback" not in output
