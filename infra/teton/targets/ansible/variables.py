"""The Ansible variables of every host, spelled from the Fabric: its devices, their host plans and the shared intents.

Nothing is decided here.  The QoS values are the device's own `qos` (the very object the switch targets spell), the
rails and their routing tables the device's `host` plan, the settings the Fabric's `hosts`.  Values every host of a
group shares go to that group's file (`group_vars/<group>.yml`), the rest to `host_vars/<host>.yml`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from teton.fabric.hostplan import GpuHostPlan, HostSettings, NfsAssignment, NicLink, ServicePlan, StoragePlan
from teton.fabric.intent import Qos
from teton.fabric.model import Device, Fabric, Interface
from teton.fabric.neighbours import expected
from teton.fabric.pkeys import DEFAULT_NAME, DEFAULT_PKEY, PkeyPartition
from teton.fabric.roles import server_link_kinds
from teton.fabric.subnet import SubnetManager

Vars = dict[str, Any]
SLURM_FILES = "{{ inventory_dir }}/../slurm"   # the slurm target's folder of the same build
OPENSM_FILES = "{{ inventory_dir }}/../ib"     # the opensm target's folder of the same build
SM_PORT = 1                                    # the HCA port a subnet manager binds (the port GUIDs are port 1's)
QPS_PER_CONNECTION = 16                        # NCCL_IB_QPS_PER_CONNECTION when the Fabric carries no hashing policy


def group_name(text: str) -> str:
    """An Ansible group name (letters, digits and '_'): 'z01-r001' -> 'z01_r001'."""
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


def qos_vars(q: Qos, roce_tos: int) -> Vars:
    return {"trust": "dscp", "lossless_priority": q.lossless_priority, "pfc_priorities": list(q.pfc_priorities),
            "roce_dscp": q.roce_dscp, "roce_tos": roce_tos, "cnp_dscp": q.cnp_dscp, "cnp_priority": q.cnp_priority,
            "control_dscp": q.control_dscp, "control_priority": q.control_priority, "control_tos": q.control_tos,
            "ecn": q.ecn is not None,
            "pfc_watchdog_ms": q.watchdog.detection_ms if q.watchdog else None,
            "dscp_to_priority": list(q.dscp_to_tc)}


def _qps(s: HostSettings, device: Device) -> int:
    """Flows per GPU pair: the NCCL intent's, else the backend's hashing policy (the ECMP entropy the switches rely
    on)."""
    if s.nccl.qps_per_connection is not None:
        return s.nccl.qps_per_connection
    return device.policy.hashing.qps_per_connection if device.policy is not None else QPS_PER_CONNECTION


def _gid_selection(device: Device) -> Vars:
    """What NCCL picks the RoCE GID by at run time (NCCL_IB_ROCE_VERSION_NUM, NCCL_IB_ADDR_FAMILY, NCCL_IB_ADDR_RANGE:
    the rails' family and the backend's supernet) and NCCL_IB_FIFO_TC, the ToS of its clear-to-send messages."""
    plan = device.host
    nets = (plan.supernets4 or plan.supernets6) if isinstance(plan, GpuHostPlan) else ()
    out: Vars = {"roce_version": 2, "addr_family": "AF_INET6" if nets and ":" in nets[0] else "AF_INET",
                 "addr_range": nets[0] if nets else None}
    if device.qos is not None:
        out["fifo_tc"] = device.qos.control_tos
    return out


def nccl_vars(s: HostSettings, device: Device, pkey: PkeyPartition | None = None) -> Vars:
    """NCCL's settings on a GPU host; over InfiniBand the P_Key its jobs use (`pkey`, the host's partition; None: the
    default partition's) and its index in the HCAs' tables (NCCL_IB_PKEY)."""
    n = s.nccl
    out: Vars = {"transport": n.transport, "ib_timeout": n.ib_timeout, "qps_per_connection": _qps(s, device),
                 "debug": n.debug, "debug_subsys": list(n.debug_subsys), "trace_buffer_size": n.trace_buffer_size,
                 "dump_on_timeout": n.dump_on_timeout, "dump_dir": n.dump_dir}
    if n.transport == "infiniband":
        p = pkey or PkeyPartition(DEFAULT_NAME, DEFAULT_PKEY, 0, ())
        out.update(service_level=n.service_level, adaptive_routing=n.adaptive_routing, partition=p.name,
                   pkey=p.table_value, pkey_index=p.pkey_index)
    else:
        out.update(gid_index=n.gid_index, ib_tc=n.roce_tos, **_gid_selection(device))
    return out


def mounts_vars(s: HostSettings, kind: str, assigned: Iterable[NfsAssignment] = ()) -> Vars:
    """The shares a host of `kind` (gpu, service) mounts: a Tectonic namespace only where the spec names its client
    (Meta has not published one: rule tectonic-client); an NFS share from the server its plan assigns it
    (`assigned`), else its failover address."""
    servers = {a.mount_point: a.server for a in assigned}
    return {"tectonic": [{"mount_point": m.mount_point, "namespace": m.namespace, "options": list(m.options),
                          "package": m.package, "endpoints": list(m.endpoints)}
                         for m in s.tectonic if kind in m.mounted_by and m.package],
            "nfs": [{"name": m.name, "mount_point": m.mount_point, "export": m.export,
                     "server": servers.get(m.mount_point, m.failover), "options": list(m.options)}
                    for m in s.nfs if kind in m.mounted_by]}


def links_vars(links: Iterable[NicLink]) -> list[Vars]:
    return [{"name": n.name, "pci": n.pci} for n in links]


def scheduler_vars(s: HostSettings) -> Vars:
    c = s.scheduler
    return {"kind": c.kind, "cluster": c.cluster, "controller": c.controller,
            "controller_address": c.controller_address, "partition": c.partition,
            "slurmctld_port": c.slurmctld_port, "slurmd_port": c.slurmd_port,
            "health_check_interval_s": c.health_check_interval_s}


def _addresses(i: Interface) -> list[str]:
    return [c for c in (i.ipv4, i.ipv6) if c]


def _nic(i: Interface) -> Vars:
    return {"name": i.name, "mtu": i.mtu, "addresses": _addresses(i), "gateway4": i.peer_ipv4,
            "gateway6": i.peer_ipv6}


def frontend_vars(device: Device) -> list[Vars]:
    """The host's front-end NICs: addresses towards its RSW, the RSW's end as gateway (ECMP over all of them)."""
    return [_nic(i) for i in device.interfaces if i.kind in server_link_kinds("frontend")]


def ansible_host(device: Device) -> str | None:
    """The address Ansible reaches a host at: its first front-end address (the in-band management path)."""
    for i in device.interfaces:
        if i.kind in server_link_kinds("frontend"):
            for c in _addresses(i):
                return c.split("/", 1)[0]
    return None


def _placement(device: Device, role: str) -> Vars:
    out: Vars = {"teton_device": device.name, "teton_role": role, "teton_rack": device.rack}
    if device.zone is not None:
        out["teton_zone"] = device.zone
    address = ansible_host(device)
    if address is not None:
        out["ansible_host"] = address
    return out


def gpu_host(device: Device, s: HostSettings, pkey: PkeyPartition | None = None) -> tuple[Vars, Vars]:
    """(variables only this host has, variables it may share with its group); `pkey`: its InfiniBand partition."""
    plan = device.host
    assert isinstance(plan, GpuHostPlan), f"{device.name}: a GPU host has a host plan"
    ifaces = {i.name: i for i in device.interfaces}
    rails = []
    for n in plan.nics:
        i = ifaces[n.name]
        rail: Vars = {"name": n.name, "rail": n.rail, "gpu": n.gpu, "pcie_switch": n.pcie_switch, "numa": n.numa,
                      "mtu": i.mtu, "switch": i.peer, "switch_port": i.peer_port}
        if n.rdma_device is not None:   # an HCA; a RoCE NIC's RDMA device is read on the host
            rail["rdma_device"] = n.rdma_device
        if i.kind != "host-leaf":       # an Ethernet rail: its addresses and source routing (an HCA has a LID)
            rail.update(table=n.table, rule_priority=n.rule_priority, main_metric=n.main_metric,
                        addresses=_addresses(i),
                        gateway4=i.peer_ipv4, gateway6=i.peer_ipv6)
        rails.append(rail)
    own = {**_placement(device, "gpu"), "teton_rails": rails, "teton_socket_ifnames": list(plan.socket_ifnames),
           "teton_frontend": frontend_vars(device)}
    shared: Vars = {"teton_network": {"renderer": s.renderer, "lldp": s.lldp},
                    "teton_nccl": nccl_vars(s, device, pkey), "teton_storage_mounts": mounts_vars(s, "gpu", plan.nfs),
                    "teton_nic_links": links_vars(plan.links)}
    if plan.supernets4 or plan.supernets6:
        shared["teton_supernets"] = [*plan.supernets4, *plan.supernets6]
    if device.qos is not None:
        shared["teton_qos"] = qos_vars(device.qos, s.nccl.roce_tos)
    return own, shared


def storage_server(device: Device, s: HostSettings) -> tuple[Vars, Vars]:
    plan = device.host
    assert isinstance(plan, StoragePlan), f"{device.name}: a storage server has a storage plan"
    storage: Vars = {"role": plan.role, "filesystem": plan.filesystem,
                     "drives": [{"index": d.ordinal, **({"mount_point": d.mount_point} if d.mount_point else {})}
                                for d in plan.drives],
                     "mount_options": list(plan.mount_options), "format_drives": plan.format_drives,
                     "exports": [{"name": e.name, "path": e.path, "pseudo": e.pseudo, "access": e.access,
                                  "clients": list(e.clients)} for e in plan.exports]}
    if plan.volume is not None:
        v = plan.volume
        storage["volume"] = {"layout": v.layout, "chunk_kib": v.chunk_kib, "device": v.device,
                             "mount_point": v.mount_point}
    own = {**_placement(device, "storage"), "teton_frontend": frontend_vars(device), "teton_storage": storage}
    return own, {"teton_network": {"renderer": s.renderer, "lldp": s.lldp}, "teton_nic_links": links_vars(plan.links)}


def service_host(device: Device, s: HostSettings) -> tuple[Vars, Vars]:
    plan = device.host
    assert isinstance(plan, ServicePlan), f"{device.name}: a service host has a service plan"
    own = {**_placement(device, "service"), "teton_service_role": plan.role, "teton_frontend": frontend_vars(device)}
    return own, {"teton_network": {"renderer": s.renderer, "lldp": s.lldp}, "teton_nic_links": links_vars(plan.links),
                 "teton_storage_mounts": mounts_vars(s, "service", plan.nfs)}


def lldp_vars(fabric: Fabric, device: Device) -> Vars:
    """What the lldpd role announces: the name the switches expect, and each cabled Ethernet NIC's far end (as
    that switch announces itself) and cable id (`teton.fabric.neighbours`)."""
    return {"system": device.name, "interfaces": [{"name": n.port, "neighbour": f"{n.system} {n.port_id}",
                                                   "cable": n.cable} for n in expected(fabric, device)]}


def split_shared(hosts: Iterable[str], shared: Callable[[str], Vars]) -> tuple[Vars, dict[str, Vars]]:
    """(the group's variables: those equal on every host, the rest per host)."""
    names = list(hosts)
    values = {h: shared(h) for h in names}
    keys = sorted({k for v in values.values() for k in v})
    group: Vars = {}
    per_host: dict[str, Vars] = {h: {} for h in names}
    for k in keys:
        seen = [values[h].get(k, _MISSING) for h in names]
        if all(x is not _MISSING for x in seen) and all(x == seen[0] for x in seen[1:]):
            group[k] = seen[0]
        else:
            for h, x in zip(names, seen, strict=True):
                if x is not _MISSING:
                    per_host[h][k] = x
    return group, per_host


_MISSING = object()


def opensm_conf_name(n: int) -> str:
    """The file under `ib/` of instance `n` (0: the master), as the opensm target names it (target packages import
    nothing of each other; tests/hosts/test_inventory.py checks the two agree)."""
    return "opensm.conf" if n == 0 else f"opensm-standby{n}.conf"


def opensm_vars(fabric: Fabric, sm: SubnetManager) -> dict[str, Vars]:
    """{host: its `teton_opensm`}: the instance of the subnet manager it runs (its conf under `ib/`, the HCA port it
    binds, its priority), master first.  A host runs one instance (`AnsibleTarget.check` refuses two)."""
    out: dict[str, Vars] = {}
    for n, inst in enumerate(sm.instances):
        out.setdefault(inst.host, {
            "conf": opensm_conf_name(n), "role": "master" if n == 0 else "standby", "hca": inst.hca,
            "port": SM_PORT, "port_guid": fabric.devices[inst.host].attrs["port_guids"][inst.hca],
            "priority": inst.priority, "config_dir": sm.config_dir, "log_dir": sm.log_dir})
    return out


def all_vars(fabric: Fabric, s: HostSettings) -> Vars:
    out: Vars = {"teton_cluster": fabric.name, "teton_backend": fabric.backend, "teton_scheduler": scheduler_vars(s),
                 "teton_slurm_files": SLURM_FILES}
    if fabric.subnet_manager is not None:
        out["teton_opensm_files"] = OPENSM_FILES
    return out
