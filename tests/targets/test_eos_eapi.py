"""teton's eAPI client against a local HTTPS endpoint that implements the eAPI calls it uses (tests/targets/
eapi_endpoint.py; no EOS runs here): a configure session replaced and committed, a refused line aborted with the
running config untouched, drift from a session diff with secrets masked, BGP peers counted, bad credentials."""

from __future__ import annotations

import pytest

from tests.targets.eapi_endpoint import serve
from teton.targets.cabling.lldp import Seen, parse_data
from teton.targets.eos.eapi import EapiClient, EapiError, config_lines
from teton.targets.eos.transport import EosTransport
from teton.targets.transports import Device, Reader, resolve_files

SECRETS = {"bgp_backend": "bgp-s3cret%", "bgp_frontend": "bgp-fe-s3cret%", "ntp_key": "ntp-s3cret",
           "aaa_key": "t@cacs-key", "breakglass_sha512": "$6$salt$hash",
           "snmpv3_auth": "auth-pass", "snmpv3_priv": "priv-pass", "eapi_user": "teton", "eapi_password": "pw"}


@pytest.fixture
def endpoint(tmp_path):
    server, dev, cert = serve(tmp_path, "teton", "pw")
    yield dev, cert, server.server_address[1]
    server.shutdown()


def client(endpoint, password="pw"):
    _, cert, port = endpoint
    return EapiClient("127.0.0.1", ("teton", password), verify=str(cert), port=port)


def test_config_lines_drop_comments_and_end():
    assert config_lines("! c\nhostname a\n!\nrouter bgp 1\n   neighbor X peer group\nend\n") == [
        "hostname a", "router bgp 1", "neighbor X peer group"]


def test_replace_commits_a_clean_session(endpoint):
    dev = endpoint[0]
    client(endpoint).replace_config("hostname new\n!\nrouter bgp 65000\n   router-id 10.0.0.1\nend\n", "teton-x")
    assert dev.running == ["hostname new", "router bgp 65000", "router-id 10.0.0.1"]
    assert dev.calls[-1][:3] == ["enable", "configure session teton-x", "rollback clean-config"]
    assert dev.calls[-1][-1] == "commit" and dev.sessions == {}


def test_a_refused_line_aborts_and_leaves_the_running_config(endpoint):
    dev = endpoint[0]
    with pytest.raises(EapiError, match=r"eAPI error 1002 at command 5 of 6: % Invalid input$") as e:
        client(endpoint).replace_config("hostname new\nbogus line\n", "teton-x")
    assert "bogus" not in str(e.value)                          # a refused line may hold a key: never repeated
    assert dev.running == ["hostname old"] and dev.sessions == {}
    assert dev.calls[-1] == ["enable", "configure session teton-x", "abort"]


def test_bad_credentials_are_an_error_not_a_push(endpoint):
    with pytest.raises(EapiError, match="HTTP 401"):
        client(endpoint, password="wrong").running_config()
    assert endpoint[0].running == ["hostname old"]


def test_the_certificate_is_verified(endpoint, tmp_path):
    _, _, port = endpoint
    with pytest.raises(EapiError, match="CERTIFICATE_VERIFY_FAILED"):
        EapiClient("127.0.0.1", ("teton", "pw"), port=port).running_config()


def test_eos_transport_pushes_the_resolved_startup_config_and_rolls_back(endpoint, lab_build, lab_fabric):
    dev, cert, port = endpoint
    files = {p.name: p.read_text() for p in (lab_build / "devices/z01-ctsw01").iterdir()}
    device = Device("z01-ctsw01", "eos", files, "127.0.0.1/24", lab_fabric)
    t = EosTransport(SECRETS, ("teton", "pw"), verify=str(cert), port=port)
    before = t.snapshot(device)
    t.push(device)
    startup = resolve_files("eos", device.build_files(), SECRETS)["devices/z01-ctsw01/startup-config"]
    assert dev.running == config_lines(startup)
    assert not any("bgp-s3cret%" in line for line in dev.running)              # type-7, not cleartext
    assert t.drift(device) == []
    dev.running = [x for x in dev.running if not x.startswith("hostname")]     # someone edits the switch
    assert t.drift(device) == ["+hostname z01-ctsw01"]
    assert t.check(device, timeout=0) == [f"0/{len(lab_fabric.devices['z01-ctsw01'].routing.neighbors)} BGP "
                                          "sessions established"]
    dev.peers["ipv4"] = {f"10.1.0.{i}": "Established" for i in range(8)}
    dev.peers["ipv6"] = {f"fd00::{i}": "Established" for i in range(8)}
    assert t.check(device, timeout=0) == []
    t.restore(device, before)
    assert "\n".join(dev.running) + "\n" == before


def test_eos_transport_reads_peers_the_vias_of_one_route_and_lldp_over_eapi(endpoint, lab_fabric):
    """What `teton verify live` reads from an EOS switch: Established peers of both families, the vias of the route
    to exactly a prefix (EOS answers a longest match: another prefix's route is none), `show lldp neighbors`."""
    dev, cert, port = endpoint
    device = Device("z01-ctsw01", "eos", {}, "127.0.0.1/24", lab_fabric)
    t = EosTransport(SECRETS, ("teton", "pw"), verify=str(cert), port=port)
    assert isinstance(t, Reader)
    dev.peers["ipv4"] = {"10.1.0.1": "Established", "10.1.0.9": "Active"}
    dev.peers["ipv6"] = {"fd00:0:0:2::3": "Established"}
    assert t.established_peers(device) == {"10.1.0.1", "fd00:0:0:2::3"}
    via = [{"nexthopAddr": "10.1.0.1", "interface": "Ethernet3/1/1"}, {"nexthopAddr": "10.1.0.9", "interface":
                                                                         "Ethernet3/2/1"}]
    dev.routes = {"10.0.0.0/27": via, "10.0.0.0/16": via[:1], "fd00:1::/64": via[:1]}
    assert t.nexthops(device, "10.0.0.0/27") == 2
    assert t.nexthops(device, "10.0.0.32/27") == 0          # only 10.0.0.0/16 covers it
    assert t.nexthops(device, "fd00:1::/64") == 1 and t.nexthops(device, "fd00:2::/64") == 0
    assert dev.calls[-1] == ["enable", "show ipv6 route fd00:2::/64"]
    dev.lldp = [{"port": "Ethernet3/1/1", "neighborDevice": "z01-r001-rtsw", "neighborPort": "etp13", "ttl": 120}]
    assert parse_data(t.lldp(device), "z01-ctsw01") == [Seen("Ethernet3/1/1", "z01-r001-rtsw", "etp13")]
    dev.peers["ipv4"] = {}
    with pytest.raises(EapiError, match="HTTP 401"):
        EosTransport(SECRETS, ("teton", "wrong"), verify=str(cert), port=port).established_peers(device)
