#!/usr/bin/python
"""State plainly what a role could not do on this host: one warning per item (or a failure, if asked)."""

from __future__ import annotations

DOCUMENTATION = r"""
module: not_applied
short_description: Report what could not be applied
description:
  - "Never changes anything. Each item becomes a warning '<what>: not applied: <item>'; with fail=true the task
    fails listing them. Nothing to report is a plain ok."
options:
  what:
    description: What the items are about (a role, a setting).
    type: str
    required: true
  items:
    description: What was not applied, each with the reason.
    type: list
    elements: str
    required: true
  fail:
    description: Fail instead of warning.
    type: bool
    default: false
author: teton
"""

from ansible.module_utils.basic import AnsibleModule


def main():
    module = AnsibleModule(argument_spec={"what": {"type": "str", "required": True},
                                          "items": {"type": "list", "elements": "str", "required": True},
                                          "fail": {"type": "bool", "default": False}},
                           supports_check_mode=True)
    what, items = module.params["what"], module.params["items"]
    if items and module.params["fail"]:
        module.fail_json(msg=f"{what}: not applied: " + "; ".join(items), not_applied=items)
    for item in items:
        module.warn(f"{what}: not applied: {item}")
    module.exit_json(changed=False, not_applied=items,
                     msg=f"{what}: {len(items)} not applied" if items else f"{what}: everything applied")


if __name__ == "__main__":
    main()
