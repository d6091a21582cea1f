#!/usr/bin/python
"""Facts: the RDMA device of each named network interface, read from /sys/class/net/<nic>/device/infiniband.

A RoCE rail's RDMA device is never derived from a numbering: the front-end ConnectX NICs are RDMA devices too and
enumerate in the same PCI order, so mlx5_N is not rail N.  The kernel says which RDMA device sits on a NIC's PCI
function; that is what this reads."""

from __future__ import annotations

DOCUMENTATION = r"""
module: rdma_devices
short_description: The RDMA device behind each network interface
description:
  - "For each interface, the entry of /sys/class/net/<interface>/device/infiniband (the RDMA device on the same PCI
    function, e.g. mlx5_2). An interface without one is listed in missing. Changes nothing."
options:
  interfaces: {description: Interface names (be0 ...)., type: list, elements: str, required: true}
  sysfs: {description: Where sysfs is mounted (a test points it at a prepared tree)., type: path, default: /sys}
author: teton
"""

RETURN = r"""
devices: {description: "{interface: RDMA device}.", returned: always, type: dict}
missing: {description: Interfaces without an RDMA device., returned: always, type: list}
"""

import os

from ansible.module_utils.basic import AnsibleModule


def rdma_device(sysfs, name):
    """The RDMA device on interface `name`'s PCI function, None when it has none."""
    where = os.path.join(sysfs, "class", "net", name, "device", "infiniband")
    try:
        entries = sorted(os.listdir(where))
    except OSError:
        return None
    return entries[0] if entries else None


def main():
    module = AnsibleModule(argument_spec={
        "interfaces": {"type": "list", "elements": "str", "required": True},
        "sysfs": {"type": "path", "default": "/sys"},
    }, supports_check_mode=True)
    devices, missing = {}, []
    for name in module.params["interfaces"]:
        dev = rdma_device(module.params["sysfs"], name)
        if dev is None:
            missing.append(name)
        else:
            devices[name] = dev
    module.exit_json(changed=False, devices=devices, missing=missing)


if __name__ == "__main__":
    main()
