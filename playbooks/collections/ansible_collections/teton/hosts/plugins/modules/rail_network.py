#!/usr/bin/python
"""Make the kernel's backend NICs match the build: link up, MTU, addresses, and per NIC one routing table and one
source rule, so that each NIC's traffic leaves on its own rail."""

from __future__ import annotations

DOCUMENTATION = r"""
module: rail_network
short_description: Backend NICs with per-NIC routing tables and source rules
description:
  - For every interface, sets the link up and its MTU, keeps exactly the given global addresses, keeps exactly the
    routes to the supernets (via the NIC's gateway) in the NIC's table, and keeps exactly one rule per address family
    at the NIC's priority, sending the NIC's source address to its table; and routes the supernets in the main table
    through every NIC at its own metric, for sockets with no bound source.
  - Fails when an interface does not exist. Supports check mode and diff.
options:
  interfaces:
    description: NICs, each with name, mtu, addresses (CIDR), gateway4, gateway6, table, rule_priority and
      main_metric (the metric of its main-table routes to the supernets; 0 or absent for none).
    type: list
    elements: dict
    required: true
  supernets:
    description: Prefixes every NIC reaches through its own gateway.
    type: list
    elements: str
    required: true
author: teton
"""

import ipaddress
import json

from ansible.module_utils.basic import AnsibleModule


def _ip(module, *args, check=True):
    rc, out, err = module.run_command(["ip", *args])
    if rc != 0 and check:
        module.fail_json(msg=f"ip {' '.join(args)} failed (rc {rc}): {(err or out).strip()}")
    return rc, out


def _json(module, *args):
    rc, out = _ip(module, "-j", *args, check="table" not in args)
    if rc != 0:        # a routing table nobody has used yet does not exist: it is empty
        return []
    return json.loads(out) if out.strip() else []


def _family(text):
    return 6 if ":" in text else 4


def _route_key(r):
    return (r.get("dst"), r.get("gateway"), r.get("dev"))


def main():
    module = AnsibleModule(
        argument_spec={"interfaces": {"type": "list", "elements": "dict", "required": True},
                       "supernets": {"type": "list", "elements": "str", "required": True}},
        supports_check_mode=True)
    nics, supernets = module.params["interfaces"], module.params["supernets"]
    commands, before, after = [], [], []
    links = {link["ifname"]: link for link in _json(module, "link", "show")}
    missing = [n["name"] for n in nics if n["name"] not in links]
    if missing:
        module.fail_json(msg=f"no such interface on this host: {', '.join(missing)} (the build says it has them)")
    rules = {4: _json(module, "-4", "rule", "show"), 6: _json(module, "-6", "rule", "show")}
    for nic in nics:
        name, mtu, table, prio = nic["name"], int(nic["mtu"]), int(nic["table"]), int(nic["rule_priority"])
        link = links[name]
        up = "UP" in link.get("flags", [])
        before.append(f"{name}: mtu {link.get('mtu')} {'up' if up else 'down'}")
        after.append(f"{name}: mtu {mtu} up")
        if link.get("mtu") != mtu:
            commands.append(["link", "set", "dev", name, "mtu", str(mtu)])
        if not up:
            commands.append(["link", "set", "dev", name, "up"])
        want = {str(ipaddress.ip_interface(a)) for a in nic.get("addresses") or []}
        have = set()
        for entry in _json(module, "addr", "show", "dev", name):
            for a in entry.get("addr_info", []):
                if a.get("scope") == "global":
                    have.add(str(ipaddress.ip_interface(f"{a['local']}/{a['prefixlen']}")))
        before += [f"{name}: address {a}" for a in sorted(have)]
        after += [f"{name}: address {a}" for a in sorted(want)]
        commands += [["addr", "del", a, "dev", name] for a in sorted(have - want)]
        commands += [["addr", "add", a, "dev", name] for a in sorted(want - have)]
        for fam in (4, 6):
            gw = nic.get(f"gateway{fam}")
            wanted = {(str(ipaddress.ip_network(s)), gw, name) for s in supernets if _family(s) == fam and gw}
            current = {_route_key(r) for r in _json(module, f"-{fam}", "route", "show", "table", str(table))
                       if r.get("type", "unicast") == "unicast" and r.get("protocol") != "kernel"}
            before += [f"table {table}: {d} via {g} dev {v}" for d, g, v in sorted(current, key=str)]
            after += [f"table {table}: {d} via {g} dev {v}" for d, g, v in sorted(wanted, key=str)]
            for d, g, v in sorted(current - wanted, key=str):
                commands.append([f"-{fam}", "route", "del", d, "table", str(table)]
                                + (["via", g] if g else []) + (["dev", v] if v else []))
            for d, g, v in sorted(wanted - current, key=str):
                commands.append([f"-{fam}", "route", "replace", d, "via", g, "dev", v, "table", str(table)])
            metric = int(nic.get("main_metric") or 0)
            if metric:         # the main table: the supernets through this NIC too, at its metric (unbound sockets)
                nets = {d for d, _, _ in wanted}
                main = {(r.get("dst"), r.get("gateway"), int(r.get("metric", 0)))
                        for r in _json(module, f"-{fam}", "route", "show", "dev", name)
                        if r.get("dst") in nets and r.get("protocol") != "kernel"}
                want_main = {(d, g, metric) for d, g, _ in wanted}
                before += [f"main: {d} via {g} dev {name} metric {m}" for d, g, m in sorted(main, key=str)]
                after += [f"main: {d} via {g} dev {name} metric {m}" for d, g, m in sorted(want_main, key=str)]
                for d, g, m in sorted(main - want_main, key=str):
                    commands.append([f"-{fam}", "route", "del", d, "via", g, "dev", name, "metric", str(m)])
                for d, g, m in sorted(want_main - main, key=str):
                    commands.append([f"-{fam}", "route", "replace", d, "via", g, "dev", name, "metric", str(m)])
            sources = [str(ipaddress.ip_interface(a).ip) for a in want if _family(a) == fam]
            wanted_rules = {(s, table) for s in sources}
            at_prio = [r for r in rules[fam] if r.get("priority") == prio]
            current_rules = {(r.get("src"), int(r["table"]) if str(r.get("table", "")).isdigit() else r.get("table"))
                             for r in at_prio}
            before += [f"rule {prio}: from {s} lookup {t}" for s, t in sorted(current_rules, key=str)]
            after += [f"rule {prio}: from {s} lookup {t}" for s, t in sorted(wanted_rules, key=str)]
            for s, t in sorted(current_rules - wanted_rules, key=str):
                commands.append([f"-{fam}", "rule", "del", "priority", str(prio)]
                                + (["from", s] if s and s != "all" else []) + (["lookup", str(t)] if t else []))
            for s, t in sorted(wanted_rules - current_rules, key=str):
                commands.append([f"-{fam}", "rule", "add", "priority", str(prio), "from", s, "lookup", str(t)])
    # addresses first (gateways must be on-link), then links, routes and rules in the order found
    commands.sort(key=lambda c: 0 if c[0] == "link" else 1 if c[0] == "addr" else 2)
    if commands and not module.check_mode:
        for c in commands:
            _ip(module, *c)
    module.exit_json(changed=bool(commands), commands=[" ".join(["ip", *c]) for c in commands],
                     diff={"before": "\n".join(before) + "\n", "after": "\n".join(after) + "\n"})


if __name__ == "__main__":
    main()
