"""The SSH transports (SONiC's, OpenSM's) against a stand-in `ssh` that keeps a switch's state in a folder (no SONiC
and no subnet manager run here): what they send where, the health check, rollback, drift, what `teton verify live`
reads, and errors with every secret value masked.  Each is registered by its own NOS package for deploy mode `live`."""

from __future__ import annotations

import json
import stat
import sys

import pytest

from teton.deploy.inputs import SUBNET_MANAGER
from teton.deploy.provider import Provider
from teton.findings import TetonError
from teton.targets.cabling.lldp import Seen, parse_data
from teton.targets.opensm.transport import SubnetManagerSsh
from teton.targets.sonic.transport import SonicSshTransport
from teton.targets.transports import (
    Device,
    Reader,
    TransportSettings,
    register_transport,
    resolve_files,
    transport_factory,
)

SECRETS = {"bgp_backend": "bgp-s3cret%", "bgp_frontend": "bgp-fe-s3cret%", "ntp_key": "ntp-s3cret",
           "aaa_key": "t@cacs-key", "breakglass_sha512": "$6$salt$hash",
           "snmpv3_auth": "auth-pass", "snmpv3_priv": "priv-pass", "ssh_user": "ops"}
SWITCH = "z01-r001-rtsw"

STAND_IN = """#!{python}
import json, os, sys
state = os.environ["TETON_SSH_STATE"]
_, _, login, cmd = sys.argv[1:]
host = login.split("@")[1]
data = sys.stdin.read()
with open(os.path.join(state, "log"), "a") as f:
    f.write(json.dumps([login, cmd, data]) + "\\n")
def path(name):
    return os.path.join(state, host + "." + name)
def read(name, default=""):
    return open(path(name)).read() if os.path.exists(path(name)) else default
def write(name, text):
    open(path(name), "w").write(text)
if os.path.exists(os.path.join(state, "fail")) and open(os.path.join(state, "fail")).read() in cmd:
    sys.stderr.write("refused: neighbor X password " + os.environ["TETON_SSH_LEAK"] + "\\n")
    sys.exit(3)
if cmd.startswith("umask 077 && cat > /tmp/teton-config_db.json"):
    write("pending", data)
elif cmd.startswith("sudo config replace"):
    write("config_db", read("pending"))
elif cmd == "sudo tee /etc/sonic/frr/frr.conf >/dev/null":
    write("frr", data)
elif cmd == "sudo show runningconfiguration all":
    print(read("config_db", "{{}}"), end="")
elif cmd == "sudo vtysh -c 'show running-config'":
    print("Building configuration...\\n\\nCurrent configuration:\\n" + read("frr"), end="")
elif cmd == "sudo vtysh -c 'show bgp summary json'":
    print(read("summary", "{{}}"), end="")
elif cmd.startswith(("sudo vtysh -c 'show ip route ", "sudo vtysh -c 'show ipv6 route ")):
    print(read("route_" + cmd.split()[6].replace("/", "_"), "{{}}"), end="")
elif cmd == "docker exec lldp lldpctl -f json":
    print(read("lldp", "{{}}"), end="")
elif "sudo tee /etc/opensm/" in cmd:
    write(cmd.split("sudo tee /etc/opensm/")[1].split()[0], data)
"""


@pytest.fixture
def ssh(tmp_path, monkeypatch):
    """(the stand-in ssh command, its state folder)."""
    state = tmp_path / "state"
    state.mkdir()
    script = tmp_path / "ssh"
    script.write_text(STAND_IN.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TETON_SSH_STATE", str(state))
    monkeypatch.setenv("TETON_SSH_LEAK", SECRETS["bgp_backend"])
    return (str(script),), state


def log(state):
    return [json.loads(line) for line in (state / "log").read_text().splitlines()]


def test_sonic_pushes_config_db_and_frr_conf_checks_sessions_and_rolls_back(ssh, lab_build, lab_fabric):
    command, state = ssh
    (state / "192.0.2.1.config_db").write_text('{"old": {}}')
    (state / "192.0.2.1.frr").write_text("hostname old\n")
    files = {p.name: p.read_text() for p in (lab_build / "devices" / SWITCH).iterdir()}
    device = Device(SWITCH, "sonic", files, "192.0.2.1/24", lab_fabric)
    t = SonicSshTransport(SECRETS, user="ops", ssh=command)
    before = t.snapshot(device)
    assert before == ('{"old": {}}', "hostname old\n")
    t.push(device)
    resolved = resolve_files("sonic", device.build_files(), SECRETS)
    assert (state / "192.0.2.1.config_db").read_text() == resolved[f"devices/{SWITCH}/config_db.json"]
    assert (state / "192.0.2.1.frr").read_text() == resolved[f"devices/{SWITCH}/frr.conf"]
    assert SECRETS["bgp_backend"] in (state / "192.0.2.1.frr").read_text()        # FRR takes cleartext
    assert all(login == "ops@192.0.2.1" and SECRETS["bgp_backend"] not in cmd for login, cmd, _ in log(state))
    assert t.drift(device) == []
    running = (state / "192.0.2.1.frr").read_text()
    (state / "192.0.2.1.frr").write_text(running.replace(SECRETS["bgp_backend"], "typed-by-hand"))   # an edit
    drift = t.drift(device)
    assert drift and all(SECRETS["bgp_backend"] not in x and "typed-by-hand" not in x for x in drift)
    assert any("password <hidden>" in x for x in drift) and any("TETON_SECRET_bgp_backend" in x for x in drift)
    expected = len(lab_fabric.devices[SWITCH].routing.neighbors)
    assert t.check(device, timeout=0) == [f"0/{expected} BGP sessions established"]
    peers = {f"10.0.0.{i}": {"state": "Established"} for i in range(expected)}
    (state / "192.0.2.1.summary").write_text(json.dumps({"ipv4Unicast": {"peers": peers}}))
    assert t.check(device, timeout=0) == []
    t.restore(device, before)
    assert (state / "192.0.2.1.config_db").read_text() == '{"old": {}}'
    assert (state / "192.0.2.1.frr").read_text() == "hostname old\n"


def test_a_failed_ssh_command_names_the_device_and_masks_the_secret(ssh, lab_build, lab_fabric):
    command, state = ssh
    (state / "fail").write_text("config replace")
    files = {p.name: p.read_text() for p in (lab_build / "devices" / SWITCH).iterdir()}
    device = Device(SWITCH, "sonic", files, "192.0.2.1", lab_fabric)
    with pytest.raises(TetonError, match=rf"^{SWITCH}: `sudo \.\.\.` failed \(rc 3\): refused: neighbor X "
                                         r"password TETON_SECRET_bgp_backend\n$") as e:
        SonicSshTransport(SECRETS, ssh=command).push(device)
    assert SECRETS["bgp_backend"] not in str(e.value)
    with pytest.raises(TetonError, match="has no management address"):
        SonicSshTransport(SECRETS, ssh=command).snapshot(Device(SWITCH, "sonic", files))


def test_each_subnet_manager_host_gets_the_shared_files_and_its_own_instance_then_its_unit_restarted(ssh):
    """What the opensm role installs: partitions, then the host's own instance file as opensm.conf (0600: it holds
    the keys), then a restart of the role's unit on the host's HCA port."""
    command, state = ssh
    files = {"ib/opensm.conf": "sm_priority 15\n", "ib/opensm-standby1.conf": "sm_priority 14\n",
             "ib/partitions.conf": "Default=0x7fff, ipoib : ALL=full;\n", "ib/topology.net": "# not for the host\n"}
    SubnetManagerSsh(SECRETS, user="ops", ssh=command).push(["sm1", "sm2"], "/etc/opensm", files, ["mlx5_0", "mlx5_1"])
    assert [(login, cmd.split(" && ")[-1]) for login, cmd, _ in log(state)] == [
        ("ops@sm1", "sudo tee /etc/opensm/partitions.conf >/dev/null"),
        ("ops@sm1", "sudo tee /etc/opensm/opensm.conf >/dev/null"),
        ("ops@sm1", "sudo systemctl restart opensm-mlx5_0-1.service"),
        ("ops@sm2", "sudo tee /etc/opensm/partitions.conf >/dev/null"),
        ("ops@sm2", "sudo tee /etc/opensm/opensm.conf >/dev/null"),
        ("ops@sm2", "sudo systemctl restart opensm-mlx5_1-1.service")]
    assert "install -m 0600 /dev/null /etc/opensm/opensm.conf" in log(state)[1][1]
    assert (state / "sm2.opensm.conf").read_text() == files["ib/opensm-standby1.conf"]
    assert (state / "sm2.partitions.conf").read_text() == files["ib/partitions.conf"]
    (state / "fail").write_text("restart")
    with pytest.raises(TetonError, match=r"^sm1: restarting opensm-mlx5_0-1.service failed \(rc 3\): "):
        SubnetManagerSsh(SECRETS, ssh=command).push(["sm1"], "/etc/opensm", files, ["mlx5_0"])


def test_each_live_transport_comes_from_its_own_nos_package():
    settings = TransportSettings(SECRETS, {"eapiPort": "8443", "eapiVerify": "false"})
    for nos in ("eos", "sonic", "opensm"):
        factory = transport_factory("live", nos)
        assert factory.__module__ == f"teton.targets.{nos}.transport"
    eos = transport_factory("live", "eos")(settings)
    assert (eos.port, eos.verify, eos.credentials) == (8443, False, ("admin", ""))
    assert transport_factory("live", "sonic")(settings).ssh.user == "ops"
    assert transport_factory("live", "opensm")(settings).ssh.user == "ops"


def test_the_provider_pushes_a_subnet_manager_through_the_registry(ssh):
    command, state = ssh
    original = transport_factory("live", "opensm")
    register_transport("live", "opensm", lambda s: SubnetManagerSsh(s.secrets, user="ops", ssh=command))
    try:
        provider = Provider()
        provider.config = {"secrets": SECRETS}
        out = provider.orchestrator.apply(SUBNET_MANAGER, {
            "transport": "live", "twin": "", "cluster": "lab", "hosts": ["sm1"], "config_dir": "/etc/opensm",
            "hcas": ["mlx5_0"], "files": {"ib/opensm.conf": "sm_priority 15\n"}})
    finally:
        register_transport("live", "opensm", original)
    assert set(out) == {"digest"}
    assert [cmd.split(" && ")[-1] for _, cmd, _ in log(state)] == [
        "sudo tee /etc/opensm/opensm.conf >/dev/null", "sudo systemctl restart opensm-mlx5_0-1.service"]


def test_sonic_reads_frr_peers_the_installed_next_hops_of_one_route_and_lldpctl(ssh, lab_fabric):
    """What `teton verify live` reads from a SONiC switch over SSH: FRR's Established peers of both families, the
    next hops FRR installed for exactly a prefix (FRR answers a longest match: another prefix's route is none), and
    lldpd's `lldpctl -f json` in the lldp container, as `teton verify cabling` reads it."""
    command, state = ssh
    device = Device(SWITCH, "sonic", {}, "192.0.2.1/24", lab_fabric)
    t = SonicSshTransport(SECRETS, user="ops", ssh=command)
    assert isinstance(t, Reader)
    (state / "192.0.2.1.summary").write_text(json.dumps({
        "ipv4Unicast": {"peers": {"10.1.0.0": {"state": "Established"}, "10.1.0.2": {"state": "Connect"}}},
        "ipv6Unicast": {"peers": {"fd00:0:0:2::2": {"state": "Established"}}}}))
    assert t.established_peers(device) == {"10.1.0.0", "fd00:0:0:2::2"}
    route = {"10.0.0.32/27": [{"prefix": "10.0.0.32/27", "protocol": "bgp", "selected": True, "installed": True,
                               "nexthops": [{"ip": "10.1.0.0", "fib": True, "active": True},
                                            {"ip": "10.1.0.2", "fib": True, "active": True},
                                            {"ip": "10.1.0.4", "active": True}]},       # not installed
                              {"prefix": "10.0.0.32/27", "protocol": "static", "nexthops": [{"ip": "x", "fib": True}]}]}
    (state / "192.0.2.1.route_10.0.0.32_27").write_text(json.dumps(route))
    (state / "192.0.2.1.route_10.0.0.64_27").write_text(json.dumps({"10.0.0.0/16": route["10.0.0.32/27"]}))
    assert t.nexthops(device, "10.0.0.32/27") == 2
    assert t.nexthops(device, "10.0.0.64/27") == 0
    assert t.nexthops(device, "fd00:1::/64") == 0
    assert [cmd for _, cmd, _ in log(state)][-3:] == [
        "sudo vtysh -c 'show ip route 10.0.0.32/27 json'", "sudo vtysh -c 'show ip route 10.0.0.64/27 json'",
        "sudo vtysh -c 'show ipv6 route fd00:1::/64 json'"]
    seen = {"lldp": {"interface": [{"Ethernet48": {"chassis": {"z01-ctsw01": {"id": {"type": "mac", "value": "x"}}},
                                                  "port": {"id": {"type": "local", "value": "Ethernet3/1/1"}}}}]}}
    (state / "192.0.2.1.lldp").write_text(json.dumps(seen))
    assert parse_data(t.lldp(device), SWITCH) == [Seen("Ethernet48", "z01-ctsw01", "Ethernet3/1/1")]
    (state / "192.0.2.1.summary").write_text("% bgpd is not running")
    with pytest.raises(TetonError, match=rf"^{SWITCH}: `sudo vtysh -c 'show bgp summary json'` did not answer JSON"):
        t.established_peers(device)
    (state / "fail").write_text("show bgp summary")
    with pytest.raises(TetonError, match=rf"^{SWITCH}: `sudo \.\.\.` failed \(rc 3\)"):
        t.established_peers(device)
