"""The rendered unit tests of the hosts' and the monitoring's own alerts (storage mounts, DCGM's XID and row-remap
fields, GPUs missing, exporters down, the design not loaded), and every test file of a build (`test_files`)."""

from __future__ import annotations

from teton.fabric.intent import MonitoringIntent
from teton.fabric.model import Fabric
from teton.targets.monitoring import unittests as net
from teton.targets.monitoring.testkit import Group, pick
from teton.targets.monitoring.text import number

Found = net.Found


def mounts(fabric: Fabric, m: MonitoringIntent, found: Found) -> Group | None:
    by_host = net.by_label(found, "teton_designed_mount", "device")
    if not by_host:
        return None
    g = Group(fabric, m, "mounts: a designed mount absent or erroring fires TetonStorageMountDown, a healthy one "
                         "does not")
    steps = m.mount_for_s // g.step + 1
    hosts = pick(sorted(by_host), m.test_sample)
    fired = []
    for j, host in enumerate(hosts):
        for k, s in enumerate(by_host[host]):
            error, absent = k == 0 and j % 3 == 1, k == 0 and j % 3 == 2
            if not absent:
                g.observed(fabric.devices[host], "node", "node_filesystem_device_error", {
                    "mountpoint": s.get("mountpoint"), "fs_device": f"{s.get('server')}:{s.get('mountpoint')}",
                    "fstype": "nfs4"}, f"{1 if error else 0}x{steps}")
            if error or absent:
                fired.append((dict(s.labels), ""))
    g.designed([*found["teton_designed_build_info"], *(s for h in hosts for s in by_host[h])], steps)
    g.expect("TetonStorageMountDown", m.mount_for_s, fired)
    return g


def gpus(fabric: Fabric, m: MonitoringIntent, found: Found) -> Group | None:
    designed = {s.get("device"): s for s in found["teton_designed_gpus"]}
    if not designed:
        return None
    g = Group(fabric, m, "gpus: XID 79, a pending or failed row remap, a GPU or DCGM missing fire; XID 0 and a "
                         "full set of GPUs do not")
    last = max(m.exporter_down_for_s, m.row_remap_for_s)
    steps = last // g.step + 1
    hosts = pick(sorted(designed), max(3, m.test_sample))
    fired: dict[str, list[tuple[dict[str, str], str]]] = {
        "TetonGpuXid": [], "TetonGpuRowRemapPending": [], "TetonGpuRowRemapFailed": [], "TetonGpuMissing": []}
    for j, host in enumerate(hosts):
        count, d = int(designed[host].value), fabric.devices[host]
        if j == len(hosts) - 1 and len(hosts) >= 3:          # no DCGM at all
            fired["TetonGpuMissing"].append(({"device": host}, number(count)))
            continue
        report = count - 1 if j % 2 == 1 and count > 1 else count
        if report < count:
            fired["TetonGpuMissing"].append(({"device": host}, number(count)))
        for gpu in range(report):
            labels: dict[str, str | int | None] = {
                "gpu": gpu, "UUID": f"GPU-{host}-{gpu}", "gpu_device": f"nvidia{gpu}", "Hostname": host,
                "modelName": str(d.attrs.get("gpu_model", ""))}
            values = {"DCGM_FI_DEV_GPU_TEMP": (40, ""),
                      "DCGM_FI_DEV_XID_ERRORS": (79 if j % 2 == 0 and gpu == j % report else 0, "TetonGpuXid"),
                      "DCGM_FI_DEV_ROW_REMAP_PENDING": (1 if j % 3 == 1 and gpu == 0 else 0,
                                                        "TetonGpuRowRemapPending"),
                      "DCGM_FI_DEV_ROW_REMAP_FAILURE": (1 if j % 3 == 2 and gpu == report - 1 else 0,
                                                        "TetonGpuRowRemapFailed")}
            for name, (value, alert) in values.items():
                g.observed(d, "dcgm", name, labels, f"{value}x{steps}")
                if value and alert:
                    fired[alert].append(({"device": host, "gpu": str(gpu)}, number(value)))
    g.designed([*found["teton_designed_build_info"], *(designed[h] for h in hosts)], steps)
    g.expect("TetonGpuXid", 0, fired["TetonGpuXid"])
    g.expect("TetonGpuRowRemapFailed", 0, fired["TetonGpuRowRemapFailed"])
    g.expect("TetonGpuRowRemapPending", m.row_remap_for_s, fired["TetonGpuRowRemapPending"])
    g.expect("TetonGpuMissing", m.exporter_down_for_s, fired["TetonGpuMissing"])
    return g


def meta(fabric: Fabric, m: MonitoringIntent, found: Found) -> list[Group]:
    g = Group(fabric, m, "exporters: a scrape that fails fires TetonExporterDown, one that answers does not; with "
                         "the design loaded, TetonDesignNotLoaded does not fire")
    steps = max(m.exporter_down_for_s, m.design_missing_for_s) // g.step + 1
    names = pick(sorted(n for n, d in fabric.devices.items() if d.nos in (None, "sonic")), 2 * m.test_sample)
    fired = []
    for j, name in enumerate(names):
        d = fabric.devices[name]
        g.observed(d, "node", "up", {}, f"{0 if j % 2 == 0 else 1}x{steps}")
        if j % 2 == 0:
            fired.append(({"device": name, **g.instance(d, "node")}, ""))
    g.designed(found["teton_designed_build_info"], steps)
    g.expect("TetonExporterDown", m.exporter_down_for_s, fired)
    g.expect("TetonDesignNotLoaded", m.design_missing_for_s, [], before=False)
    bare = Group(fabric, m, "design: no designed series fires TetonDesignNotLoaded")
    if names:
        bare.observed(fabric.devices[names[-1]], "node", "up", {}, f"1x{steps}")
    bare.expect("TetonDesignNotLoaded", m.design_missing_for_s, [({}, "")])
    return [g, bare]


def test_files(fabric: Fabric, m: MonitoringIntent, found: Found) -> dict[str, str]:
    """{file name under monitoring/tests/: text}: the network's links, sessions, RoCE counters, the hosts, and the
    monitoring itself; a group with nothing to sample in this design (no buffers, no ECN ...) is left out."""
    net._SAMPLES = {}
    try:
        return _test_files(fabric, m, found)
    finally:
        net._SAMPLES = None


def _test_files(fabric: Fabric, m: MonitoringIntent, found: Found) -> dict[str, str]:
    files: dict[str, tuple[list[Group | None], str]] = {
        "links.test.yml": ([net.links(fabric, m, found), net.counters(fabric, m, found, "TetonLinkFlapping"),
                            net.counters(fabric, m, found, "TetonPortErrors"), net.optics(fabric, m, found)],
                           "links, flaps, port errors and optics of sampled cables"),
        "bgp.test.yml": ([net.bgp(fabric, m, found)], "the BGP sessions of sampled cables"),
        "roce.test.yml": ([net.pfc_storms(fabric, m, found), net.pfc_pause(fabric, m, found),
                           net.buffers(fabric, m, found), net.ecn(fabric, m, found, True),
                           net.ecn(fabric, m, found, False)], "PFC, buffers and ECN of sampled backend switches"),
        "hosts.test.yml": ([mounts(fabric, m, found), gpus(fabric, m, found)], "storage mounts and GPUs of hosts"),
        "meta.test.yml": ([*meta(fabric, m, found)], "exporters and the design itself"),
    }
    out = {}
    for name, (groups, what) in files.items():
        kept = [g for g in groups if g is not None]
        if kept:
            out[name] = net.test_file(m, kept, what)
    return out
