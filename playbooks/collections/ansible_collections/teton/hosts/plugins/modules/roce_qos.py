#!/usr/bin/python
"""RoCE QoS on the backend NICs, agreeing with the switches: trust DSCP, PFC on the lossless priority only, the DSCP map,
RDMA-CM's ToS, DCQCN/ECN on or off, the CNP's DSCP and priority, and PFC-storm prevention.  What a host's tools cannot
set is reported, setting by setting; never silently skipped."""

from __future__ import annotations

DOCUMENTATION = r"""
module: roce_qos
short_description: RoCE QoS on the NICs with the vendor tools, reporting what cannot be applied
description:
  - "Uses mlnx_qos (trust, PFC, DSCP to priority), cma_roce_tos or the rdma_cm configfs (RDMA-CM ToS), the mlx5
    ECN sysfs (roce_np/roce_rp enable per priority, cnp_dscp, cnp_802p_prio) and the pfc-prevention-tout tunable of
    ethtool."
  - "Reads each value first and changes only what differs. A tool or file that is missing is a not-applied item,
    a warning, or a failure with on_missing=fail."
options:
  interfaces: {description: "NICs with their name; an rdma_device when the build knows it (otherwise it is read from
               /sys/class/net/<name>/device/infiniband).", type: list, elements: dict, required: true}
  pfc_priorities: {description: Priorities with PFC (all others off)., type: list, elements: int, required: true}
  dscp_to_priority: {description: Priority of DSCP 0..63., type: list, elements: int, required: true}
  lossless_priority: {description: The RoCE priority (ECN applies to it)., type: int, required: true}
  roce_tos: {description: "RDMA-CM default ToS.", type: int, required: true}
  cnp_dscp: {description: DSCP of congestion notifications., type: int, required: true}
  cnp_priority: {description: Priority of congestion notifications., type: int, required: true}
  ecn: {description: DCQCN (ECN reaction and notification) on the lossless priority., type: bool, required: true}
  pfc_storm_ms: {description: PFC-storm prevention timeout (none to leave it)., type: int}
  on_missing: {description: What to do about settings that cannot be applied., type: str, choices: [warn, fail],
               default: warn}
author: teton
"""

import os
import re

from ansible.module_utils.basic import AnsibleModule


class Run:
    def __init__(self, module):
        self.module = module
        self.before, self.after, self.changed, self.missing = [], [], [], {}

    def miss(self, setting, name, why):
        self.missing.setdefault((setting, why), []).append(name)

    def record(self, name, setting, have, want, apply):
        self.before.append(f"{name}: {setting} = {have}")
        self.after.append(f"{name}: {setting} = {want}")
        if str(have) != str(want):
            self.changed.append(f"{name}: {setting}")
            if not self.module.check_mode:
                apply()

    def cmd(self, args):
        rc, out, err = self.module.run_command(args)
        if rc != 0:
            self.module.fail_json(msg=f"{' '.join(args)} failed (rc {rc}): {(err or out).strip()}")
        return out


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().strip()


def _write(path, value):
    with open(path, "w", encoding="utf-8") as f:
        f.write(str(value))


def mlnx_state(text):
    """(trust, PFC enabled per priority, {dscp: priority}) from `mlnx_qos -i IF`."""
    trust = re.search(r"Priority trust state:\s*(\w+)", text)
    pfc = re.search(r"^\s*enabled\s+((?:\d\s+){7}\d)", text, re.M)
    dscp = {}
    for prio, values in re.findall(r"prio:\s*(\d)\s+dscp:\s*([\d,\s]+)", text):
        for d in re.findall(r"\d+", values):
            dscp[int(d)] = int(prio)
    return (trust.group(1) if trust else None, [int(x) for x in pfc.group(1).split()] if pfc else None, dscp)


def qos_with_mlnx_qos(run, tool, name, p):
    trust, pfc, dscp = mlnx_state(run.cmd([tool, "-i", name]))
    run.record(name, "trust", trust, "dscp", lambda: run.cmd([tool, "-i", name, "--trust", "dscp"]))
    want_pfc = [1 if i in p["pfc_priorities"] else 0 for i in range(8)]
    vector = ",".join(str(x) for x in want_pfc)
    run.record(name, "pfc", pfc, want_pfc, lambda: run.cmd([tool, "-i", name, "--pfc", vector]))
    for d, prio in enumerate(p["dscp_to_priority"]):
        run.record(name, f"dscp {d} -> priority", dscp.get(d), prio,
                   lambda d=d, prio=prio: run.cmd([tool, "-i", name, "--dscp2prio", f"set,{d},{prio}"]))


def rdma_device(name):
    """The RDMA device on NIC `name`'s PCI function (the front-end NICs shift mlx5_N: never a numbering)."""
    try:
        entries = sorted(os.listdir(f"/sys/class/net/{name}/device/infiniband"))
    except OSError:
        return None
    return entries[0] if entries else None


def roce_tos(run, name, rdma, tos):
    path = f"/sys/kernel/config/rdma_cm/{rdma}/ports/1/default_roce_tos"
    tool = run.module.get_bin_path("cma_roce_tos")
    if tool:
        have = _read(path) if os.path.exists(path) else None
        run.record(name, "roce_tos", have, tos, lambda: run.cmd([tool, "-d", rdma, "-t", str(tos)]))
    elif os.path.isdir(f"/sys/kernel/config/rdma_cm/{rdma}") or os.path.isdir("/sys/kernel/config/rdma_cm"):
        def apply():
            os.makedirs(os.path.dirname(os.path.dirname(os.path.dirname(path))), exist_ok=True)
            _write(path, tos)
        run.record(name, "roce_tos", _read(path) if os.path.exists(path) else None, tos, apply)
    else:
        run.miss(f"RDMA-CM ToS {tos}", name, "neither cma_roce_tos nor the rdma_cm configfs is here")


def ecn(run, name, p):
    base = f"/sys/class/net/{name}/ecn"
    if not os.path.isdir(base):
        run.miss("DCQCN/ECN and the CNP's DSCP and priority", name, f"{base} does not exist (not an mlx5 NIC with "
                 "the ECN sysfs)")
        return
    prio = p["lossless_priority"]
    on = "1" if p["ecn"] else "0"
    for side in ("roce_np", "roce_rp"):
        path = f"{base}/{side}/enable/{prio}"
        run.record(name, f"{side} enable {prio}", _read(path), on, lambda path=path: _write(path, on))
    for leaf, value in (("cnp_dscp", p["cnp_dscp"]), ("cnp_802p_prio", p["cnp_priority"])):
        path = f"{base}/roce_np/{leaf}"
        run.record(name, leaf, _read(path), value, lambda path=path, value=value: _write(path, value))


def storm(run, name, ms):
    tool = run.module.get_bin_path("ethtool")
    if not tool:
        run.miss(f"PFC-storm prevention {ms} ms", name, "ethtool not found")
        return
    rc, out, _ = run.module.run_command([tool, "--get-tunable", name, "pfc-prevention-tout"])
    m = re.search(r"pfc-prevention-tout:\s*(\d+)", out)
    if rc != 0 or not m:
        run.miss(f"PFC-storm prevention {ms} ms", name, "the NIC has no pfc-prevention-tout tunable")
        return
    run.record(name, "pfc-prevention-tout", int(m.group(1)), ms,
               lambda: run.cmd([tool, "--set-tunable", name, "pfc-prevention-tout", str(ms)]))


def main():
    module = AnsibleModule(argument_spec={
        "interfaces": {"type": "list", "elements": "dict", "required": True},
        "pfc_priorities": {"type": "list", "elements": "int", "required": True},
        "dscp_to_priority": {"type": "list", "elements": "int", "required": True},
        "lossless_priority": {"type": "int", "required": True},
        "roce_tos": {"type": "int", "required": True},
        "cnp_dscp": {"type": "int", "required": True},
        "cnp_priority": {"type": "int", "required": True},
        "ecn": {"type": "bool", "required": True},
        "pfc_storm_ms": {"type": "int"},
        "on_missing": {"type": "str", "choices": ["warn", "fail"], "default": "warn"},
    }, supports_check_mode=True)
    p = module.params
    if len(p["dscp_to_priority"]) != 64:
        module.fail_json(msg=f"dscp_to_priority has {len(p['dscp_to_priority'])} entries, not 64")
    run = Run(module)
    tool = module.get_bin_path("mlnx_qos")
    for nic in p["interfaces"]:
        name = nic["name"]
        rdma = nic.get("rdma_device") or rdma_device(name)
        if not os.path.isdir(f"/sys/class/net/{name}"):
            module.fail_json(msg=f"no such interface on this host: {name} (the build says it has it)")
        if tool:
            qos_with_mlnx_qos(run, tool, name, p)
        else:
            run.miss(f"trust dscp, PFC on priority {','.join(map(str, p['pfc_priorities']))} only, the DSCP map "
                     f"(RoCE DSCP -> {p['lossless_priority']}, CNP DSCP {p['cnp_dscp']} -> {p['cnp_priority']})",
                     name, "mlnx_qos not found")
        if rdma:
            roce_tos(run, name, rdma, p["roce_tos"])
        else:
            run.miss(f"RDMA-CM ToS {p['roce_tos']}", name, f"no RDMA device under /sys/class/net/{name}/device/"
                     "infiniband")
        ecn(run, name, p)
        if p["pfc_storm_ms"] is not None:
            storm(run, name, p["pfc_storm_ms"])
    not_applied = [f"{setting} on {', '.join(names)}: {why}" for (setting, why), names in run.missing.items()]
    if not_applied and p["on_missing"] == "fail":
        module.fail_json(msg="RoCE QoS not applied: " + "; ".join(not_applied), not_applied=not_applied)
    for item in not_applied:
        module.warn(f"RoCE QoS not applied: {item}")
    module.exit_json(changed=bool(run.changed), set=run.changed, not_applied=not_applied,
                     diff={"before": "\n".join(run.before) + "\n", "after": "\n".join(run.after) + "\n"})


if __name__ == "__main__":
    main()
