"""Day 0 of the lab with the real parts (tests/e2e/day0.py, the `day0` fixture): Debian's Kea serves `teton ztp`'s
configuration on a management LAN of namespaces, busybox's udhcpc in each switch's namespace (its MAC from the
inventory) gets the switch's designed address and its NOS's option 67, the switch's provisioning fetches its files
from `teton ztp serve`, and the twin runs what the switches fetched."""

from __future__ import annotations

import json

import pytest

from tests.e2e.conftest import SECRETS
from tests.e2e.day0 import ON_SWITCH

pytestmark = pytest.mark.root("network namespaces, Kea, the twin")


def _fabric(day0) -> dict:
    return json.loads((day0.build / "fabric.json").read_text())


def test_each_switch_gets_its_designed_address_and_its_nos_provisioning_url_and_a_stranger_nothing(day0):
    fabric = _fabric(day0)
    m = fabric["fabric"]["management"]
    entry = {"sonic": "ztp.json", "eos": "bootstrap"}
    devices = {d["name"]: d for d in fabric["devices"]}
    assert set(day0.leases) == {d for d in devices if devices[d]["nos"]}
    for name, lease in day0.leases.items():
        address, prefix = devices[name]["mgmt"].split("/")
        assert (lease["ip"], lease["mask"], lease["hostname"]) == (address, prefix, name), name
        assert lease["bootfile"] == f"http://192.0.2.5:8080/devices/{name}/{entry[day0.nos[name]]}", name
        assert lease["router"] == m["gateway"]
        assert lease["dns"].split() == list(m["dns_servers"]) and lease["domain"] == m["domain"]
        assert lease["ntpsrv"].split() == list(m["ntp_servers"])
    assert day0.stranger_lease is False       # no quarantine pool in the lab: an unknown MAC gets no address


def test_each_switch_fetched_exactly_its_build_files_with_the_secrets_resolved(day0):
    from teton import targets
    from teton.buildfolder import BuildFolder, device_path
    from teton.secrets import referenced_secrets

    build = BuildFolder.open(day0.build)
    for name, root in day0.roots.items():
        nos = day0.nos[name]
        own = {device_path(name, f): text for f, text in build.device_files(name).items()}
        want = targets.nos_target(nos).resolve_secrets(own, SECRETS)
        for file, where in ON_SWITCH[nos].items():
            got = (root / where).read_text()
            assert got == want[device_path(name, file)], f"{name}: {file}"
            assert not referenced_secrets(got), f"{name}: {file} still holds a reference"
            if file != "config_db.json":       # written by teton's frr.sh and bootstrap (config_db: SONiC's plugin)
                assert (root / where).stat().st_mode & 0o077 == 0, f"{name}: {file} readable by others"
    assert any(SECRETS["bgp_backend"] in (root / "etc/sonic/frr/frr.conf").read_text()
               for name, root in day0.roots.items() if day0.nos[name] == "sonic")


def test_the_server_hands_out_nothing_else_and_logs_every_fetch(day0):
    assert set(day0.probes.values()) == {404}, day0.probes
    ok = [r for r in day0.log if r.get("status") == 200]
    by_device: dict[str, set[str]] = {}
    fabric = {d["name"]: d for d in _fabric(day0)["devices"]}
    for r in ok:
        by_device.setdefault(r["device"], set()).add(r["file"])
        assert r["client"] == fabric[r["device"]]["mgmt"].split("/")[0], r      # each from its own address
    index = json.loads((day0.ztp / "ztp-index.json").read_text())["devices"]
    assert by_device == {n: set(d["files"]) for n, d in index.items()}
    text = json.dumps(day0.log) + day0.serve_output
    assert not [k for k, v in SECRETS.items() if v in text]                     # never a value in the log
    on_disk = b"".join(p.read_bytes() for p in day0.ztp.rglob("*") if p.is_file())
    assert not [k for k, v in SECRETS.items() if v.encode() in on_disk]        # nor in the folder


def test_the_live_view_shows_every_switch_provisioned(day0):
    status = day0.status
    states = {d: s["state"] for d, s in status["devices"].items()}
    assert set(states) == set(day0.inventory) and set(states.values()) == {"provisioned"}, states
    assert day0.serve_exit == 0, day0.serve_output[-2000:]      # Ctrl-C ends the server cleanly


def test_the_switches_come_up_in_the_twin_from_what_they_fetched_and_verify_clean(day0, services_twin):
    from teton.twin import service

    meta = json.loads((service.state_dir(services_twin.name) / "twin.json").read_text())
    assert meta["source"] == str(day0.fetched_build.resolve())
    r = service.verify(services_twin.name)
    assert r.ok, r.to_json()
