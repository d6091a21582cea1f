#!/usr/bin/python
"""Set kernel parameters under /proc/sys now (the roles write /etc/sysctl.d for the next boot)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: sysctl_values
short_description: Kernel parameters, set now
description:
  - Writes each value to /proc/sys when it differs. Fails when a parameter does not exist. Check mode and diff.
options:
  values:
    description: Parameter name (dotted, e.g. net.ipv4.conf.all.arp_ignore) to value.
    type: dict
    default: {}
  interfaces:
    description: Interfaces for per_interface ("all" included when given).
    type: list
    elements: str
    default: []
  per_interface:
    description: Parameter with {} for the interface name (net.ipv4.conf.{}.arp_ignore) to value, for each interface.
    type: dict
    default: {}
author: teton
"""

import os

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={"values": {"type": "dict", "default": {}},
                                          "interfaces": {"type": "list", "elements": "str", "default": []},
                                          "per_interface": {"type": "dict", "default": {}}},
                           supports_check_mode=True)
    values = {str(k): v for k, v in module.params["values"].items()}
    for iface in module.params["interfaces"]:
        for pattern, value in module.params["per_interface"].items():
            values[pattern.replace("{}", iface)] = value
    before, after, changed = [], [], []
    for name in sorted(values):
        want = str(values[name])
        path = os.path.join("/proc/sys", *name.split("."))
        try:
            with open(path, encoding="utf-8") as f:
                have = f.read().strip()
        except OSError as exc:
            module.fail_json(msg=f"{name}: cannot be read ({exc.strerror}): no such parameter on this host")
        before.append(f"{name} = {have}")
        after.append(f"{name} = {want}")
        if " ".join(have.split()) != " ".join(want.split()):
            changed.append(name)
            if not module.check_mode:
                try:
                    with open(path, "w", encoding="utf-8") as f:
                        f.write(want)
                except OSError as exc:
                    module.fail_json(msg=f"{name}: cannot be set to {want} ({exc.strerror})")
    module.exit_json(changed=bool(changed), set=changed,
                     diff={"before": "\n".join(before) + "\n", "after": "\n".join(after) + "\n"})


if __name__ == "__main__":
    main()
