"""FBOSS's live transport against the stand-in `ssh` of the SSH transports' tests (test_ssh_transports.py), here
with the switch's /etc/coop in a folder and the placement's shell commands really run: each file placed atomically
with the previous one kept, the agent told to reload and BGP++ restarted, the health check, drift and rollback.  No
FBOSS runs here: what the agent and BGP++ do with the files is not exercised."""

from __future__ import annotations

import json
import stat
import sys

import pytest
import yaml

from tests.helpers import LAB, fboss, write_spec
from tests.targets.test_ssh_transports import SECRETS, STAND_IN, log
from teton.findings import TetonError
from teton.pipeline import build
from teton.targets.fboss.transport import AGENT_RELOAD, BGP_RELOAD, BGP_SUMMARY, FbossSshTransport
from teton.targets.transports import Device, NotObserved, Reader, TransportSettings, transport_factory

SWITCH = "z01-r001-rtsw"
HOST = "192.0.2.16"

# After the SONiC/OpenSM stand-in's own branches (none matches these): the switch's files under <state>/<host>/, the
# transport's shell commands run there for real (sudo dropped), BGP++'s summary from <state>/<host>.fboss-summary.
FBOSS_STAND_IN = STAND_IN + f"""
import subprocess
root = os.path.join(state, host)
if cmd.startswith(("sudo sh -c ", "sudo cat /etc/coop/")):
    os.makedirs(os.path.join(root, "etc/coop/bgpcpp"), exist_ok=True)
    r = subprocess.run(["sh", "-c", cmd[len("sudo "):].replace("/etc/coop/", root + "/etc/coop/")], input=data,
                       text=True, capture_output=True)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    sys.exit(r.returncode)
if cmd == {BGP_SUMMARY!r}:
    print(read("fboss-summary", "[]"), end="")
"""


@pytest.fixture
def ssh(tmp_path, monkeypatch):
    state = tmp_path / "state"
    state.mkdir()
    script = tmp_path / "ssh"
    script.write_text(FBOSS_STAND_IN.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("TETON_SSH_STATE", str(state))
    monkeypatch.setenv("TETON_SSH_LEAK", SECRETS["bgp_backend"])
    return (str(script),), state


@pytest.fixture(scope="module")
def switch(tmp_path_factory) -> Device:
    spec = write_spec(tmp_path_factory.mktemp("spec"), fboss(yaml.safe_load(LAB.read_text())), "lab.yaml")
    out = build(spec, tmp_path_factory.mktemp("build") / "lab").path
    from teton.buildfolder import BuildFolder

    files = {p.name: p.read_text() for p in (out / "devices" / SWITCH).iterdir()}
    return Device(SWITCH, "fboss", files, f"{HOST}/24", BuildFolder(out).fabric())


def test_fboss_places_both_files_atomically_keeps_the_previous_reloads_and_rolls_back(ssh, switch):
    command, state = ssh
    coop = state / HOST / "etc" / "coop"
    (coop / "bgpcpp").mkdir(parents=True)
    (coop / "agent.conf").write_text('{"sw": {}}')
    (coop / "bgpcpp" / "bgpcpp.conf").write_text('{"router_id": "10.9.9.9"}')
    t = FbossSshTransport(SECRETS, user="ops", ssh=command)
    before = t.snapshot(switch)
    assert before == {"agent.conf": '{"sw": {}}', "bgpcpp.conf": '{"router_id": "10.9.9.9"}'}
    t.push(switch)
    assert (coop / "agent.conf").read_text() == switch.files["agent.conf"]
    assert (coop / "bgpcpp" / "bgpcpp.conf").read_text() == switch.files["bgpcpp.conf"]
    assert (coop / "agent.conf.teton-prev").read_text() == '{"sw": {}}'           # the previous one kept
    assert not list(coop.rglob("*.teton-new"))
    assert oct((coop / "agent.conf").stat().st_mode & 0o777) == "0o600"
    commands = [cmd for login, cmd, _ in log(state)]
    assert all(login == f"ops@{HOST}" for login, _, _ in log(state))
    assert [c for c in commands if "teton-new" in c or c in (AGENT_RELOAD, BGP_RELOAD)] == [
        "sudo sh -c 'umask 077 && cat > /etc/coop/agent.conf.teton-new'",
        "sudo sh -c 'if [ -f /etc/coop/agent.conf ]; then cp -p /etc/coop/agent.conf /etc/coop/agent.conf.teton-prev;"
        " fi && mv -f /etc/coop/agent.conf.teton-new /etc/coop/agent.conf'",
        AGENT_RELOAD,
        "sudo sh -c 'umask 077 && cat > /etc/coop/bgpcpp/bgpcpp.conf.teton-new'",
        "sudo sh -c 'if [ -f /etc/coop/bgpcpp/bgpcpp.conf ]; then cp -p /etc/coop/bgpcpp/bgpcpp.conf "
        "/etc/coop/bgpcpp/bgpcpp.conf.teton-prev; fi && mv -f /etc/coop/bgpcpp/bgpcpp.conf.teton-new "
        "/etc/coop/bgpcpp/bgpcpp.conf'",
        BGP_RELOAD]
    assert t.drift(switch) == []
    running = json.loads((coop / "agent.conf").read_text())
    running["sw"]["ports"][0]["state"] = 1                                         # a port shut by hand
    (coop / "agent.conf").write_text(json.dumps(running))                          # another formatting: no drift
    drift = t.drift(switch)
    assert len([x for x in drift if x.startswith("-")]) == 1 and '"state": 1' in drift[1]
    expected = len(switch.fabric.devices[SWITCH].routing.neighbors)
    assert t.check(switch, timeout=0) == [f"0/{expected} BGP sessions established"]
    (state / f"{HOST}.fboss-summary").write_text(json.dumps(
        [{"peer_addr": f"10.1.0.{i}", "state": "ESTABLISHED"} for i in range(expected)]))
    assert t.check(switch, timeout=0) == []
    t.restore(switch, before)
    assert (coop / "agent.conf").read_text() == '{"sw": {}}'
    assert (coop / "bgpcpp" / "bgpcpp.conf").read_text() == '{"router_id": "10.9.9.9"}'


def test_a_failed_reload_names_the_switch_and_masks_secrets(ssh, switch):
    command, state = ssh
    (state / "fail").write_text("wedge_agent")
    with pytest.raises(TetonError, match=rf"^{SWITCH}: `sudo \.\.\.` failed \(rc 3\): .*TETON_SECRET_bgp_backend"):
        FbossSshTransport(SECRETS, ssh=command).push(switch)
    with pytest.raises(TetonError, match="has no management address"):
        FbossSshTransport(SECRETS, ssh=command).snapshot(Device(SWITCH, "fboss", switch.files))


def test_the_live_fboss_transport_comes_from_its_package_with_paths_from_the_stack_config():
    factory = transport_factory("live", "fboss")
    assert factory.__module__ == "teton.targets.fboss.transport"
    t = factory(TransportSettings(SECRETS, {"fbossAgentConf": "/mnt/flash/agent.conf"}))
    assert t.ssh.user == "ops" and t.paths["agent.conf"] == "/mnt/flash/agent.conf"
    assert t.paths["bgpcpp.conf"] == "/etc/coop/bgpcpp/bgpcpp.conf"


def test_fboss_reads_only_its_established_peers_and_says_what_it_does_not_read(ssh, switch):
    """`teton verify live` on FBOSS: the Established peers' addresses from the summary (the stand-in's JSON shape,
    not one taken from a running BGP++), each under an address field or the key it is listed under; routes and LLDP
    are not read (NotObserved), so they are reported as not observed rather than passed."""
    command, state = ssh
    t = FbossSshTransport(SECRETS, ssh=command)
    assert isinstance(t, Reader)
    (state / f"{HOST}.fboss-summary").write_text(json.dumps(
        [{"peer_addr": "10.1.0.1", "state": "ESTABLISHED"}, {"peer_addr": "10.1.0.3", "state": "IDLE"},
         {"peers": {"fd00::1": {"session_state": "Established"}}}]))
    assert t.established_peers(switch) == {"10.1.0.1", "fd00::1"}
    with pytest.raises(NotObserved, match=f"^{SWITCH}: FBOSS's routes are not read"):
        t.nexthops(switch, "10.0.0.0/27")
    with pytest.raises(NotObserved, match=f"^{SWITCH}: FBOSS's LLDP is not read"):
        t.lldp(switch)
