"""The fabric's checks run beside a forked render (`teton.pipeline.render_spec`, `teton.targets.parallel.aside`):
what a user sees is what the checks-then-render order gave: the same warnings, the checks' errors (not the render's
files, not a render's crash on the fabric they refuse), and nothing published."""

from __future__ import annotations

import os
import time

import pytest

from tests.helpers import write_spec
from teton import pipeline
from teton.findings import Finding, SpecError
from teton.pipeline import build
from teton.targets import parallel, schedule
from teton.targets.sonic import TARGET as SONIC


@pytest.fixture
def forked(monkeypatch):
    """The lab's render in the forked pool (its cost estimate forced over the threshold), so the checks go aside."""
    monkeypatch.setattr(schedule, "MIN_FORK_COST", 0.0)
    monkeypatch.setattr(parallel, "workers", lambda: 2)


def _planted(severity: str):
    real = pipeline.fabric_findings

    def fabric_findings(fabric, file, cluster):
        return [*real(fabric, file, cluster),
                Finding(file, "name", f"planted {severity} (pid {os.getpid()})", rule="planted", severity=severity)]

    return fabric_findings


def test_the_checks_run_in_a_process_of_their_own_and_their_warnings_are_the_builds(tmp_path, lab_data, monkeypatch,
                                                                                   forked):
    monkeypatch.setattr(pipeline, "fabric_findings", _planted("warning"))
    spec = write_spec(tmp_path, lab_data)
    result = build(spec, tmp_path / "out")
    planted = [w for w in result.warnings if w.rule == "planted"]
    assert len(planted) == 1 and f"(pid {os.getpid()})" not in planted[0].message, "checked in another process"
    assert planted[0].line is not None, "with the spec's line, as design_spec gives it"
    inline = pipeline.design_spec(spec, pipeline.load_spec(spec))
    assert [(w.rule, w.path, w.line) for w in result.warnings] == [(w.rule, w.path, w.line) for w in inline.warnings]


def test_an_error_of_the_checks_stops_the_render_and_publishes_nothing(tmp_path, lab_data, monkeypatch, forked):
    monkeypatch.setattr(pipeline, "fabric_findings", _planted("error"))
    spec = write_spec(tmp_path, lab_data)
    with pytest.raises(SpecError) as raised:
        build(spec, tmp_path / "out")
    assert [f.rule for f in raised.value.findings if f.severity == "error"] == ["planted"]
    assert not (tmp_path / "out").exists()
    assert not [p for p in tmp_path.iterdir() if ".tmp-" in p.name], "no staging folder left"


def test_a_render_that_crashes_on_a_refused_fabric_reports_the_checks_errors(tmp_path, lab_data, monkeypatch, forked):
    """Without the aside, a fabric the checks refuse is never rendered: a target's crash on it must not be what the
    user sees."""
    monkeypatch.setattr(pipeline, "fabric_findings", _planted("error"))

    def crash(*_args, **_kwargs):
        raise RuntimeError("a target's bug on a fabric the checks refuse")

    monkeypatch.setattr(type(SONIC), "render_chunk", crash)
    spec = write_spec(tmp_path, lab_data)
    with pytest.raises(SpecError) as raised:
        build(spec, tmp_path / "out")
    assert "planted" in {f.rule for f in raised.value.findings}


def test_aside_gives_what_the_function_returns_or_raises(monkeypatch):
    monkeypatch.setattr(parallel, "workers", lambda: 2)
    ok = parallel.aside(lambda: (os.getpid(), [1, 2]))
    deadline = time.monotonic() + 30
    while not ok.ready() and time.monotonic() < deadline:
        time.sleep(0.01)
    pid, value = ok.result()
    assert value == [1, 2] and pid != os.getpid()

    def fails() -> None:
        raise ValueError("from the aside")

    with pytest.raises(ValueError, match="from the aside"):
        parallel.aside(fails).result()
    monkeypatch.setattr(parallel, "workers", lambda: 1)
    here = parallel.aside(os.getpid)
    assert here.ready() and here.result() == os.getpid(), "one worker: computed in place, at once"


def test_the_plans_figures_come_from_the_aside_and_are_the_in_place_ones(tmp_path, lab_data, monkeypatch, forked):
    real, parent = pipeline.plan, os.getpid()
    monkeypatch.setattr(pipeline, "plan", lambda fabric: {**real(fabric), "pid": os.getpid()})
    spec = write_spec(tmp_path, lab_data)
    result = build(spec, tmp_path / "out")
    assert result.figures.pop("pid") != parent, "planned in the aside"
    assert result.figures == real(pipeline.design_spec(spec, pipeline.load_spec(spec)).fabric)
    monkeypatch.setattr(pipeline, "plan", real)
    build(spec, tmp_path / "aside")
    monkeypatch.setattr(schedule, "MIN_FORK_COST", float("inf"))      # in place: no aside, planned after the render
    build(spec, tmp_path / "here")
    assert (tmp_path / "aside" / "manifest.json").read_bytes() == (tmp_path / "here" / "manifest.json").read_bytes()


def test_a_plan_that_fails_aside_is_made_again_in_the_parent_and_raises_there(tmp_path, lab_data, monkeypatch,
                                                                              forked):
    real, parent = pipeline.plan, os.getpid()

    def only_here(fabric):
        if os.getpid() != parent:
            raise RuntimeError("not aside")
        return real(fabric)

    monkeypatch.setattr(pipeline, "plan", only_here)
    spec = write_spec(tmp_path, lab_data)
    assert build(spec, tmp_path / "out").figures == real(pipeline.design_spec(spec, pipeline.load_spec(spec)).fabric)

    def never(fabric):
        raise RuntimeError("a plan's bug")

    monkeypatch.setattr(pipeline, "plan", never)
    with pytest.raises(RuntimeError, match="a plan's bug"):
        build(spec, tmp_path / "out3")
