"""What the end-to-end tests share: the lab brought up from day 0 (Kea, `teton ztp serve`, a DHCP client and the NOS's
provisioning per switch: `day0`), and one twin of what its switches fetched, for the day-0 test and the tests of the
services the host roles set up (storage, the scheduler), brought up once per session under its own name, so that it
lives beside the twins other modules bring up and tear down as `lab`."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.e2e.day0 import TETON, ManagementLan, eos_ztp, fetched_build, run_all, sh, sonic_ztp, teton_env, wait_port
from tests.helpers import LAB, write_spec

# Another name (TETON_SERVICES_TWIN) lets two checkouts run these tests on one machine at once: a twin's kernel
# objects and state folder are named after it, and the fixture takes down a twin of its name before it starts.
SERVICES_TWIN = os.environ.get("TETON_SERVICES_TWIN", "svc")


# the site's secrets as `teton ztp serve` resolves them at fetch time and the twin runs them (each of its kind)
SECRETS = {"bgp_backend": "bgp-Day0-s3cret%", "bgp_frontend": "bgp-fe-Day0-s3cret%", "ntp_key": "ntp-Day0-key",
           "aaa_key": "t@cacs-Day0-key", "breakglass_sha512": "$6$Day0salt$hash", "snmpv3_auth": "auth-Day0-pass",
           "snmpv3_priv": "priv-Day0-pass"}
STRANGER = "02:7e:ff:00:00:01"        # a switch nobody listed


@dataclass
class Day0:
    """What day 0 of the lab showed: every switch's lease and fetches, what the server refused, its log and its
    view of the bring-up, and the build made of what the switches fetched."""

    spec: Path
    build: Path                          # rendered from the spec
    ztp: Path                            # `teton ztp`'s folder
    inventory: dict[str, str]            # device -> MAC
    nos: dict[str, str]                  # device -> NOS
    leases: dict[str, dict[str, str]]    # device -> what udhcpc learnt
    stranger_lease: bool
    fetched: dict[str, list[str]]        # device -> URLs its provisioning fetched
    roots: dict[str, Path]               # device -> the folder standing for its root file system
    probes: dict[str, int]               # "from device: URL" -> HTTP status
    log: list[dict]                      # `teton ztp serve --log`'s lines
    status: dict                         # `--status`'s last state
    serve_output: str
    fetched_build: Path
    serve_exit: int                      # `teton ztp serve`'s exit status after Ctrl-C


@pytest.fixture(scope="session")
def day0(tmp_path_factory) -> Iterator[Day0]:
    """The lab (named `svc`) from day 0 on a management LAN of namespaces: Kea with `teton ztp`'s configuration,
    `teton ztp serve`, and per switch a namespace with its MAC, udhcpc and its NOS's provisioning."""
    import json

    work = tmp_path_factory.mktemp("day0")
    data = yaml.safe_load(LAB.read_text())
    data["name"] = SERVICES_TWIN
    spec = write_spec(work, data, "svc.yaml")
    env = teton_env(SECRETS)
    sh(*TETON, "render", str(spec), "-o", str(work / "build"), env=env, timeout=600)
    fabric = json.loads((work / "build/fabric.json").read_text())
    switches = sorted((d["name"], d["nos"]) for d in fabric["devices"] if d["nos"])
    inventory = {name: f"02:7e:00:00:{i // 256:02x}:{i % 256:02x}" for i, (name, _) in enumerate(switches)}
    (work / "inventory.csv").write_text("device,mac,serial\n" + "".join(
        f"{name},{mac},SN{i:05d}\n" for i, (name, mac) in enumerate(inventory.items())))
    sh(*TETON, "ztp", str(work / "build"), "--inventory", str(work / "inventory.csv"), "-o", str(work / "ztp"),
       env=env)
    server = data["ztp"]["server"].split("//", 1)[1]
    host, port = server.rsplit(":", 1)
    lan = ManagementLan(f"d0{SERVICES_TWIN[:3]}", work / "lan", int(data["management"]["network"].split("/")[1]), host)
    (work / "lan").mkdir()
    try:
        lan.up()
        kea = json.loads((work / "ztp/kea-dhcp4.json").read_text())
        kea["Dhcp4"]["lease-database"]["name"] = str(work / "lan/leases4.csv")   # the test's, not /var/lib/kea's
        (work / "lan/kea-dhcp4.json").write_text(json.dumps(kea))
        lan.start(["kea-dhcp4", "-c", str(work / "lan/kea-dhcp4.json")], work / "lan/kea.log",
                  {**os.environ, "KEA_PIDFILE_DIR": str(work / "lan"), "KEA_LOCKFILE_DIR": str(work / "lan")})
        serve = lan.start([*TETON, "ztp", "serve", str(work / "ztp"), "--bind", server, "--status",
                           str(work / "lan/status.json"), "--log", str(work / "lan/serve.jsonl")],
                          work / "lan/serve.out", env)
        wait_port(lan.server_ns, host, int(port))
        nodes = [lan.add_node(name, mac) for name, mac in inventory.items()]
        stranger = lan.add_node("stranger", STRANGER)
        got = run_all(lan.dhcp, nodes)
        assert all(got), [n.name for n, ok in zip(nodes, got, strict=True) if not ok]
        stranger_lease = lan.dhcp(stranger, tries=2)
        nos = dict(switches)
        fetched = dict(zip(inventory, run_all(
            lambda n: sonic_ztp(lan, n) if nos[n.name] == "sonic" else eos_ztp(lan, n), nodes), strict=True))
        a, b = nodes[0], nodes[1]
        base = data["ztp"]["server"]
        probes = {}
        entry = json.loads((work / "ztp/ztp-index.json").read_text())["devices"][b.name]["entry"]
        paths = [f"/devices/{b.name}/{entry}", "/", "/manifest.json", "/kea-dhcp4.json", "/ztp-index.json",
                 f"/devices/{a.name}/../../manifest.json", "/devices/../ztp-index.json", f"/devices/{a.name}/",
                 f"/devices/{a.name}/nothing.conf", "/../../../etc/passwd"]
        for who, path in ((a, p) for p in paths):
            probes[f"from {who.name}: {path}"] = lan.fetch(who, base + path, work / "lan/probe")
        time.sleep(1.0)                      # the server writes its status at most twice a second
        status = json.loads((work / "lan/status.json").read_text())
        log = [json.loads(line) for line in (work / "lan/serve.jsonl").read_text().splitlines()]
        out = fetched_build(work / "build", lan, nos, work / "fetched")
        serve.send_signal(2)
        stopped = serve.wait(10)          # Ctrl-C: the server flushes its status and exits
        yield Day0(spec, work / "build", work / "ztp", inventory, nos, {n.name: n.lease for n in nodes},
                   stranger_lease, fetched, {n.name: n.root for n in nodes}, probes, log, status,
                   (work / "lan/serve.out").read_text(), out, stopped)
    finally:
        lan.down()


@dataclass(frozen=True)
class ServicesTwin:
    spec: Path          # the lab spec as the twin runs it (cluster name `svc`)
    build: Path         # the build folder the twin deployed (its Ansible inventory, Slurm files ...)
    report: object      # teton.twin.service.TwinUp
    name: str = SERVICES_TWIN   # the twin's name, for teton.twin.service's verbs (fail, restore)

    def netns(self, node: str) -> str:
        from teton.twin.plan import netns_name

        return netns_name(SERVICES_TWIN, node)


@pytest.fixture(scope="session")
def services_twin(day0: Day0) -> Iterator[ServicesTwin]:
    """The lab (PFC only) as a twin named `svc`, up for the whole session from the files its switches fetched at day
    0, with the site's secrets: the hosts' services run in its namespaces over its front end.  A test that fails
    links restores them before it ends."""
    from teton.twin import service

    service.down(SERVICES_TWIN)
    report = service.up(str(day0.fetched_build), SECRETS)
    try:
        yield ServicesTwin(day0.spec, service.state_dir(SERVICES_TWIN) / "build", report)
    finally:
        service.down(SERVICES_TWIN)
