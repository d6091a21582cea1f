"""Every role run for real through ansible-runner: check mode with --diff (which changes nothing), then apply, then a
second apply with changed=0.  Network roles run against network namespaces of the test's own (addresses, rules,
routes and sysctls read back with `ip`); file roles against a prepared root directory."""

from __future__ import annotations

import json
import os
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
import yaml

from tests.hosts import harness as h

pytestmark = pytest.mark.root("chroot and network namespaces")

GPU_BUS = {n: f"0000:{0x18 + 0x20 * n:02x}:00.0" for n in range(8)}
NIC_BUS = {f"mlx5_{n}": f"0000:{0x19 + 0x20 * n:02x}:00.0" for n in range(8)}
SHIFT = 2          # the front-end ConnectX NICs enumerate first: rail n's RDMA device is mlx5_(n+2), not mlx5_n
SHIFTED_BUS = {f"mlx5_{n + SHIFT}": bus for n, bus in enumerate(NIC_BUS.values())}


def _sysfs(root: Path, rails: int) -> str:
    """A sysfs tree inside the root (the real /sys has no ConnectX NIC here): rail n's NIC be<n> has the RDMA device
    mlx5_(n+SHIFT) on its PCI function, as on a Grand Teton whose front-end NICs took mlx5_0 and mlx5_1."""
    for n in range(rails):
        (root / f"srv/sysfs/class/net/be{n}/device/infiniband/mlx5_{n + SHIFT}").mkdir(parents=True)
    return "/srv/sysfs"


def _links(root: Path) -> dict[str, str]:
    """{PCI address: name} of the .link files the role wrote."""
    import configparser

    out = {}
    for f in sorted((root / "etc/systemd/network").glob("*.link")):
        cp = configparser.ConfigParser(strict=False, interpolation=None)
        cp.optionxform = str  # type: ignore[assignment,method-assign]
        cp.read_string(f.read_text())
        out[cp["Match"]["Path"].removeprefix("pci-")] = cp["Link"]["Name"]
    return out


def _apply_links(root: Path, ns: str, kernel_names: dict[str, str]) -> None:
    """A stand-in for systemd-udevd, which cannot run in a test's network namespace: rename each NIC (its kernel
    name by PCI address in `kernel_names`) to the name its .link file gives, as net_setup_link would at boot."""
    for pci, name in _links(root).items():
        h.run("ip", "-n", ns, "link", "set", kernel_names[pci], "name", name)


def _playbook(where: Path, roles: list[str], hosts: str) -> Path:
    p = where / f"play-{'-'.join(roles)}.yml"
    p.write_text(yaml.safe_dump([{"name": "Roles under test", "hosts": hosts, "gather_facts": True,
                                  "gather_subset": ["min"], "roles": roles}], sort_keys=False))
    return p


def _changed_by_role(result: h.Result) -> Counter[str]:
    return Counter(e["event_data"].get("role", "") for e in result.events
                   if e.get("event") == "runner_on_ok" and e["event_data"].get("res", {}).get("changed"))


def _three_runs(tmp_path: Path, roles: list[str], host: str, inventory: str, roots: Path,
                extravars: dict | None = None, before_apply=None,
                envvars: dict | None = None) -> tuple[h.Result, h.Result, h.Result]:
    pb = _playbook(tmp_path, roles, host)
    kw = {"limit": host, "roots": roots, "extravars": extravars, "envvars": envvars}
    check = h.play(pb, [inventory], tmp_path / "run", check=True, **kw)
    assert check.rc == 0, check.stdout[-4000:]
    for role in roles:
        assert _changed_by_role(check)[role] > 0, f"{role}: check mode reports nothing to change"
    assert check.diffs(), "no --diff output"
    if before_apply:
        before_apply()
    first = h.play(pb, [inventory], tmp_path / "run", **kw)
    assert first.rc == 0, first.stdout[-4000:]
    second = h.play(pb, [inventory], tmp_path / "run", **kw)
    assert second.rc == 0, second.stdout[-4000:]
    assert second.total("changed") == 0, second.changed_tasks()
    return check, first, second


@pytest.fixture
def netns():
    made: list[str] = []

    def make(name: str) -> str:
        h.run("ip", "netns", "add", name)
        made.append(name)
        for k in ("all", "default"):
            h.run("ip", "netns", "exec", name, "sysctl", "-qw", f"net.ipv6.conf.{k}.accept_dad=0")
        h.run("ip", "-n", name, "link", "set", "lo", "up")
        return name

    yield make
    for name in made:
        subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


def _ip(ns: str, *args: str) -> str:
    return h.run("ip", "-n", ns, *args).stdout


@pytest.mark.parametrize("variant", ["lab_build", "lab_dcqcn_build"])    # PFC only (the lab), and DCQCN
def test_backend_nics_and_roce_qos_on_a_host_namespace(variant, request, tmp_path, netns):
    lab_build = request.getfixturevalue(variant)
    host = "z01-r001-h1"
    v = h.variables(lab_build / f"ansible/host_vars/{host}.json")
    tag = h.unique()
    hns, sns = netns(f"{tag}-h1"), netns(f"{tag}-sw")
    for rail in v["teton_rails"]:
        n = rail["rail"]
        h.run("ip", "link", "add", "name", rail["name"], "netns", hns, "type", "veth", "peer", "name", f"sw{n}",
              "netns", sns)
        for a in (f"{rail['gateway4']}/31", f"{rail['gateway6']}/127"):
            h.run("ip", "-n", sns, "addr", "add", a, "dev", f"sw{n}")
        h.run("ip", "-n", sns, "link", "set", f"sw{n}", "mtu", str(rail["mtu"]), "up")
    h.run("ip", "-n", sns, "addr", "add", "10.64.0.200/32", "dev", "lo")      # a far end inside the supernet
    h.run("ip", "-n", sns, "addr", "add", "fd00:1::c8/128", "dev", "lo")
    roots = tmp_path / "roots"
    h.make_root(roots / host)
    h.chroot_exe(roots, roots / host, hns)

    def untouched() -> None:
        assert "10.64.0.1/31" not in _ip(hns, "addr", "show", "be0")
        assert "lookup 100" not in _ip(hns, "rule")
        assert not (roots / host / "etc/systemd/network").exists()

    check, first, _ = _three_runs(tmp_path, ["backend_nics", "roce_qos"], host,
                                  str(lab_build / "ansible/inventory.yml"), roots, before_apply=untouched)
    # what the role did, read back with ip inside the namespace
    rules = _ip(hns, "rule")
    for rail in v["teton_rails"]:
        name, table, prio = rail["name"], rail["table"], rail["rule_priority"]
        addr = _ip(hns, "addr", "show", name)
        assert f"mtu {rail['mtu']}" in addr and all(a in addr for a in rail["addresses"])
        src4, src6 = (a.split("/")[0] for a in rail["addresses"])
        assert f"{prio}:\tfrom {src4} lookup {table}" in rules
        assert f"{prio}:\tfrom {src6} lookup {table}" in _ip(hns, "-6", "rule")
        assert f"10.64.0.0/24 via {rail['gateway4']} dev {name}" in _ip(hns, "route", "show", "table", str(table))
        assert f"fd00:1::/56 via {rail['gateway6']} dev {name}" in _ip(hns, "-6", "route", "show", "table",
                                                                      str(table))
        assert f"dev {name}" in _ip(hns, "route", "get", "10.64.0.200", "from", src4)
        main = f"10.64.0.0/24 via {rail['gateway4']} dev {name}"      # the main table too, at the rail's metric
        assert f"{main} metric {rail['main_metric']}" in _ip(hns, "route", "show", "table", "main")
        for dst, src in (("10.64.0.200", src4), ("fd00:1::c8", src6)):      # reachable over this rail
            ping = h.run("ip", "netns", "exec", hns, "ping", "-n", "-q", "-c", "1", "-W", "2", "-I", src, dst,
                         check=False)
            assert ping.returncode == 0, (name, dst, ping.stdout)
        sysctl = h.run("ip", "netns", "exec", hns, "sysctl", "-n", f"net.ipv4.conf.{name}.arp_ignore",
                       f"net.ipv4.conf.{name}.arp_announce", f"net.ipv4.conf.{name}.rp_filter").stdout.split()
        assert sysctl == ["1", "2", "2"]
        unit = (roots / host / f"etc/systemd/network/60-teton-{name}.network").read_text()
        assert f"Table={table}" in unit and f"Priority={prio}" in unit and f"MTUBytes={rail['mtu']}" in unit
        assert f"Metric={rail['main_metric']}" in unit
    # a socket with no bound source (rdma_cm tools) reaches the backend over rail 0, not the front end's default
    assert "dev be0" in _ip(hns, "route", "get", "10.64.0.200")
    ping = h.run("ip", "netns", "exec", hns, "ping", "-n", "-q", "-c", "1", "-W", "2", "10.64.0.200", check=False)
    assert ping.returncode == 0, ping.stdout
    # no vendor tools here: every QoS setting it could not apply is said, and recorded for the health check
    warnings = "\n".join(first.warnings())
    assert "RoCE QoS not applied: trust dscp, PFC on priority 3 only" in warnings and "mlnx_qos not found" in warnings
    assert "DCQCN/ECN and the CNP's DSCP and priority" in warnings and "PFC-storm prevention 200 ms" in warnings
    state = json.loads((roots / host / "var/lib/teton/roce-qos.json").read_text())
    ecn = variant == "lab_dcqcn_build"
    assert (state["intended"]["roce_tos"], state["intended"]["ecn"]) == (106 if ecn else 104, ecn)
    assert len(state["not_applied"]) >= 3
    # and, where an operator wants it, a host without the tools fails the play instead
    strict = h.play(_playbook(tmp_path, ["roce_qos"], host), [str(lab_build / "ansible/inventory.yml")],
                    tmp_path / "run", limit=host, roots=roots, extravars={"roce_qos_on_missing": "fail"})
    assert strict.rc != 0 and "RoCE QoS not applied" in strict.stdout


def test_netplan_renderer_writes_one_file_with_tables_and_rules(lab_build, tmp_path, netns):
    host = "z02-r002-h2"
    v = h.variables(lab_build / f"ansible/host_vars/{host}.json")
    hns = netns(f"{h.unique()}-h2")
    for rail in v["teton_rails"]:
        h.run("ip", "-n", hns, "link", "add", rail["name"], "type", "veth", "peer", "name", f"p{rail['rail']}")
    roots = tmp_path / "roots"
    h.make_root(roots / host)
    h.chroot_exe(roots, roots / host, hns)
    extra = {"teton_network": {"renderer": "netplan", "lldp": False}}
    _three_runs(tmp_path, ["backend_nics"], host, str(lab_build / "ansible/inventory.yml"), roots, extra)
    plan = yaml.safe_load((roots / host / "etc/netplan/60-teton-backend.yaml").read_text())
    be3 = plan["network"]["ethernets"]["be3"]
    assert be3["mtu"] == 9100 and {"to": "10.64.0.0/24", "via": v["teton_rails"][3]["gateway4"], "table": 103} in \
        be3["routes"]
    assert {"from": v["teton_rails"][3]["addresses"][0].split("/")[0], "table": 103, "priority": 1003} in \
        be3["routing-policy"]
    assert not (roots / host / "etc/systemd/network").exists()


def test_gpu_host_file_roles_in_a_prepared_root(lab_build, tmp_path):
    host = "z01-r002-h1"
    roots = tmp_path / "roots"
    root = h.make_root(roots / host)
    h.chroot_exe(roots, root, None)
    extra = {"nccl_pci_bus_ids": {"gpus": GPU_BUS, "rdma": SHIFTED_BUS}, "nccl_sysfs": _sysfs(root, 8)}
    check, first, _ = _three_runs(tmp_path, ["nccl", "gpu_health", "storage_client", "slurm"], host,
                                  str(lab_build / "ansible/inventory.yml"), roots, extra)
    conf = (root / "etc/nccl.conf").read_text()
    # each rail's RDMA device as the host's sysfs names it (shifted by the front-end NICs), in GPU order
    assert "NCCL_IB_HCA==" + ",".join(f"mlx5_{n + SHIFT}:1" for n in range(8)) in conf.splitlines()
    for line in ("NCCL_IB_TC=104", "NCCL_IB_FIFO_TC=184", "NCCL_IB_QPS_PER_CONNECTION=16", "NCCL_IB_TIMEOUT=22",
                 "NCCL_IB_ROCE_VERSION_NUM=2", "NCCL_IB_ADDR_FAMILY=AF_INET", "NCCL_IB_ADDR_RANGE=10.64.0.0/24",
                 "NCCL_SOCKET_IFNAME==fe0,fe1", "NCCL_TOPO_FILE=/etc/nccl/topo.xml", "NCCL_DEBUG=WARN"):
        assert line in conf.splitlines()
    assert "NCCL_IB_GID_INDEX" not in conf                               # NCCL picks the GID by type and address
    env = (root / "etc/profile.d/teton-nccl.sh").read_text()
    assert "TORCH_NCCL_TRACE_BUFFER_SIZE=2000" in env and "TORCH_NCCL_DUMP_ON_TIMEOUT=1" in env
    topo = ET.parse(root / "etc/nccl/topo.xml").getroot()
    cpus = topo.findall("cpu")
    assert [c.get("numaid") for c in cpus] == ["0", "1"]
    for sw in topo.iter("pci"):
        if sw.get("class") == "0x060400":                      # a PCIe switch: 2 GPUs and their paired NICs
            kids = [(k.get("class"), k.get("busid")) for k in sw]
            n = int(sw.get("busid").split(":")[2].split(".")[0], 16)
            assert kids == [("0x030200", GPU_BUS[2 * n]), ("0x020700", NIC_BUS[f"mlx5_{2 * n}"]),
                            ("0x030200", GPU_BUS[2 * n + 1]), ("0x020700", NIC_BUS[f"mlx5_{2 * n + 1}"])]
            # (NIC_BUS in rail order: rail n's bus id reached through its sysfs device mlx5_(n+SHIFT))
    health = json.loads((root / "etc/teton/node-health.json").read_text())
    assert health["node"] == host and health["pfc_priority"] == 3 and health["expected_gpus"] == 8
    assert os.access(root / "usr/local/sbin/teton-node-health", os.X_OK)
    warnings = "\n".join(first.warnings())
    assert "GPU health: not applied: no GPU on this host (no nvidia-smi)" in warnings
    assert "nvidia-fabricmanager: not installed, not started" in warnings
    # the lab names no Tectonic client (Meta has not published one): no Tectonic mount (tests/hosts/test_tectonic.py)
    assert not (root / "etc/systemd/system/mnt-tectonic.mount").exists()
    nfs = (root / "etc/systemd/system/mnt-checkpoints.mount").read_text()
    # the mounts differ per host now (each mounts from the server the design assigns it): they are in host_vars
    v = h.variables(lab_build / f"ansible/host_vars/{host}.json")
    server = h.variables(lab_build / "ansible/host_vars/s2-r01-sp02.json")     # z01-r002-h1's (rack 2, host 1)
    share = next(m for m in v["teton_storage_mounts"]["nfs"] if m["mount_point"] == "/mnt/checkpoints")
    assert share["export"] in [e["pseudo"] for e in server["teton_storage"]["exports"]]   # a path it exports
    assert f"What={server['ansible_host']}:{share['export']}" in nfs.splitlines()
    assert "Options=vers=4.2,nconnect=16,hard,noatime" in nfs and "Type=nfs4" in nfs
    assert v["teton_storage_mounts"]["tectonic"] == []
    for f in ("slurm.conf", "gres.conf", "topology.conf", "topology.yaml"):
        assert (root / "etc/slurm" / f).read_text() == (lab_build / "slurm" / f).read_text()
    assert "munge key: TETON_SECRET_munge_key is not set" in warnings


def test_nccl_role_of_the_dcqcn_build_marks_roce_traffic_ect0(lab_dcqcn_build, tmp_path):
    """Under DCQCN the host's RoCE traffic class carries ECT(0) with DSCP 26 (106, not the PFC-only 104): the one
    line of the file roles that differs from the lab's, so the DCQCN build runs the `nccl` role once (the lab's
    build runs every file role three times above)."""
    host = "z01-r002-h1"
    roots = tmp_path / "roots"
    root = h.make_root(roots / host)
    h.chroot_exe(roots, root, None)
    extra = {"nccl_pci_bus_ids": {"gpus": GPU_BUS, "rdma": SHIFTED_BUS}, "nccl_sysfs": _sysfs(root, 8)}
    run = h.play(_playbook(tmp_path, ["nccl"], host), [str(lab_dcqcn_build / "ansible/inventory.yml")],
                 tmp_path / "run", limit=host, roots=roots, extravars=extra)
    assert run.rc == 0, run.stdout[-4000:]
    conf = (root / "etc/nccl.conf").read_text().splitlines()
    assert "NCCL_IB_TC=106" in conf and "NCCL_IB_TC=104" not in conf and "NCCL_IB_FIFO_TC=184" in conf


def test_infiniband_gpu_host_roles_point_nccl_at_the_hcas_the_subnet_manager_configures(lab_ib_build, tmp_path):
    """An InfiniBand GPU host: NCCL over the HCAs with the subnet manager's service level (the same values as
    ib/nccl.env), no RoCE settings, the health check on HCA port states; the RoCE NIC roles are not run on it."""
    host = "z02-r001-h2"
    roots = tmp_path / "roots"
    root = h.make_root(roots / host)
    h.chroot_exe(roots, root, None)
    inventory = yaml.safe_load((lab_ib_build / "ansible/inventory.yml").read_text())["all"]["children"]
    assert "backend_roce" not in inventory and host in inventory["backend_infiniband"]["hosts"]
    extra = {"nccl_pci_bus_ids": {"gpus": GPU_BUS, "rdma": NIC_BUS}}
    _three_runs(tmp_path, ["nccl", "gpu_health", "storage_client", "slurm"], host,
                str(lab_ib_build / "ansible/inventory.yml"), roots, extra)
    conf = dict(line.split("=", 1) for line in (root / "etc/nccl.conf").read_text().splitlines()
                if line and not line.startswith("#"))
    env = dict(line.split("=", 1) for line in (lab_ib_build / "ib/nccl.env").read_text().splitlines()
               if line and not line.startswith("#"))
    for key in ("NCCL_IB_HCA", "NCCL_IB_SL", "NCCL_IB_ADAPTIVE_ROUTING", "NCCL_IB_PKEY"):
        assert conf[key] == env[key], key
    assert "# 0x8a01 (partition tenant-a), in its HCAs' tables" in (root / "etc/nccl.conf").read_text()   # SU 2's
    assert conf["NCCL_IB_HCA"] == "=" + ",".join(f"mlx5_{n}:1" for n in range(8))
    assert conf["NCCL_IB_QPS_PER_CONNECTION"] == "1" and "NCCL_IB_GID_INDEX" not in conf and "NCCL_IB_TC" not in conf
    health = json.loads((root / "etc/teton/node-health.json").read_text())
    assert health["backend"] == "infiniband" and health["nics"] == [f"mlx5_{n}" for n in range(8)]
    assert health["pfc_priority"] is None and health["roce_qos_state"] is None
    for f in ("slurm.conf", "gres.conf", "topology.conf", "topology.yaml"):
        assert (root / "etc/slurm" / f).read_text() == (lab_ib_build / "slurm" / f).read_text()


def test_storage_server_role_in_a_prepared_root(lab_build, tmp_path):
    host = "s2-r01-sp01"
    roots = tmp_path / "roots"
    root = h.make_root(roots / host)
    h.chroot_exe(roots, root, None)
    _, first, _ = _three_runs(tmp_path, ["host_nics", "storage_server"], host,
                              str(lab_build / "ansible/inventory.yml"), roots,
                              {"storage_server_install_packages": False})   # the chroot has no apt
    v = h.variables(lab_build / f"ansible/host_vars/{host}.json")
    storage = v["teton_storage"]
    assert storage["volume"] == {"layout": "raid6", "chunk_kib": 512, "device": "/dev/md/teton-data",
                                 "mount_point": "/srv/hammerspace"}
    # every export is a folder on the data volume, under the share's path in the NFSv4 pseudo file system
    assert [(e["path"], e["pseudo"]) for e in storage["exports"]] == [
        ("/srv/hammerspace/checkpoints", "/checkpoints"), ("/srv/hammerspace/datasets", "/datasets")]
    assert all((root / e["path"].lstrip("/")).is_dir() for e in storage["exports"])
    assert not (root / "checkpoints").exists() and not (root / "etc/exports.d").exists()   # no kernel NFS exports
    conf = (root / "etc/ganesha/ganesha.conf").read_text()
    for line in ("Protocols = 4;", "Minor_Versions = 2;", "Path = /srv/hammerspace/checkpoints;",
                 "Pseudo = /checkpoints;", "Clients = 10.192.0.0/22;", "Access_Type = RW;", "Name = VFS;"):
        assert line in [ln.strip() for ln in conf.splitlines()], line
    unit = (root / "etc/systemd/system/srv-hammerspace.mount").read_text()
    assert "What=/dev/md/teton-data" in unit and "Where=/srv/hammerspace" in unit and "Type=xfs" in unit
    network = (root / "etc/systemd/network/60-teton-fe0.network").read_text()
    assert f"Address={v['teton_frontend'][0]['addresses'][0]}" in network and "MTUBytes=9100" in network
    nics = v["teton_frontend"]                  # one default route (ECMP over the NICs when there are several)
    hops = [ln for ln in network.splitlines() if ln.startswith(("Gateway=", "MultiPathRoute="))]
    assert hops == ([f"Gateway={nics[0]['gateway4']}"] if len(nics) == 1 else
                    [f"MultiPathRoute={n['gateway4']}@{n['name']}" for n in nics])
    assert set(_links(root).values()) == {n["name"] for n in nics}   # its NICs are named by PCI address too
    inventory = json.loads((root / "var/lib/teton/nvme-inventory.json").read_text())
    assert inventory["expected"] == 16 and inventory["found"] == []
    assert "16 of 16 E1.S drives not found (0 NVMe drives here): the data volume is not built" in \
        "\n".join(first.warnings())


def test_host_nics_names_every_nic_by_pci_address_and_writes_the_front_end(lab_build, tmp_path, netns):
    """A GPU host whose NICs carry kernel names: the role writes a .link file per NIC (matched on its PCI path) and a
    .network file per front-end NIC (its /31 toward the RSW, one ECMP default route); a stand-in for udevd applies the
    .link names (systemd-udevd cannot run in a network namespace), and then the backend role finds be0..be7."""
    host = "z01-r001-h1"
    inventory = str(lab_build / "ansible/inventory.yml")
    v = {**h.variables(lab_build / "ansible/group_vars/gpu.yml"),
         **h.variables(lab_build / f"ansible/host_vars/{host}.json")}
    links = {n["pci"]: n["name"] for n in v["teton_nic_links"]}
    assert sorted(links.values()) == sorted([f"be{n}" for n in range(8)] + ["fe0", "fe1"])
    hns = netns(f"{h.unique()}-h1")
    kernel = {pci: f"enp{int(pci.split(':')[1], 16)}s0f{pci.split('.')[1]}" for pci in links}   # as udev names them
    for i, name in enumerate(kernel.values()):       # veths: this kernel has no dummy driver
        h.run("ip", "-n", hns, "link", "add", name, "type", "veth", "peer", "name", f"peer{i}")
    roots = tmp_path / "roots"
    root = h.make_root(roots / host)
    h.chroot_exe(roots, root, hns)
    _three_runs(tmp_path, ["host_nics"], host, inventory, roots)
    assert _links(root) == links                                   # a .link file per NIC, keyed on its PCI path
    link = (root / "etc/systemd/network/10-teton-be3.link").read_text()
    assert f"Path=pci-{next(p for p, n in links.items() if n == 'be3')}" in link and "Name=be3" in link
    fe = v["teton_frontend"]
    fe0 = (root / "etc/systemd/network/60-teton-fe0.network").read_text().splitlines()
    assert [ln for ln in fe0 if ln.startswith("Address=")] == [f"Address={a}" for a in fe[0]["addresses"]]
    assert [ln for ln in fe0 if ln.startswith(("Gateway=", "MultiPathRoute="))] == [
        f"MultiPathRoute={n['gateway4']}@{n['name']}" for n in fe]     # one default route, ECMP over fe0 and fe1
    fe1 = (root / "etc/systemd/network/60-teton-fe1.network").read_text().splitlines()
    assert f"Address={fe[1]['addresses'][0]}" in fe1 and not any(ln.startswith("[Route]") for ln in fe1)
    _apply_links(root, hns, kernel)
    for i in range(len(kernel)):                   # the far ends up: the NICs have carrier
        h.run("ip", "-n", hns, "link", "set", f"peer{i}", "up")
    names = {line.split(": ")[1].split("@")[0] for line in _ip(hns, "-o", "link", "show").splitlines()}
    assert set(links.values()) <= names and not set(kernel.values()) & names
    backend = h.play(_playbook(tmp_path, ["backend_nics"], host), [inventory], tmp_path / "run", limit=host,
                     roots=roots)
    assert backend.rc == 0, backend.stdout[-4000:]              # the names the build uses exist now
    assert v["teton_rails"][0]["addresses"][0] in _ip(hns, "addr", "show", "be0")


SM_KEY = "0x00c0ffee5eed0001"      # the SM_Key of this test, as teton's deploy passes it: TETON_SECRET_ib_sm_key
M_KEY = "0x00000000c0de0002"       # every port's M_Key: TETON_SECRET_ib_m_key


def test_opensm_role_installs_each_subnet_manager_instance_with_its_secret_resolved(lab_ib_build, lab_ib_fabric,
                                                                                    tmp_path):
    """Group subnet_manager: each instance's host gets its own conf from ib/ as opensm.conf (the SM_Key resolved from
    the environment, never logged nor shown in a diff), the shared files, and a unit on its HCA port, enabled; the
    packaged opensm.service (OpenSM on every port with default settings) masked."""
    from teton.targets.opensm.files import instance_files

    sm = lab_ib_fabric.subnet_manager
    inventory = str(lab_ib_build / "ansible/inventory.yml")
    groups = yaml.safe_load((lab_ib_build / "ansible/inventory.yml").read_text())["all"]["children"]
    confs = {inst.host: rel.split("/")[1] for rel, inst in zip(instance_files(sm), sm.instances, strict=True)}
    assert sorted(groups["subnet_manager"]["hosts"]) == sorted(confs) and len(confs) == 2
    roots = tmp_path / "roots"
    for host in confs:
        h.chroot_exe(roots, h.make_root(roots / host), None)
    secret = {"TETON_SECRET_ib_sm_key": SM_KEY, "TETON_SECRET_ib_m_key": M_KEY}
    extra = {"opensm_packages": []}          # a prepared root has no apt: the package is the one thing not applied

    def untouched() -> None:
        for host in confs:
            assert not (roots / host / "etc/opensm").exists() and not (roots / host / "etc/systemd").exists()

    runs = _three_runs(tmp_path, ["opensm"], "subnet_manager", inventory, roots, extra, untouched, secret)
    check, first, _ = runs
    assert any("Default=0x7fff" in str(d) for d in check.diffs())         # the partitions, shown as a diff
    for r in runs:                                                         # the secret: in no event, no output
        for key in (SM_KEY, M_KEY):
            assert key not in r.stdout and key not in json.dumps(r.events, default=str)
    build_ib = lab_ib_build / "ib"
    for inst in sm.instances:
        root, conf = roots / inst.host, confs[inst.host]
        v = h.variables(lab_ib_build / f"ansible/host_vars/{inst.host}.json")["teton_opensm"]
        assert (v["conf"], v["hca"], v["priority"]) == (conf, inst.hca, inst.priority)
        etc = root / "etc/opensm"
        text = (etc / "opensm.conf").read_text()
        assert text == (build_ib / conf).read_text().replace("TETON_SECRET_ib_sm_key", SM_KEY).replace(
            "TETON_SECRET_ib_m_key", M_KEY)
        lines = text.splitlines()
        assert f"sm_key {SM_KEY}" in lines and f"sm_priority {inst.priority}" in lines and f"m_key {M_KEY}" in lines
        assert f"guid {lab_ib_fabric.devices[inst.host].attrs['port_guids'][inst.hca]}" in lines
        assert (etc / "opensm.conf").stat().st_mode & 0o777 == 0o600
        for f in ("partitions.conf", "root_guids.conf", "node-name-map"):
            assert (etc / f).read_text() == (build_ib / f).read_text(), f
        assert sorted(p.name for p in etc.iterdir()) == ["node-name-map", "opensm.conf", "partitions.conf",
                                                         "root_guids.conf"]
        units = root / "etc/systemd/system"
        unit = f"opensm-{inst.hca}-1.service"
        body = (units / unit).read_text().splitlines()
        assert "ExecStart=/usr/sbin/opensm -F /etc/opensm/opensm.conf" in body and "WantedBy=multi-user.target" in body
        assert "ConditionPathExists=/sys/class/infiniband_mad/abi_version" in body
        assert any(line.startswith("Description=") and f"on {inst.hca} port 1 (sm_priority {inst.priority})" in line
                   for line in body)
        assert os.readlink(units / "multi-user.target.wants" / unit) == str(units / unit).removeprefix(str(root))
        assert os.readlink(units / "opensm.service") == "/dev/null"                        # masked
        assert (root / "var/log/opensm").is_dir()
    warnings = "\n".join(first.warnings())
    assert "OpenSM: not applied: opensm_packages is empty" in warnings
    assert "written and enabled, not started (systemd is not running here)" in warnings
    assert "no HCA mlx5_0 on this host" in warnings


@pytest.mark.parametrize("value", [None, "not-a-key", "0xfeedface\nsm_priority 0"])   # unset, not hex, a line more
def test_opensm_role_refuses_a_missing_or_malformed_sm_key_without_writing_or_showing_it(value, lab_ib_build,
                                                                                         lab_ib_fabric, tmp_path):
    host = lab_ib_fabric.subnet_manager.instances[0].host
    roots = tmp_path / "roots"
    root = h.make_root(roots / host)
    h.chroot_exe(roots, root, None)
    r = h.play(_playbook(tmp_path, ["opensm"], "subnet_manager"), [str(lab_ib_build / "ansible/inventory.yml")],
               tmp_path / "run", limit=host, roots=roots, extravars={"opensm_packages": []},
               envvars={"TETON_SECRET_ib_m_key": M_KEY, **({} if value is None else {"TETON_SECRET_ib_sm_key": value})})
    assert r.rc != 0
    why = "not set where Ansible runs" if value is None else "not an OpenSM key (0x and 1 to 16 hex digits)"
    assert f"opensm.conf references TETON_SECRET_ib_sm_key, {why}: nothing was written with it" in r.stdout
    assert value is None or value not in r.stdout
    assert not (root / "etc/opensm/opensm.conf").exists()


def test_lldpd_announces_the_host_as_its_switches_expect(lab_build, tmp_path):
    """The lldpd role writes what the switches' DEVICE_NEIGHBOR says they see: the host's name and each NIC's name
    as port id (ifname), every cabled Ethernet NIC and no other; its port descriptions name the cable."""
    host = "z01-r001-h1"
    roots = tmp_path / "roots"
    root = h.make_root(roots / host)
    h.chroot_exe(roots, root, None)
    _three_runs(tmp_path, ["lldpd"], host, str(lab_build / "ansible/inventory.yml"), roots)
    conf = (root / "etc/lldpd.d/teton.conf").read_text().splitlines()
    assert f"configure system hostname {host}" in conf and "configure lldp portidsubtype ifname" in conf
    pattern = next(line for line in conf if line.startswith("configure system interface pattern "))
    assert sorted(pattern.split()[-1].split(",")) == [f"be{n}" for n in range(8)] + ["fe0", "fe1"]
    rtsw = json.loads((lab_build / "devices/z01-r001-rtsw/config_db.json").read_text())["DEVICE_NEIGHBOR"]
    assert rtsw["Ethernet8"] == {"local_port": "Ethernet8", "name": host, "port": "be0"}
    assert 'configure ports be0 lldp portdescription "cable z01-r001-45-000 to z01-r001-rtsw eth2/1/1"' in conf
