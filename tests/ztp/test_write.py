"""`teton ztp BUILD --inventory FILE -o DIR`: Kea's configuration (checked by Kea itself), each switch's zero-touch
files beside byte-identical copies of its build files (the scripts shellchecked, EOS's bootstrap and the fetch
scripts run for real against a local HTTP server), the index and the manifest; images, a quarantine pool, an IPv6
management network; the same bytes under another hash seed; what it refuses to write over."""

from __future__ import annotations

import collections
import hashlib
import http.server
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers import INVENTORY, LAB
from tests.ztp.conftest import LEFT_OUT, LabZtp
from tests.ztp.helpers import cli, inventory_text, kea_check, render, shellcheck, switches, tree
from teton.manifest import FORMAT, is_teton_build, read_manifest

ROOT = Path(__file__).resolve().parents[2]
SONIC_FILES = {"config_db.json", "frr.conf", "frr.sh", "ztp.json"}
EOS_FILES = {"bootstrap", "startup-config", "structured-config.json"}
FBOSS_FILES = {"agent.conf", "bgpcpp.conf", "fetch.sh"}
ENTRY = {"sonic": "ztp.json", "eos": "bootstrap", "fboss": "fetch.sh"}


def _lab() -> dict[str, Any]:
    return yaml.safe_load(LAB.read_text())


def _address(d: dict[str, Any]) -> str:
    return d["mgmt"].split("/", 1)[0]


def _subnet(folder: Path, family: int = 4) -> dict[str, Any]:
    doc = json.loads((folder / f"kea-dhcp{family}.json").read_text())[f"Dhcp{family}"]
    (subnet,) = doc[f"subnet{family}"]
    return subnet


def _options(entries: list[dict[str, Any]]) -> dict[str | int, str]:
    return {o.get("name", o.get("code")): o["data"] for o in entries}


def _write(build: Path, names: list[str], folder: Path) -> tuple[dict[str, str], Path]:
    """`teton ztp` of `build` for the switches `names`, into folder/ztp; ({name: MAC}, the ZTP folder)."""
    text, macs = inventory_text(names)
    inventory = folder / "inventory.csv"
    inventory.write_text(text)
    out = folder / "ztp"
    result = cli("ztp", build, "--inventory", inventory, "-o", out)
    assert result.exit_code == 0, result.output
    return macs, out


def _no_proxy() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    return {**env, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}


# ------------------------------------------------------------------------------------------------------- the lab


def test_the_folder_has_kea_the_index_the_manifest_and_a_folder_per_switch_with_a_row(lab_ztp: LabZtp):
    assert sorted(p.name for p in lab_ztp.folder.iterdir()) == ["devices", "kea-dhcp4.json", "manifest.json",
                                                                 "ztp-index.json"]
    assert sorted(p.name for p in (lab_ztp.folder / "devices").iterdir()) == sorted(lab_ztp.macs)
    assert len(lab_ztp.macs) == len(lab_ztp.switches) - 1 == 28
    assert not (lab_ztp.folder / "devices" / LEFT_OUT).exists()


def test_the_summary_counts_by_tier_and_names_the_switch_without_a_row(lab_ztp: LabZtp):
    s = lab_ztp.summary
    assert s["kea"] == "kea-dhcp4.json" and s["folder"] == str(lab_ztp.folder)
    assert s["not_provisionable"] == {"rtsw": [LEFT_OUT]}
    assert s["provisionable"] == dict(collections.Counter(lab_ztp.switches[n]["role"] for n in lab_ztp.macs))


def test_the_manifest_is_tetons_with_every_files_hash(lab_ztp: LabZtp):
    manifest = read_manifest(lab_ztp.folder)
    assert manifest is not None and is_teton_build(lab_ztp.folder)
    assert (manifest["generator"], manifest["format"], manifest["targets"]) == ("teton", FORMAT, {"ztp": "1"})
    files = {k: v for k, v in tree(lab_ztp.folder).items() if k != "manifest.json"}
    assert sorted(manifest["files"]) == sorted(files)
    for rel, data in files.items():
        entry = manifest["files"][rel]
        assert (entry["sha256"], entry["bytes"]) == (hashlib.sha256(data).hexdigest(), len(data)), rel
        name = rel.split("/")[-1]
        built = rel.startswith("devices/") and (lab_ztp.build / rel).is_file()
        expected = lab_ztp.switches[rel.split("/")[1]]["nos"] if built else "ztp"
        assert entry["target"] == expected, (rel, name)
    assert manifest["plan"] == {"switches": 29, "provisionable": 28, "not_provisionable": 1}
    build_manifest = (lab_ztp.build / "manifest.json").read_bytes()
    assert manifest["spec"] == {"cluster": "lab", "build_manifest_sha256": hashlib.sha256(build_manifest).hexdigest()}


def test_the_index_says_what_each_switch_is_served_and_who_waits(lab_ztp: LabZtp):
    index = json.loads((lab_ztp.folder / "ztp-index.json").read_text())
    assert (index["format"], index["generator"], index["cluster"]) == (1, "teton", "lab")
    assert index["server"] == _lab()["ztp"]["server"]
    assert sorted(index["devices"]) == sorted(lab_ztp.macs)
    serials = {line.split(",")[0]: line.split(",")[2] for line in lab_ztp.inventory.read_text("utf-8-sig")
               .splitlines() if line.count(",") == 2 and not line.startswith("device,")}
    for name, rec in index["devices"].items():
        d = lab_ztp.switches[name]
        assert rec["mac"] == lab_ztp.macs[name] and rec["serial"] == serials.get(name)
        assert (rec["nos"], rec["tier"], rec["zone"], rec["plane"]) == (d["nos"], d["role"], d["zone"], d["plane"])
        assert rec["address"] == _address(d) and rec["entry"] == ENTRY[d["nos"]]
        assert rec["files"] == sorted(p.name for p in (lab_ztp.folder / "devices" / name).iterdir())
    d = lab_ztp.switches[LEFT_OUT]
    assert index["not_provisionable"] == {LEFT_OUT: {"nos": "sonic", "tier": "rtsw", "zone": d["zone"],
                                                     "plane": d["plane"]}}


def test_kea_accepts_the_configuration(lab_ztp: LabZtp):
    kea_check(lab_ztp.folder / "kea-dhcp4.json")


def test_each_reservation_is_the_switchs_mac_designed_address_name_and_entry_url(lab_ztp: LabZtp):
    server = _lab()["ztp"]["server"]
    subnet = _subnet(lab_ztp.folder)
    assert subnet["subnet"] == "192.0.2.0/24" and subnet["pools"] == []     # no quarantine: an unknown MAC gets none
    by_name = {r["hostname"]: r for r in subnet["reservations"]}
    assert len(by_name) == len(subnet["reservations"]) == len(lab_ztp.macs) and sorted(by_name) == sorted(lab_ztp.macs)
    for name, r in by_name.items():
        d = lab_ztp.switches[name]
        assert r["hw-address"] == lab_ztp.macs[name]
        assert r["ip-address"] == _address(d)
        assert _options(r["option-data"]) == {"boot-file-name": f"{server}/devices/{name}/{ENTRY[d['nos']]}"}
    assert _address(lab_ztp.switches[LEFT_OUT]) not in {r["ip-address"] for r in by_name.values()}


def test_router_dns_domain_and_ntp_come_from_the_management_section(lab_ztp: LabZtp):
    m = _lab()["management"]
    doc = json.loads((lab_ztp.folder / "kea-dhcp4.json").read_text())["Dhcp4"]
    assert _options(_subnet(lab_ztp.folder)["option-data"]) == {"routers": m["gateway"]}
    assert _options(doc["option-data"]) == {"domain-name-servers": ", ".join(m["dns_servers"]),
                                            "domain-name": m["domain"],
                                            "ntp-servers": ", ".join(m["ntp_servers"])}
    assert doc["host-reservation-identifiers"] == ["hw-address"] and doc["interfaces-config"]["interfaces"] == ["*"]


def test_sonic_switches_get_their_build_files_ztp_json_and_frr_sh(lab_ztp: LabZtp):
    server = _lab()["ztp"]["server"]
    sonic = [n for n in lab_ztp.macs if lab_ztp.switches[n]["nos"] == "sonic"]
    assert len(sonic) == 12
    for name in sonic:
        mine, built = lab_ztp.folder / "devices" / name, lab_ztp.build / "devices" / name
        assert {p.name for p in mine.iterdir()} == SONIC_FILES
        for f in ("config_db.json", "frr.conf"):
            assert (mine / f).read_bytes() == (built / f).read_bytes(), (name, f)
        raw = (mine / "ztp.json").read_text()
        sections = json.loads(raw)["ztp"]
        assert list(sections) == sorted(sections) == ["02-provisioning-script", "03-configdb-json"]  # no firmware
        url = f"{server}/devices/{name}/"
        assert sections["02-provisioning-script"]["plugin"] == {"url": url + "frr.sh"}
        assert sections["03-configdb-json"]["url"] == {"source": url + "config_db.json",
                                                       "destination": "/etc/sonic/config_db.json"}
        assert all(s["halt-on-failure"] is True for s in sections.values())
        assert f"'{url}frr.conf'" in (mine / "frr.sh").read_text()
    shellcheck(*(lab_ztp.folder / "devices" / n / "frr.sh" for n in sonic))


def test_eos_switches_get_their_build_files_and_a_python_bootstrap(lab_ztp: LabZtp):
    server = _lab()["ztp"]["server"]
    eos = [n for n in lab_ztp.macs if lab_ztp.switches[n]["nos"] == "eos"]
    assert len(eos) == 16
    for name in eos:
        mine, built = lab_ztp.folder / "devices" / name, lab_ztp.build / "devices" / name
        assert {p.name for p in mine.iterdir()} == EOS_FILES
        for f in ("startup-config", "structured-config.json"):
            assert (mine / f).read_bytes() == (built / f).read_bytes(), (name, f)
        script = (mine / "bootstrap").read_text()
        compile(script, str(mine / "bootstrap"), "exec")
        assert f"SERVER = '{server}/devices/{name}/'" in script
        assert "boot-config" not in script and ".swi" not in script      # no image named: none copied


# ------------------------------------------------------------------------------- run against a local HTTP server


@dataclass
class Local:
    """An HTTP server on 127.0.0.1 serving `www`; `flaky`: paths that fail (503) once; `gets`: every path asked,
    with when."""

    www: Path
    port: int
    flaky: set[str]
    gets: list[tuple[str, float]]

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path}"


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> Iterator[Local]:
    www = tmp_path_factory.mktemp("www")
    flaky: set[str] = set()
    gets: list[tuple[str, float]] = []

    class Handler(http.server.SimpleHTTPRequestHandler):
        def do_GET(self) -> None:
            gets.append((self.path, time.monotonic()))
            if self.path in flaky:
                flaky.discard(self.path)
                self.send_error(503, "not yet")
                return
            super().do_GET()

        def log_message(self, *args: object) -> None:      # the test's output stays quiet
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(www)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield Local(www, server.server_address[1], flaky, gets)
    finally:
        server.shutdown()
        server.server_close()


@dataclass(frozen=True)
class Variant:
    build: Path
    folder: Path                 # its ZTP folder, served at <local>/<name>/
    macs: dict[str, str]
    switches: dict[str, dict[str, Any]]


def _served(local: Local, data: dict[str, Any], name: str) -> Variant:
    """The spec `data` with its provisioning server at <local>/<name>, rendered, its ZTP folder written (every
    switch) into the served folder."""
    data["ztp"]["server"] = local.url(name)
    work = local.www.parent / f"{local.www.name}-{name}"
    work.mkdir()
    build = render(work, data, name)
    every = {d["name"]: d for d in switches(build)}
    macs, out = _write(build, list(every), work)
    shutil.copytree(out, local.www / name)
    return Variant(build, local.www / name, macs, every)


@pytest.fixture(scope="module")
def served_lab(local: Local) -> Variant:
    return _served(local, _lab(), "plain")


@pytest.fixture(scope="module")
def served_images(local: Local) -> Variant:
    (local.www / "images").mkdir()
    (local.www / "images" / "EOS.swi").write_bytes(os.urandom(4096) + b"\0\r\n" * 100)
    data = _lab()
    data["ztp"]["images"] = {"sonic": local.url("images/sonic-broadcom.bin"), "eos": local.url("images/EOS.swi")}
    return _served(local, data, "img")


@pytest.fixture(scope="module")
def served_fboss(local: Local) -> Variant:
    return _served(local, yaml.safe_load((INVENTORY / "lab-fboss.yaml").read_text()), "fboss")


def _run(cmd: list[str], root: Path) -> subprocess.CompletedProcess[str]:
    res = subprocess.run(cmd, env={**_no_proxy(), "TETON_ZTP_ROOT": str(root)}, capture_output=True, text=True,
                         timeout=120, cwd=root.parent)
    assert res.returncode == 0, (cmd, res.stdout[-2000:], res.stderr[-2000:])
    return res


@pytest.mark.parametrize("name", ["atsw01", "z01-ctsw01", "st-fsw01"])
def test_the_eos_bootstrap_fetches_the_switchs_files_to_flash(served_lab: Variant, tmp_path, name):
    assert served_lab.switches[name]["nos"] == "eos"
    mine = served_lab.folder / "devices" / name
    root = tmp_path / "switch"
    _run([sys.executable, str(mine / "bootstrap")], root)
    flash = root / "mnt" / "flash"
    assert (flash / "startup-config").read_bytes() == (served_lab.build / "devices" / name / "startup-config")\
        .read_bytes()
    assert (flash / "teton" / "structured-config.json").read_bytes() == (mine / "structured-config.json").read_bytes()
    assert sorted(p.relative_to(flash).as_posix() for p in flash.rglob("*") if p.is_file()) == [
        "startup-config", "teton/structured-config.json"]        # nothing half written left beside them
    assert (flash / "startup-config").stat().st_mode & 0o777 == 0o600


def test_the_eos_bootstrap_retries_a_fetch_that_fails(served_lab: Variant, local: Local, tmp_path):
    path = "/plain/devices/atsw02/startup-config"
    local.flaky.add(path)
    before = len(local.gets)
    root = tmp_path / "switch"
    res = _run([sys.executable, str(served_lab.folder / "devices" / "atsw02" / "bootstrap")], root)
    asked = [t for p, t in local.gets[before:] if p == path]
    assert len(asked) == 2 and "(attempt 1 of 5)" in res.stderr
    assert asked[1] - asked[0] >= 0.9         # it waits before it asks again, as curl --retry does
    assert (root / "mnt/flash/startup-config").read_bytes() == (served_lab.folder / "devices/atsw02/startup-config")\
        .read_bytes()


def test_the_sonic_provisioning_script_fetches_frr_conf(served_lab: Variant, tmp_path):
    name = "z01-r001-rtsw"
    root = tmp_path / "switch"
    _run(["sh", str(served_lab.folder / "devices" / name / "frr.sh")], root)
    assert (root / "etc/sonic/frr/frr.conf").read_bytes() == (served_lab.build / "devices" / name / "frr.conf")\
        .read_bytes()
    assert [p.name for p in (root / "etc/sonic/frr").iterdir()] == ["frr.conf"]


def test_fboss_switches_get_a_fetch_script_for_agent_conf_and_bgpcpp_conf(served_fboss: Variant, local: Local,
                                                                           tmp_path):
    fboss = [n for n in served_fboss.macs if served_fboss.switches[n]["nos"] == "fboss"]
    assert len(fboss) == 4
    subnet = _subnet(served_fboss.folder)
    boot = {r["hostname"]: _options(r["option-data"])["boot-file-name"] for r in subnet["reservations"]}
    for name in fboss:
        mine = served_fboss.folder / "devices" / name
        assert {p.name for p in mine.iterdir()} == FBOSS_FILES
        for f in ("agent.conf", "bgpcpp.conf"):
            assert (mine / f).read_bytes() == (served_fboss.build / "devices" / name / f).read_bytes()
        url = local.url(f"fboss/devices/{name}/")
        assert boot[name] == url + "fetch.sh"
        assert re.findall(r"'(http://[^']*)'", (mine / "fetch.sh").read_text()) == [url + "agent.conf",
                                                                                     url + "bgpcpp.conf"]
    shellcheck(*(served_fboss.folder / "devices" / n / "fetch.sh" for n in fboss))
    kea_check(served_fboss.folder / "kea-dhcp4.json")
    root = tmp_path / "switch"
    _run(["sh", str(served_fboss.folder / "devices" / fboss[0] / "fetch.sh")], root)
    got = tree(root)
    assert sorted(got) == ["etc/coop/agent.conf", "etc/coop/bgpcpp/bgpcpp.conf"]
    assert got["etc/coop/agent.conf"] == (served_fboss.build / "devices" / fboss[0] / "agent.conf").read_bytes()


# ------------------------------------------------------------------------------------------------------ images


def test_with_images_sonic_installs_its_firmware_first(served_images: Variant, local: Local):
    sonic = [n for n in served_images.macs if served_images.switches[n]["nos"] == "sonic"]
    assert sonic
    for name in sonic:
        sections = json.loads((served_images.folder / "devices" / name / "ztp.json").read_text())["ztp"]
        assert list(sections) == ["01-firmware", "02-provisioning-script", "03-configdb-json"]
        assert sections["01-firmware"]["install"] == {"url": local.url("images/sonic-broadcom.bin"),
                                                      "set-default": True}
        assert sections["01-firmware"]["halt-on-failure"] is True
    kea_check(served_images.folder / "kea-dhcp4.json")


def test_with_images_onie_is_pointed_at_sonics_installer_and_not_at_eoss(served_images: Variant, local: Local):
    reservations = _subnet(served_images.folder)["reservations"]
    assert len(reservations) == len(served_images.macs) == 29
    for r in reservations:
        options = _options(r["option-data"])
        if served_images.switches[r["hostname"]]["nos"] == "sonic":
            assert options[114] == local.url("images/sonic-broadcom.bin"), r
        else:
            assert 114 not in options and set(options) == {"boot-file-name"}, r


def test_with_images_the_eos_bootstrap_copies_the_image_and_sets_boot_config(served_images: Variant, local: Local,
                                                                              tmp_path):
    root = tmp_path / "switch"
    _run([sys.executable, str(served_images.folder / "devices" / "atsw01" / "bootstrap")], root)
    flash = root / "mnt" / "flash"
    swi = [p.name for p in flash.iterdir() if p.suffix == ".swi"]
    assert len(swi) == 1 and (flash / swi[0]).read_bytes() == (local.www / "images" / "EOS.swi").read_bytes()
    assert (flash / "boot-config").read_text() == f"SWI=flash:{swi[0]}\n"
    assert (flash / "startup-config").read_bytes() == (served_images.build / "devices/atsw01/startup-config")\
        .read_bytes()


# ------------------------------------------------------------------------------------ quarantine, IPv6, refusals


def test_a_quarantine_pool_is_the_subnets_only_pool_and_no_switch_is_in_it(tmp_path):
    data = _lab()
    data["ztp"]["quarantine"] = {"first": "192.0.2.240", "last": "192.0.2.250"}
    build = render(tmp_path, data, "quarantine")
    every = switches(build)
    _, out = _write(build, [d["name"] for d in every], tmp_path)
    subnet = _subnet(out)
    assert subnet["pools"] == [{"pool": "192.0.2.240 - 192.0.2.250"}]
    kea_check(out / "kea-dhcp4.json")
    pool = range(int(ipaddress.ip_address("192.0.2.240")), int(ipaddress.ip_address("192.0.2.250")) + 1)
    assert len(subnet["reservations"]) == len(every) == 29
    assert not [d["name"] for d in every if int(ipaddress.ip_address(_address(d))) in pool]
    assert not [r for r in subnet["reservations"] if int(ipaddress.ip_address(r["ip-address"])) in pool]


def test_an_ipv6_management_network_gets_kea_dhcp6(tmp_path):
    data = _lab()
    data["management"].update(
        network="2001:db8:100::/64", gateway="2001:db8:100::1", prefixes=["2001:db8:100::/64"],
        ntp_servers=["2001:db8:100::7b", "2001:db8:200::7b"], syslog_servers=["2001:db8:100::33", "2001:db8:200::33"],
        aaa_servers=["2001:db8:100::31", "2001:db8:200::31"], dns_servers=["2001:db8:100::2", "192.0.2.53"])
    data["ztp"]["server"] = "http://[2001:db8:100::5]:8080"
    # AVD's management interface is IPv4 only: the EOS tiers run SONiC here
    for tier in (data["backend"]["ctsw"], data["backend"]["atsw"], data["frontend"]["fsw"]):
        tier.update(model="minipack2", nos="sonic")
    build = render(tmp_path, data, "v6")
    every = {d["name"]: d for d in switches(build)}
    macs, out = _write(build, list(every), tmp_path)
    assert sorted(p.name for p in out.iterdir()) == ["devices", "kea-dhcp6.json", "manifest.json", "ztp-index.json"]
    kea_check(out / "kea-dhcp6.json")
    doc = json.loads((out / "kea-dhcp6.json").read_text())["Dhcp6"]
    assert _options(doc["option-data"]) == {"dns-servers": "2001:db8:100::2", "domain-search": "lab.example.net",
                                            "sntp-servers": "2001:db8:100::7b, 2001:db8:200::7b"}
    subnet = _subnet(out, 6)
    assert subnet["subnet"] == "2001:db8:100::/64" and subnet["pools"] == []
    assert len(subnet["reservations"]) == len(every) == 29
    for r in subnet["reservations"]:
        name = r["hostname"]
        assert ipaddress.ip_address(_address(every[name])).version == 6
        assert r["hw-address"] == macs[name] and r["ip-addresses"] == [_address(every[name])]
        assert _options(r["option-data"]) == {"bootfile-url": f"http://[2001:db8:100::5]:8080/devices/{name}/ztp.json"}


def test_two_runs_under_other_hash_seeds_write_the_same_bytes(lab_ztp: LabZtp, tmp_path):
    trees = []
    for seed in ("0", "4242"):
        out = tmp_path / f"seed-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT / "infra")}
        res = subprocess.run([sys.executable, "-m", "teton.cli", "ztp", str(lab_ztp.build), "--inventory",
                              str(lab_ztp.inventory), "-o", str(out)], env=env, capture_output=True, text=True,
                             timeout=120, cwd=ROOT)
        assert res.returncode == 0, res.stderr
        trees.append(tree(out))
    assert trees[0] == trees[1] == tree(lab_ztp.folder)


@pytest.mark.parametrize("where", ["the build itself", "inside the build", "the build's parent", "another build"])
def test_it_refuses_to_write_over_a_build(lab_build: Path, tmp_path, where):
    build = tmp_path / "builds" / "lab"
    shutil.copytree(lab_build, build)
    other = tmp_path / "builds" / "other"
    shutil.copytree(lab_build, other)
    text, _ = inventory_text(["atsw01"])
    inventory = tmp_path / "inventory.csv"
    inventory.write_text(text)
    out = {"the build itself": build, "inside the build": build / "ztp", "the build's parent": build.parent,
           "another build": other}[where]
    before = tree(tmp_path / "builds")
    result = cli("ztp", build, "--inventory", inventory, "-o", out)
    assert result.exit_code == 2 and "error" in result.output
    assert tree(tmp_path / "builds") == before


def test_a_build_whose_spec_has_no_ztp_section_is_refused(tmp_path):
    data = _lab()
    del data["ztp"]
    build = render(tmp_path, data, "no-ztp")
    text, _ = inventory_text(["atsw01"])
    (tmp_path / "inventory.csv").write_text(text)
    result = cli("ztp", build, "--inventory", tmp_path / "inventory.csv", "-o", tmp_path / "out")
    assert result.exit_code == 2 and "`ztp:`" in result.output
    assert not (tmp_path / "out").exists()
