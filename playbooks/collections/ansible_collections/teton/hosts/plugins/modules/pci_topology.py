#!/usr/bin/python
"""Facts: the PCI bus ids of the host's GPUs (by minor number) and RDMA devices (by name)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: pci_topology
short_description: PCI bus ids of GPUs and RDMA devices
description:
  - GPUs from /proc/driver/nvidia/gpus/<bus id>/information ("Device Minor"), RDMA devices from the PCI device
    behind /sys/class/infiniband/<name>. Empty maps on a host without them. Changes nothing.
options: {}
author: teton
"""

import glob
import os
import re

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    gpus, rdma = {}, {}
    for info in sorted(glob.glob("/proc/driver/nvidia/gpus/*/information")):
        with open(info, encoding="utf-8") as f:
            m = re.search(r"Device Minor:\s*(\d+)", f.read())
        if m:
            gpus[int(m.group(1))] = os.path.basename(os.path.dirname(info)).lower()
    for dev in sorted(glob.glob("/sys/class/infiniband/*")):
        target = os.path.realpath(os.path.join(dev, "device"))
        rdma[os.path.basename(dev)] = os.path.basename(target).lower()
    module.exit_json(changed=False, gpus=gpus, rdma=rdma)


if __name__ == "__main__":
    main()
