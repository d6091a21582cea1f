"""A server's live transport (`teton verify live`'s pings) against the stand-in `ssh` of the SSH transports' tests
(test_ssh_transports.py): the ping each probe runs on the server, its answer, and a ping that could not run or a
server that does not answer as errors naming the server.  No server is pinged for real here."""

from __future__ import annotations

import stat
import sys

import pytest

from tests.targets.test_ssh_transports import SECRETS, STAND_IN, log
from teton.findings import TetonError
from teton.targets.hosts.transport import HostSsh
from teton.targets.transports import Device, Pinger, TransportSettings, transport_factory

# After the stand-in's own branches: a ping answers when its destination is listed in <state>/<host>.reachable
PING_STAND_IN = STAND_IN + """
if cmd.startswith("ping "):
    dst = cmd.split()[7]
    print(2 if dst == "10.9.9.9" else 0 if dst in read("reachable").split() else 1)
"""


@pytest.fixture
def ssh(tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir()
    script = tmp_path / "ssh"
    script.write_text(PING_STAND_IN.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TETON_SSH_STATE", str(state))
    monkeypatch.setenv("TETON_SSH_LEAK", SECRETS["bgp_backend"])
    return (str(script),), state


def test_a_host_pings_from_one_of_its_addresses_over_ssh(ssh):
    command, state = ssh
    host = Device("z01-r001-h1", "host", {}, "10.192.0.1")
    (state / "10.192.0.1.reachable").write_text("10.0.0.3 fd00::3\n")
    t = HostSsh(SECRETS, user="ops", ssh=command)
    assert isinstance(t, Pinger)
    assert t.reaches(host, "10.0.0.2", "10.0.0.3") and t.reaches(host, "fd00::2", "fd00::3")
    assert not t.reaches(host, "10.0.0.2", "10.0.0.5")
    assert [(login, cmd) for login, cmd, _ in log(state)][0] == (
        "ops@10.192.0.1", "ping -c 1 -W 1 -I 10.0.0.2 10.0.0.3 >/dev/null 2>&1; echo $?")
    with pytest.raises(TetonError, match=r"^z01-r001-h1: ping from 10.0.0.2 to 10.9.9.9 could not run"):
        t.reaches(host, "10.0.0.2", "10.9.9.9")
    with pytest.raises(ValueError):                  # never a shell word from data: addresses only
        t.reaches(host, "10.0.0.2", "10.0.0.3; reboot")
    (state / "fail").write_text("ping")
    with pytest.raises(TetonError, match=r"^z01-r001-h1: ping failed \(rc 3\)"):
        t.reaches(host, "10.0.0.2", "10.0.0.3")


def test_the_live_host_transport_comes_from_the_hosts_package():
    factory = transport_factory("live", "host")
    assert factory.__module__ == "teton.targets.hosts.transport"
    assert factory(TransportSettings(SECRETS, {})).ssh.user == "ops"
