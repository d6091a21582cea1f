"""The host playbooks' inventory: `ansible/inventory.yml`, `ansible/group_vars/*.yml` and `ansible/host_vars/*.json`.

`ansible-playbook -i build/<cluster>/ansible/inventory.yml playbooks/site.yml` configures every host the way its
switches expect.  Groups: by role (`gpu`, `storage` with `storage_tectonic` and `storage_hammerspace`, `service`), by
backend (`backend_roce`: GPU hosts whose rails are Ethernet NICs, which site.yml addresses and sets RoCE QoS on;
`backend_infiniband`: GPU hosts whose rails are HCAs, which the subnet manager configures), by zone (`zone_01`), by
rack (`rack_z01_r001`), by rail (`rail_0`: the hosts with a NIC on rail 0), `slurm_controller`, and `subnet_manager`
(the hosts of the InfiniBand subnet manager's instances, whatever device they are, each with its `teton_opensm`).
Ansible group names take letters, digits and '_', so the spec's names are spelled with '_'.

Every variable is spelled from the Fabric (`variables.py`): QoS from the device's `qos` (the switches' own intent),
rails from its host plan.  Before anything is written, every document is checked against the JSON Schema
(`hostvars.schema.json`) and against the argument specs of the roles site.yml runs on the host's groups
(`argspec.py`); a problem is a finding naming the file and the variable.  Read-back checks the written files the same
way (a hand edit that breaks a role's contract is reported by `teton validate --rendered`).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema_rs
import orjson
import yaml

from teton.buildfolder import host_vars_path
from teton.fabric.model import Fabric
from teton.fabric.neighbours import LLDP_KINDS
from teton.fabric.pkeys import host_pkeys
from teton.fabric.roles import server_link_kinds, server_roles
from teton.findings import Finding, SpecError
from teton.targets.ansible import variables as v
from teton.targets.ansible.argspec import ArgspecError, RoleSpec, role_spec, site_roles
from teton.targets.ansible.unsafe import Dumper, Loader, mark_yaml, unwrap, wrap_json_plain
from teton.targets.base import (
    BuildFileError,
    BuildFiles,
    DeviceView,
    Files,
    LldpView,
    PortView,
    RenderContext,
    Target,
)
from teton.targets.jsontext import pretty_json

DIR = "ansible"
INVENTORY = f"{DIR}/inventory.yml"
SCHEMA_FILE = Path(__file__).with_name("hostvars.schema.json")
HEADER = "# rendered by teton from the build's Fabric: do not edit, render again\n"


def _json(data: Any) -> str:
    """Host variables as JSON (Ansible reads host_vars/<host>.json), every string marked unsafe: ~20x faster to write
    than YAML for 4,000 hosts."""
    wrapped, plain = wrap_json_plain(data)
    return pretty_json(wrapped, sort_keys=True, indent=1, plain=plain) + "\n"


def _yaml(data: Any, flow: bool | None = None) -> str:
    """YAML with flow-style leaves (None) or, for the inventory, one host per line (False): a host added or removed
    is one line of a review diff, not a reflowed paragraph."""
    return HEADER + yaml.dump(data, Dumper=Dumper, sort_keys=True, default_flow_style=flow, width=120)


_STR_TAG, _NULL_TAG, _MAP_TAG = "tag:yaml.org,2002:str", "tag:yaml.org,2002:null", "tag:yaml.org,2002:map"


def _inventory_yaml(data: dict[str, Any]) -> str:
    """`_yaml(data, flow=False)` for the inventory (mappings of str keys down to None), the same text: its node tree
    built here as the safe representer builds it (str and None scalars in their default style, mappings block-style
    with sorted keys) and handed to the dumper's serializer, without the representer's per-value dispatch (the 24k's
    81k scalars).  A value of any other type, or a dict met twice (the representer would write an alias), and it is
    `_yaml`'s."""
    seen: set[int] = set()

    def node(x: Any) -> Any:
        if x is None:
            return yaml.ScalarNode(_NULL_TAG, "null")
        if type(x) is not dict or id(x) in seen:
            raise TypeError
        seen.add(id(x))
        pairs = []
        for k in sorted(x):
            if type(k) is not str:
                raise TypeError
            pairs.append((yaml.ScalarNode(_STR_TAG, k), node(x[k])))
        return yaml.MappingNode(_MAP_TAG, pairs, flow_style=False)

    try:
        tree = node(data)
    except TypeError:
        return _yaml(data, flow=False)
    return HEADER + yaml.serialize(tree, Dumper=Dumper, width=120)


@cache
def _schema() -> tuple[Any, dict[str, frozenset[str]]]:
    """(validator of each property on its own, {teton_role: keys a host of that role must have}).  The schema is
    checked by jsonschema; documents are validated by jsonschema-rs (~100x faster: 4,000 hosts in well under a
    second)."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    required = {rule["if"]["properties"]["teton_role"]["const"]: frozenset(rule["then"]["required"])
                for rule in schema.pop("allOf")}
    jsonschema.validators.validator_for(schema).check_schema(schema)
    return jsonschema_rs.validator_for(schema), required


@cache
def _role_validator(role: str) -> tuple[RoleSpec, Any]:
    spec = role_spec(role)
    jsonschema.Draft202012Validator.check_schema(spec.schema)
    return spec, jsonschema_rs.Draft202012Validator(spec.schema)


def _where(error: Any) -> str:
    return ".".join(str(p) for p in error.instance_path)


class Documents:
    """The variable documents of one inventory, and which of them each host sees."""

    def __init__(self) -> None:
        self.files: dict[str, dict[str, Any]] = {}      # relpath -> variables
        self.groups: dict[str, dict[str, None]] = {}    # group -> hosts (ordered)
        self.children: dict[str, list[str]] = {}        # parent group -> child groups

    def add(self, group: str, host: str) -> None:
        self.groups.setdefault(group, {})[host] = None

    def host_groups(self) -> dict[str, list[str]]:
        parents = {c: p for p, cs in self.children.items() for c in cs}
        out: dict[str, list[str]] = {}
        for group, hosts in self.groups.items():
            chain = [group]
            while chain[-1] in parents:
                chain.append(parents[chain[-1]])
            for h in hosts:
                out.setdefault(h, []).extend(chain)
        return out

    def inventory(self) -> dict[str, Any]:
        nested = {c for cs in self.children.values() for c in cs}

        def node(group: str) -> dict[str, Any]:
            out: dict[str, Any] = {}
            if self.groups.get(group):
                out["hosts"] = dict.fromkeys(self.groups[group])
            if self.children.get(group):
                out["children"] = {c: node(c) for c in self.children[group]}
            return out

        top = [g for g in [*self.children, *self.groups] if g not in nested]
        return {"all": {"children": {g: node(g) for g in dict.fromkeys(top)}}}


def build_documents(fabric: Fabric) -> Documents:
    s = fabric.hosts
    assert s is not None
    docs = Documents()
    docs.files[f"{DIR}/group_vars/all.yml"] = v.all_vars(fabric, s)
    gpu = fabric.by_role("host")
    storage = fabric.by_role("storage")
    own: dict[str, dict[str, Any]] = {}
    shared: dict[str, dict[str, Any]] = {}
    pkeys = host_pkeys(fabric)
    for d in gpu:
        own[d.name], shared[d.name] = v.gpu_host(d, s, pkeys.get(d.name))
        docs.add("gpu", d.name)
        docs.add(f"backend_{fabric.backend}", d.name)
        if d.zone is not None:
            docs.add(f"zone_{d.zone:02d}", d.name)
        docs.add(f"rack_{v.group_name(d.rack)}", d.name)
        for rail in own[d.name]["teton_rails"]:
            docs.add(f"rail_{rail['rail']}", d.name)
    for d in storage:
        own[d.name], shared[d.name] = v.storage_server(d, s)
        docs.add(f"storage_{own[d.name]['teton_storage']['role']}", d.name)
        docs.add(f"rack_{v.group_name(d.rack)}", d.name)
    services = fabric.by_role("service")
    for d in services:
        own[d.name], shared[d.name] = v.service_host(d, s)
        docs.add("service", d.name)
        docs.add(f"rack_{v.group_name(d.rack)}", d.name)
    for group, members in (("gpu", gpu), ("storage", storage), ("service", services)):
        if members:
            common, rest = v.split_shared([d.name for d in members], shared.__getitem__)
            docs.files[f"{DIR}/group_vars/{group}.yml"] = common
            for h, extra in rest.items():
                own[h].update(extra)
    docs.children["storage"] = sorted(g for g in docs.groups if g.startswith("storage_"))
    docs.children["zones"] = sorted(g for g in docs.groups if g.startswith("zone_"))
    docs.children["racks"] = sorted(g for g in docs.groups if g.startswith("rack_"))
    docs.children["rails"] = sorted((g for g in docs.groups if g.startswith("rail_")), key=lambda g: int(g[5:]))
    controller = s.scheduler.controller
    docs.add("slurm_controller", controller)
    if controller not in own:      # no service host of that name: the controller is managed outside the build
        own[controller] = {"teton_role": "controller", "teton_device": controller}
        if s.scheduler.controller_address:
            own[controller]["ansible_host"] = s.scheduler.controller_address
    for d in [*gpu, *storage, *services]:
        own[d.name]["teton_lldp"] = v.lldp_vars(fabric, d)
    if fabric.subnet_manager is not None:
        for host, instance in v.opensm_vars(fabric, fabric.subnet_manager).items():
            docs.add("subnet_manager", host)
            if host not in own:     # a device with no other host role in the build: only its subnet manager
                own[host] = {"teton_device": host}
                if (address := v.ansible_host(fabric.devices[host])) is not None:
                    own[host]["ansible_host"] = address
            own[host]["teton_opensm"] = instance
    for h in sorted(own):
        docs.files[host_vars_path(h)] = own[h]
    return docs


TEMPLATE_MARKS = ("{{", "{%", "{#")
"""What starts a Jinja2 template: Ansible trusts the strings of a vars file as templates, so none may hold one..."""
MEANT_AS_TEMPLATES = {"teton_slurm_files": v.SLURM_FILES, "teton_opensm_files": v.OPENSM_FILES}
"""... but these, and each only with the value teton writes (a path relative to the inventory, for the slurm and
opensm roles)."""
_MARKS = tuple(m.encode() for m in TEMPLATE_MARKS)


def _marked(value: Any) -> bool:
    """Whether any string below `value` (keys included) may hold a template mark: False only when its JSON text has
    none (JSON escapes no brace or '%' '#', and its own punctuation never spells a mark), so that the walk of
    `_templates` runs only on the few documents that may have one."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
    except TypeError:           # something orjson does not write: walk it
        return True
    return any(m in text for m in _MARKS)


def _templates(value: Any, where: str) -> list[str]:
    """The spec paths below `value` whose text holds a template mark (keys included)."""
    if isinstance(value, str):
        return [where] if any(m in value for m in TEMPLATE_MARKS) else []
    if isinstance(value, dict):
        return [p for k, x in value.items()
                for p in (_templates(str(k), f"{where}.{k}".lstrip(".")) + _templates(x, f"{where}.{k}".lstrip(".")))]
    if isinstance(value, list):
        return [p for i, x in enumerate(value) for p in _templates(x, f"{where}.{i}".lstrip("."))]
    return []


def check_documents(docs: Documents) -> list[Finding]:
    """Every document against the JSON Schema and the argument specs of the roles its hosts run; required variables
    on each host's union of documents; no variable holds a template (data is data: `{{ lookup('pipe', ...) }}` in a
    host's variables would run on the controller the first time a play reads it)."""
    findings: list[Finding] = [
        Finding(rel, where, "holds a Jinja2 template mark ({{, {% or {#): teton's variables are data, never "
                            "templates", rule="ansible-template")
        for rel, data in docs.files.items() if _marked(data) for where in sorted(set(_templates(data, "")))
        if not (where in MEANT_AS_TEMPLATES and data.get(where) == MEANT_AS_TEMPLATES[where])]
    validator, required_by_role = _schema()
    try:
        roles_of_group = site_roles()
    except ArgspecError as exc:
        return [*findings, Finding("playbooks/site.yml", "", str(exc), rule="ansible-vars")]
    host_groups = docs.host_groups()
    group_doc = {g: f"{DIR}/group_vars/{g}.yml" for g in ["all", *docs.groups, *docs.children]}
    roles_of_file: dict[str, set[str]] = {}
    for host, groups in host_groups.items():
        roles = {r for g in ["all", *groups] for r in roles_of_group.get(g, ())}
        for rel in [group_doc[g] for g in ["all", *groups]] + [host_vars_path(host)]:
            roles_of_file.setdefault(rel, set()).update(roles)
    specs: dict[str, tuple[RoleSpec, Any]] = {}
    for role in sorted({r for rs in roles_of_file.values() for r in rs}):
        try:
            specs[role] = _role_validator(role)
        except ArgspecError as exc:
            findings.append(Finding(f"playbooks/roles/{role}/meta/argument_specs.yml", "", str(exc),
                                    rule="ansible-vars"))
    for rel, data in docs.files.items():
        for e in validator.iter_errors(data):
            findings.append(Finding(rel, _where(e), f"{e.message} (hostvars.schema.json)", rule="ansible-vars"))
        for role in sorted(roles_of_file.get(rel, ())):
            if role not in specs:
                continue
            spec, rv = specs[role]
            for e in rv.iter_errors({k: x for k, x in data.items() if k in spec.schema["properties"]}):
                findings.append(Finding(rel, _where(e), f"{e.message} (role {role}: {spec.file})",
                                        rule="ansible-vars"))
    for host, groups in sorted(host_groups.items()):
        rel = host_vars_path(host)
        keys = set(docs.files.get(rel, {}))
        for g in ["all", *groups]:
            keys |= set(docs.files.get(group_doc[g], {}))
        kind: Any = docs.files.get(rel, {}).get("teton_role")
        need = set(required_by_role.get(kind, ()))
        for name in {r for g in ["all", *groups] for r in roles_of_group.get(g, ())}:
            if name in specs:
                need |= specs[name][0].required
        for missing in sorted(need - keys):
            findings.append(Finding(rel, missing, f"{host} has no variable {missing!r} (needed by "
                                    f"{'its kind' if missing in required_by_role.get(kind, ()) else 'a role it runs'})",
                                    rule="ansible-vars"))
    return findings


class AnsibleTarget(Target):
    name = "ansible"
    cost_per_device = 0.0002
    summary = "ansible/inventory.yml, group_vars, host_vars: the host playbooks' inventory, schema-checked"

    def check(self, fabric: Fabric, file: str) -> Iterator[Finding]:
        sm = fabric.subnet_manager
        if sm is None:
            return
        seen: dict[str, int] = {}
        for n, inst in enumerate(sm.instances):
            if inst.host in seen:
                yield Finding(file, "backend.subnet_manager", f"subnet manager instances {seen[inst.host]} and {n} are "
                              f"both on host {inst.host!r}: the opensm role runs one instance per host",
                              rule="ansible-vars")
            seen.setdefault(inst.host, n)

    def render(self, fabric: Fabric, ctx: RenderContext) -> Files:
        if fabric.hosts is None or not (fabric.by_role("host") or fabric.by_role("storage")
                                        or fabric.by_role("service")):
            return {}
        docs = build_documents(fabric)
        if ctx.validate:
            problems = check_documents(docs)
            if problems:
                raise SpecError(problems)
        # data is data: every value marked unsafe for Ansible's templating (`unsafe`), but teton's own templates
        files = {rel: _yaml(mark_yaml(data, MEANT_AS_TEMPLATES)) if rel.endswith(".yml") else _json(data)
                 for rel, data in docs.files.items()}
        files[INVENTORY] = _inventory_yaml(docs.inventory())
        return files

    def read_back(self, source: BuildFiles, fabric: Fabric, ctx: RenderContext,
                  vendor: bool = True) -> tuple[list[DeviceView], list[Finding]]:
        """A view of every server's front end (its NICs towards its RSW, as `teton_frontend` in its host variables
        says: what the host_nics role configures); with `vendor`, the written variables checked again against the
        schema and the roles' argument specs.  A GPU host's backend NICs are `hosts/backend.json`'s view."""
        servers = sorted(n for n, d in fabric.devices.items() if d.role in server_roles())
        if fabric.hosts is None or not servers:
            return [], []
        try:
            loaded = {host_vars_path(h): (h, _load(source, host_vars_path(h))) for h in servers
                      if any(i.kind in FRONTEND_KINDS or i.kind in LLDP_KINDS for i in fabric.devices[h].interfaces)}
            views = [_frontend_view(h, rel, data) for rel, (h, data) in loaded.items()]
            if not vendor:
                return [v for v in views if v.interfaces or v.lldp], []
            docs = build_documents(fabric)
            written = Documents()
            written.groups, written.children = docs.groups, docs.children
            written.files = {rel: loaded[rel][1] if rel in loaded else _load(source, rel) for rel in docs.files}
        except BuildFileError as exc:
            return [], [Finding(exc.path, "", exc.problem, rule="io")]
        return [v for v in views if v.interfaces or v.lldp], check_documents(written)


FRONTEND_KINDS = server_link_kinds("frontend")


def _frontend_view(host: str, rel: str, data: dict[str, Any]) -> DeviceView:
    """The front-end NICs of `host` as its variables file `rel` spells them (`data`: read as Ansible reads it)."""
    nics = data.get("teton_frontend") or []
    view = DeviceView(host, "host", rel, qos_file=rel)
    try:
        for n, nic in enumerate(nics):
            view.interfaces[str(nic["name"])] = PortView(
                int(nic["mtu"]), tuple(str(a) for a in nic["addresses"]), f"teton_frontend[{n}].mtu",
                tuple(str(g) for g in (nic.get("gateway4"), nic.get("gateway6")) if g))
    except (KeyError, TypeError, ValueError) as exc:
        raise BuildFileError(rel, f"teton_frontend is not what teton writes: {type(exc).__name__}: {exc}") from None
    view.lldp = _lldp_view(rel, data.get("teton_lldp"))
    return view


def _lldp_view(rel: str, lldp: Any) -> LldpView | None:
    """What the lldpd role makes the host announce (`teton_lldp`): its system name, each NIC's name as its port id
    (`portidsubtype ifname`)."""
    if not lldp:
        return None
    try:
        return LldpView(str(lldp["system"]), {str(i["name"]): str(i["name"]) for i in lldp["interfaces"]},
                        f"{rel} teton_lldp")
    except (KeyError, TypeError) as exc:
        raise BuildFileError(rel, f"teton_lldp is not what teton writes: {type(exc).__name__}: {exc}") from None


def _load(source: BuildFiles, rel: str) -> dict[str, Any]:
    try:
        text = source.text(rel)
        data = unwrap(json.loads(text) if rel.endswith(".json") else yaml.load(text, Loader=Loader))
    except (yaml.YAMLError, ValueError) as exc:
        raise BuildFileError(rel, f"is not valid YAML: {exc}") from None
    if not isinstance(data, dict):
        raise BuildFileError(rel, "is not a mapping of variables")
    return data


TARGET = AnsibleTarget()
