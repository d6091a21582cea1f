#!/usr/bin/python
"""Facts: the NVMe drives of a storage server in PCI order (drive n is the n-th controller by PCI address)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: nvme_inventory
short_description: NVMe drives in PCI order
description:
  - Reads /sys/class/nvme (model, serial, firmware, PCI address) and the size of each controller's first namespace.
    Drive n is the n-th controller by PCI address, named by its stable /dev/disk/by-path link. Changes nothing.
options: {}
author: teton
"""

import glob
import os

from ansible.module_utils.basic import AnsibleModule


def _read(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return ""


def main():
    module = AnsibleModule(argument_spec={}, supports_check_mode=True)
    drives = []
    for ctrl in glob.glob("/sys/class/nvme/nvme*"):
        name = os.path.basename(ctrl)
        address = _read(f"{ctrl}/address") or os.path.basename(os.path.realpath(f"{ctrl}/device"))
        namespace = f"{name}n1"
        sectors = _read(f"/sys/block/{namespace}/size")
        drives.append({"controller": name, "pci": address, "model": _read(f"{ctrl}/model"),
                       "serial": _read(f"{ctrl}/serial"), "firmware": _read(f"{ctrl}/firmware_rev"),
                       "bytes": int(sectors) * 512 if sectors.isdigit() else None,
                       "device": f"/dev/disk/by-path/pci-{address}-nvme-1"})
    drives.sort(key=lambda d: d["pci"])
    for n, d in enumerate(drives):
        d["index"] = n
    module.exit_json(changed=False, drives=drives)


if __name__ == "__main__":
    main()
