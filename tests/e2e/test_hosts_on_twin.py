"""End to end: the lab's GPU hosts as the twin's host namespaces, their rails configured by the host playbooks for
real (ansible-runner, the build's inventory), with the twin's fabric up: the second run changes nothing, every NIC
reaches a host of another zone on its own rail, and `teton twin verify` is clean."""

from __future__ import annotations

import shutil
import subprocess
import time

import pytest
import yaml

from tests.helpers import LAB
from tests.hosts import harness as h

pytestmark = pytest.mark.root


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    """The twin of the lab as it is (PFC only).  Its DCQCN variant is not brought up again here (a twin and two
    playbook runs: about 100 s of the suite): the DCQCN twin's fabric is verified by tests/e2e/test_twin_lab.py, and
    the same two roles with the DCQCN build's variables run three times on a host namespace in
    tests/hosts/test_roles.py (`test_backend_nics_and_roce_qos_on_a_host_namespace[lab_dcqcn_build]`), which is what
    differs for a host: the FRR twin has no ECN to exercise."""
    from teton.twin import service

    spec = tmp_path_factory.mktemp("spec") / "lab.yaml"
    shutil.copy(LAB, spec)
    service.down(str(spec))
    report = service.up(str(spec))
    try:
        yield spec, report
    finally:
        service.down("lab")


def _ns(node: str) -> str:
    from teton.twin.plan import netns_name

    return f"{netns_name('lab', node)}"


def test_playbooks_configure_the_twins_hosts_and_the_fabric_verifies(twin, tmp_path):
    from teton.twin import service

    spec, report = twin
    build = service.state_dir("lab") / "build"
    hosts = sorted(yaml.safe_load((build / "ansible/inventory.yml").read_text())["all"]["children"]["gpu"]["hosts"])
    assert len(hosts) == 8 and report.hosts == 8 + 6 + 1           # and 6 storage servers, the Slurm controller
    # hand the hosts' rails to the playbooks: the twin's own rail addresses, rules and routes are removed first (the
    # front end stays as the twin set it: host_nics writes networkd files, applied by networkd on a real host)
    for host in hosts:
        ns = _ns(host)
        for fam in ("-4", "-6"):
            for line in h.run("ip", "-n", ns, fam, "rule", "show").stdout.splitlines():
                prio = line.split(":")[0]
                if prio not in ("0", "32766", "32767"):
                    h.run("ip", "-n", ns, fam, "rule", "del", "priority", prio)
        for n in range(8):
            h.run("ip", "-n", ns, "addr", "flush", "dev", f"be{n}", "scope", "global")
        for fam in ("-4", "-6"):
            for table in map(str, range(100, 132)):
                h.run("ip", "-n", ns, fam, "route", "flush", "table", table, check=False)
            for n in range(8):
                h.run("ip", "-n", ns, fam, "route", "flush", "table", "main", "dev", f"be{n}", check=False)
    assert not service.verify(str(spec)).ok                      # the hosts are unconfigured now
    roots = tmp_path / "roots"
    for host in hosts:
        h.make_root(roots / host)
        h.chroot_exe(roots, roots / host, _ns(host))
    play = tmp_path / "rails.yml"
    play.write_text(yaml.safe_dump([{"name": "Rails", "hosts": "gpu", "gather_facts": True,
                                     "gather_subset": ["min"], "roles": ["backend_nics", "roce_qos"]}]))
    t0 = time.monotonic()
    first = h.play(play, [str(build / "ansible/inventory.yml")], tmp_path / "run", roots=roots)
    t_first = time.monotonic() - t0
    assert first.rc == 0, first.stdout[-4000:]
    assert first.total("changed") > 0
    t1 = time.monotonic()
    second = h.play(play, [str(build / "ansible/inventory.yml")], tmp_path / "run", roots=roots)
    t_second = time.monotonic() - t1
    assert second.rc == 0 and second.total("changed") == 0, second.changed_tasks()
    # RDMA-free reachability over each rail from the host side: NIC n of z01-r001-h1 to NIC n of z02-r002-h2
    src_vars = h.variables(build / "ansible/host_vars/z01-r001-h1.json")
    dst_vars = h.variables(build / "ansible/host_vars/z02-r002-h2.json")
    for a, b in zip(src_vars["teton_rails"], dst_vars["teton_rails"], strict=True):
        for fam in (0, 1):
            src, dst = a["addresses"][fam].split("/")[0], b["addresses"][fam].split("/")[0]
            route = h.run("ip", "-n", _ns("z01-r001-h1"), "route", "get", dst, "from", src).stdout
            assert f"dev {a['name']}" in route, route
            ping = subprocess.run(["ip", "netns", "exec", _ns("z01-r001-h1"), "ping", "-n", "-q", "-c", "1",
                                   "-W", "2", "-I", src, dst], capture_output=True, text=True, check=False)
            assert ping.returncode == 0, (a["name"], dst, ping.stdout)
    t2 = time.monotonic()
    verify = service.verify(str(spec))
    assert verify.ok, verify
    print(f"\nhosts on the twin: first run {t_first:.1f} s, second run (changed=0) {t_second:.1f} s, "
          f"verify {time.monotonic() - t2:.1f} s")
