"""`teton verify live` on the command line, live mode, with every NOS's live transport (and the servers') replaced in
the registry by stand-ins showing the lab as designed, or with a switch down: exit codes 0, 1 and 2, `--json`'s keys,
the lines by device, `--set` reaching the transports' settings, bad input as one line.  The real transports are
tested against the eAPI endpoint and the SSH stand-in (tests/targets), the twin in tests/e2e."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from tests.verify.test_live import Shown
from teton.cli import main
from teton.expect import Failures
from teton.targets.transports import Device, TransportSettings, register_transport, transport_factory

NOS = ("sonic", "eos", "fboss", "host")


class StandIn:
    """A live transport that reads (and pings) what `Shown` shows."""

    def __init__(self, shown: Shown, settings: TransportSettings):
        self.shown, self.settings = shown, settings

    def established_peers(self, device: Device) -> frozenset[str]:
        assert device.mgmt == device.fabric.devices[device.name].mgmt         # reached at its management address
        return self.shown.established_peers(device)

    def nexthops(self, device: Device, prefix: str) -> int:
        return self.shown.nexthops(device, prefix)

    def lldp(self, device: Device) -> object:
        return self.shown.lldp_of(device)

    def reaches(self, host: Device, src: str, dst: str) -> bool:
        assert host.mgmt is not None                # its first front-end address, as Ansible reaches it
        return self.shown.reaches(host, src, dst)


@pytest.fixture
def stand_ins(lab_fabric):
    """Register stand-ins for every live transport; yields a function that sets what they show."""
    originals = {nos: transport_factory("live", nos) for nos in NOS}
    made: list[StandIn] = []

    def show(shown: Shown) -> list[StandIn]:
        def factory(settings: TransportSettings) -> StandIn:
            made.append(StandIn(shown, settings))
            return made[-1]

        for nos in NOS:
            register_transport("live", nos, factory)
        return made

    yield show
    for nos, factory in originals.items():
        register_transport("live", nos, factory)


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.output
    return result.exit_code, result.output


def test_a_live_fabric_as_designed_exits_0_with_the_report_by_promise(stand_ins, lab_build, lab_fabric):
    made = stand_ins(Shown(lab_fabric))
    code, out = run("verify", "live", str(lab_build), "--set", "eapiPort=8443", "--json")
    assert code == 0, out
    j = json.loads(out)
    assert j["ok"] and j["where"] == "live" and j["only"] is None and j["by_device"] == {}
    assert set(j) == {"ok", "where", "only", "switches", "lldp_read", "unchecked", "promises", "by_device", "remarks",
                      "unobserved", "errors", "seconds"}
    assert set(j["promises"]) == {"sessions", "ecmp", "lldp", "same_rail", "reach"}
    assert set(j["promises"]["ecmp"]) == {"ok", "checked", "fell", "wider", "unanswered"}
    assert {m.settings.config["eapiPort"] for m in made} == {"8443"} and len(made) == 3     # sonic, eos, host


def test_a_switch_down_exits_1_naming_its_sessions_and_the_widths_that_fell(stand_ins, lab_build, lab_fabric):
    stand_ins(Shown(lab_fabric, Failures(devices=("z01-ctsw01",))))
    code, out = run("verify", "live", str(lab_build), "--only", "rtsw")
    assert code == 1
    lines = out.splitlines()
    assert any(x.startswith("z01-r001-rtsw: session Ethernet48 ipv4 to z01-ctsw01 Ethernet3/1/1 (") for x in lines)
    assert any(x.startswith("z01-r001-rtsw: ECMP towards z01-r002-rtsw (") and x.endswith("(fell)") for x in lines)
    assert not any(x.startswith("z01-ctsw01:") for x in lines)           # --only rtsw: the CTSW is not asked
    assert "rtsw" in lines[-1] and "sessions down" in lines[-1] and "ECMP widths fell" in lines[-1]


@pytest.mark.parametrize("args,said", [
    (("--only", "leaf"), "--only 'leaf': the routed switches of lab are atsw, ctsw, fe-rsw, fsw, rtsw, ssw"),
    (("--set", "eapiPort"), "--set 'eapiPort': give KEY=VALUE"),
    (("--twin", "nosuchtwin"), "twin 'nosuchtwin' is not up"),
])
def test_bad_input_exits_2_with_one_line(lab_build, args, said):
    code, out = run("verify", "live", str(lab_build), *args)
    assert code == 2 and said in out and "Traceback" not in out and len(out.strip().splitlines()) == 1, out


def test_a_folder_that_is_no_build_exits_2(tmp_path):
    code, out = run("verify", "live", str(tmp_path), "--json")
    assert code == 2 and "Traceback" not in out


def test_verify_build_is_still_the_routing(lab_build):
    code, out = run("verify", str(lab_build), "--json")
    assert code == 0 and json.loads(out)["ok"]


def test_the_progress_bar_shows_on_a_terminal_only(monkeypatch):
    from teton.cli import common

    with common.progress_bar("asking the devices") as step:
        assert step is None                                   # stderr is no terminal here
    monkeypatch.setattr(common.err, "_force_terminal", True)
    with common.progress_bar("asking the devices") as step:
        assert step is not None
        for done in range(1, 4):
            step("sessions", done, 3)
