"""The design watches the twin: Debian's Prometheus with the build's `monitoring/` (its scrape configuration, rules and
designed series, as rendered), `prometheus-frr-exporter` per switch reading the switch's own bgpd and zebra, and
`prometheus-node-exporter` per server and switch in its own namespace.

The scrape targets gain the switches whose NOS teton watches over gNMI (EOS here): the twin runs their routing in
FRR, so frr-exporter stands in for the collector.  The twin has no management network, so the test lays one
(tests/e2e/day0.py's LAN): every switch's namespace gets a port with its designed management address, where its
exporters listen (the scrape configuration's targets), and the Prometheus host, the lab's service host `slurmctl`,
gets one too; it reaches the servers' node exporters over the front end, as a site's would.  Its own node exporter
serves the designed series (`--collector.textfile.directory`, the configuration's `teton-designed` job at
localhost).

A host's rail cut: the link alert fires carrying that cable's id within 60 s, and resolves when it is restored.  A
CTSW's daemons killed: the BGP alerts name exactly its designed sessions' cables, and resolve on restore.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import time
import urllib.parse
from pathlib import Path

import pytest

from tests.e2e.day0 import ManagementLan, sh

pytestmark = pytest.mark.root("network namespaces, the twin, Prometheus and its exporters")

PROMETHEUS_ADDRESS = "192.0.2.7/24"     # the Prometheus host's port on the management network (below the switches' .10)
FIRE_WITHIN_S = 60
RAIL = ("z01-r001-h1", "be0")
UNSEEN = "teton:designed_bgp_session_end unless on (device, peer_address, afi) (teton:bgp_session_up == 1)"
CTSW = "z01-ctsw01"


class Prometheus:
    def __init__(self, ns: str):
        self.ns = ns

    def get(self, path: str, **params: str) -> dict:
        url = f"http://127.0.0.1:9090{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        r = sh("curl", "-sS", "--max-time", "10", url, ns=self.ns, check=False)
        if r.returncode != 0:
            return {}
        return json.loads(r.stdout)

    def firing(self, name: str) -> list[dict[str, str]]:
        alerts = self.get("/api/v1/alerts").get("data", {}).get("alerts", [])
        return [a["labels"] for a in alerts if a["labels"].get("alertname") == name and a["state"] == "firing"]

    def value(self, query: str) -> float | None:
        result = self.get("/api/v1/query", query=query).get("data", {}).get("result", [])
        return float(result[0]["value"][1]) if result else None


def _every_switch_runs_frr(mon: Path, devices: dict) -> None:
    """The twin runs every switch's routing in FRR (EOS's and FBOSS's as their FRR spelling), so frr-exporter and
    node-exporter stand in for the gNMI collector teton names for those NOSes: the scrape targets gain those switches,
    at their management addresses (the configuration and the rules are as rendered)."""
    for job, port in (("frr", 9342), ("node", 9100)):
        path = mon / "targets" / f"{job}.json"
        entries = json.loads(path.read_text())
        listed = {e["labels"]["device"] for e in entries}
        entries += [{"labels": {"device": n}, "targets": [f"{d['mgmt'].split('/')[0]}:{port}"]}
                    for n, d in sorted(devices.items()) if d["nos"] and d["mgmt"] and n not in listed]
        path.write_text(json.dumps(entries))


def _until(what: str, test, timeout: float, why=lambda: ""):
    deadline = time.monotonic() + timeout
    while True:
        got = test()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s{why()}")
        time.sleep(2)


@pytest.fixture(scope="module")
def watched(services_twin, tmp_path_factory):
    from teton.twin import service

    fabric = json.loads((services_twin.build / "fabric.json").read_text())
    devices = {d["name"]: d for d in fabric["devices"]}
    twin = service.load_twin(services_twin.name)
    work = tmp_path_factory.mktemp("monitoring")
    mon = work / "monitoring"
    shutil.copytree(services_twin.build / "monitoring", mon)
    _every_switch_runs_frr(mon, devices)
    lan = ManagementLan("mo" + services_twin.name[:3], work / "lan", 24, "192.0.2.8")
    (work / "lan").mkdir()
    procs = []

    def start(ns: str, cmd: list[str], log: str, cwd: Path | None = None) -> None:
        import subprocess

        f = open(work / log, "w")      # noqa: SIM115 - kept open for the daemon's life
        procs.append(subprocess.Popen(["ip", "netns", "exec", ns, *cmd], stdout=f, stderr=subprocess.STDOUT,
                                      cwd=cwd, start_new_session=True))

    node_collectors = ["--collector.disable-defaults", "--collector.netclass", "--collector.netdev",
                       "--collector.filesystem"]
    try:
        lan.up()
        prom_ns = twin.netns("slurmctl")
        lan.attach(prom_ns, "p", PROMETHEUS_ADDRESS)
        nodes = {n.name for n in twin.plan.nodes}
        switches = sorted(n for n, d in devices.items() if d["nos"] and n in nodes)
        for k, name in enumerate(switches):
            ns, address = twin.netns(name), devices[name]["mgmt"]
            lan.attach(ns, f"s{k}", address)
            ip = address.split("/")[0]
            start(ns, ["prometheus-frr-exporter", f"--web.listen-address={ip}:9342", "--collector.bgp6",
                       f"--frr.socket.dir-path={twin.node_dir(name)}"], f"frr-{name}.log")
            start(ns, ["prometheus-node-exporter", f"--web.listen-address={ip}:9100", *node_collectors],
                  f"node-{name}.log")
        hosts = sorted(n for n, d in devices.items() if not d["nos"] and n in nodes)
        for name in hosts:
            extra = [f"--collector.textfile.directory={mon / 'designed'}", "--collector.textfile"] \
                if name == "slurmctl" else []
            start(twin.netns(name), ["prometheus-node-exporter", "--web.listen-address=:9100", *node_collectors,
                                     *extra], f"node-{name}.log")
        start(prom_ns, ["prometheus", "--config.file=prometheus.yml", f"--storage.tsdb.path={work / 'tsdb'}",
                        "--web.listen-address=127.0.0.1:9090"], "prometheus.log", cwd=mon)
        prom = Prometheus(prom_ns)
        _until("Prometheus answers and has the designed series",
               lambda: (prom.value("count(teton_designed_link)") or 0) > 0, 60)
        _until("every switch's frr-exporter is scraped",
               lambda: prom.value('count(up{job="teton-frr"} == 1)') == len(switches), 60)
        _until("the rules hold both ends of every designed session", lambda: (
            prom.value("count(teton:designed_bgp_session_end)") or 0) == 2 * (
            prom.value("count(teton_designed_bgp_session)") or -1), 60)
        _until("every designed session is Established at both ends", lambda: prom.value(
            f"count({UNSEEN})") is None and not prom.firing("TetonBgpSessionDown"), 90,
            lambda: f"; not up: {prom.get('/api/v1/query', query=UNSEEN)['data']['result'][:6]}")
        yield prom, services_twin
    finally:
        import os
        import signal

        for p in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGTERM)
        for p in procs:
            try:
                p.wait(10)
            except Exception:       # noqa: BLE001 - killed below
                os.killpg(p.pid, signal.SIGKILL)
        lan.down()


def test_a_host_rail_cut_fires_the_link_alert_with_its_cable_id_and_restore_resolves_it(watched):
    from teton.twin import service

    prom, twin = watched
    host, port = RAIL
    cable = _cable_of(twin.build, host, port)
    assert _designed_cable(prom, host, port) == cable
    assert not [a for a in prom.firing("TetonLinkDown") if a.get("cable_id") == cable]
    t0 = time.monotonic()
    service.fail(twin.name, f"{host}:{port}", "links")
    try:
        fired = _until(f"TetonLinkDown for cable {cable}", lambda: [
            a for a in prom.firing("TetonLinkDown") if a.get("cable_id") == cable], FIRE_WITHIN_S)
        assert time.monotonic() - t0 <= FIRE_WITHIN_S
        assert {(a["device"], a["port"]) for a in fired} >= {(host, port)}
    finally:
        service.restore(twin.name)
    _until(f"TetonLinkDown for cable {cable} resolved",
           lambda: not [a for a in prom.firing("TetonLinkDown") if a.get("cable_id") == cable], 90)


def test_a_ctsw_failure_fires_the_bgp_alerts_of_exactly_its_designed_sessions(watched):
    from teton.twin import service

    prom, twin = watched
    designed = _session_cables(twin.build, CTSW)
    assert designed and _designed_session_cables(prom, CTSW) == designed
    service.fail(twin.name, CTSW, "kill")
    try:
        seen: list = []

        def cables():
            got = {a["cable_id"] for a in prom.firing("TetonBgpSessionDown")}
            seen[:] = [sorted(got), prom.firing("TetonBgpSessionDown")[:6]]
            return got if got == designed else None
        _until(f"TetonBgpSessionDown naming exactly {CTSW}'s session cables {sorted(designed)}", cables, 90,
               lambda: f"; last seen {seen}")
        time.sleep(12)                                  # and no other session's alert joins them
        assert {a["cable_id"] for a in prom.firing("TetonBgpSessionDown")} == designed
    finally:
        service.restore(twin.name)
    _until("every TetonBgpSessionDown resolved", lambda: not prom.firing("TetonBgpSessionDown"), 120)


def _cable_of(build: Path, device: str, port: str) -> str:
    """The id of the cable at `device` `port`, from teton's one model of the cables (not from the rules)."""
    from teton.buildfolder import BuildFolder
    from teton.fabric.cables import cables

    found = [c.id for c in cables(BuildFolder(build).fabric())
             if (device, port) in ((c.a.device, c.a.port), (c.b.device, c.b.port))]
    assert len(found) == 1, found
    return found[0]


def _session_cables(build: Path, switch: str) -> set[str]:
    """The cables under `switch`'s designed BGP sessions: its routed links, from the Fabric (not from the rules)."""
    from teton.buildfolder import BuildFolder
    from teton.fabric.cables import cables

    fabric = BuildFolder(build).fabric()
    peers = {(i.name, i.peer) for i in fabric.devices[switch].interfaces
             if fabric.devices[i.peer].routing is not None}
    return {c.id for c in cables(fabric) if (c.a.device == switch and (c.a.port, c.b.device) in peers)
            or (c.b.device == switch and (c.b.port, c.a.device) in peers)}


def _designed_cable(prom: Prometheus, device: str, port: str) -> str:
    r = prom.get("/api/v1/query", query=f'teton_designed_link{{device="{device}",port="{port}"}}')
    found = r["data"]["result"]
    assert len(found) == 1, found
    return found[0]["metric"]["cable_id"]


def _designed_session_cables(prom: Prometheus, switch: str) -> set[str]:
    """The cables of `switch`'s designed sessions, from the design's own series (either end)."""
    r = prom.get("/api/v1/query", query=f'teton:designed_bgp_session_end{{device="{switch}"}}')
    return {x["metric"]["cable_id"] for x in r["data"]["result"]}
