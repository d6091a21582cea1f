"""Fuzz over the free string fields of the schema with what ends a token or a line in some format (newline, '!',
';', '"', '{{ }}', '=', '..', '/'): validate refuses the spec, or every rendered text file keeps its line structure
(the same files, each with as many lines) and no written path leaves the build."""

from __future__ import annotations

import copy

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers import INVENTORY, write_spec
from teton.findings import SpecError
from teton.pipeline import render_spec

MINIPACK2 = {"name": "minipack2", "vendor": "Meta (Celestica)", "asic": "Broadcom Tomahawk4", "asic_tbps": 25.6,
             "port_naming": "sonic", "nos": ["sonic"],
             "port_groups": [{"count": 64, "speed_gbps": 400, "lanes": 8, "form_factor": "QSFP-DD",
                              "breakouts": ["1x400G"]}],
             "platform": {"sonic": "x86_64-facebook_minipack2-r0"}, "hwsku": {"sonic": "Facebook-Minipack2-64x400G"}}
ROCE = {**yaml.safe_load((INVENTORY / "lab.yaml").read_text()), "switch_models": [MINIPACK2]}
IB = yaml.safe_load((INVENTORY / "lab-ib.yaml").read_text())
# every free string field (the schema's `type: string` without an enum), by spec path, in the lab it applies to
FIELDS = {
    "roce": [("site",), ("host", "gpu_model"), ("management", "snmpv3_user"), ("management", "vrf"),
             ("management", "breakglass_user"), ("management", "aaa_key_secret"), ("management", "ntp_servers", 0),
             ("scheduler", "partition"), ("scheduler", "controller"), ("backend", "rtsw", "model"),
             ("backend", "drain", 0), ("backend", "bgp", "password_secret"), ("name",),
             ("hosts", "nccl", "dump_dir"), ("hosts", "storage_server", "mount_root"),
             ("hosts", "storage_server", "mount_options", 0), ("hosts", "storage_client", "tectonic", "namespace"),
             ("hosts", "storage_client", "hammerspace", 0, "name"), ("storage", 1, "shares", 0, "name"),
             ("storage", 1, "shares", 0, "path"), ("storage", 1, "shares", 0, "mount_point"),
             ("storage", 0, "shares", 0, "options", 0), ("services", 0, "name"),
             ("switch_models", 0, "name"), ("switch_models", 0, "vendor"), ("switch_models", 0, "asic"),
             ("switch_models", 0, "hwsku", "sonic"), ("switch_models", 0, "platform", "sonic"),
             ("switch_models", 0, "port_groups", 0, "form_factor"), ("switch_models", 0, "port_groups", 0,
                                                                      "breakouts", 0)],
    "infiniband": [("backend", "hca_names", 0), ("backend", "guid_map"), ("backend", "subnet_manager", "hosts", 0),
                   ("backend", "subnet_manager", "config_dir"), ("backend", "subnet_manager", "routing_engine"),
                   ("backend", "subnet_manager", "sm_key_secret"), ("backend", "partitions", 0, "name"),
                   ("backend", "partitions", 0, "hosts", 0), ("backend", "core", "model")],
}
PAYLOADS = ["\n", "\nprolog=/srv/other/pwn", "!", ";", '"', "{{ lookup('pipe','id') }}", "=", "..", "/",
            "../../x", " x", "\u2028", "\r"]
CASES = [(kind, path) for kind, paths in FIELDS.items() for path in paths]


def _set(data: dict, path: tuple, value: str) -> None:
    node = data
    for k, step in enumerate(path[:-1]):
        if isinstance(node, list):
            if step >= len(node):
                node.append([] if isinstance(path[k + 1], int) else {})
            node = node[step]
        else:
            node = node.setdefault(step, [] if isinstance(path[path.index(step) + 1], int) else {})
    if isinstance(node, list):
        node[path[-1]:path[-1] + 1] = [value]
    else:
        node[path[-1]] = value


def _get(data: dict, path: tuple) -> str:
    node = data
    for step in path:
        try:
            node = node[step]
        except (KeyError, IndexError, TypeError):
            return "x"
    return node if isinstance(node, str) else "x"


def _shape(rendered) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((t, len(text.splitlines()) if isinstance(text, str) else -1)
                        for files in rendered.files.values() for t, text in files.items()))


_BASES: dict[tuple, tuple | None] = {}


def _case_base(kind: str, path: tuple, tmp) -> tuple | None:
    """The line structure of the lab with the field at `path` set to its own (unmutated) value, or None when that
    does not render (a field the lab leaves out, set to a placeholder)."""
    if (kind, path) not in _BASES:
        data = copy.deepcopy(ROCE) if kind == "roce" else _ib_with_partition()
        _set(data, path, _get(data, path))
        try:
            _BASES[kind, path] = _shape(render_spec(write_spec(tmp, data, "base.yaml")))
        except SpecError:
            _BASES[kind, path] = None
    return _BASES[kind, path]


def _ib_with_partition() -> dict:
    d = copy.deepcopy(IB)
    d["backend"].setdefault("partitions", [{"name": "tenant", "pkey": 2, "hosts": ["z01-r001-h01"]}])
    d["backend"].setdefault("hca_names", [f"mlx5_{i}" for i in range(d.get("host", {}).get("backend_nics", 8))])
    return d


@settings(max_examples=250, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), payload=st.sampled_from(PAYLOADS), where=st.sampled_from(["end", "start", "mid"]))
def test_free_strings_never_change_the_lines_of_a_rendered_file(tmp_path_factory, case, payload, where):
    kind, path = case
    data = copy.deepcopy(ROCE) if kind == "roce" else _ib_with_partition()
    old = _get(data, path)
    value = {"end": old + payload, "start": payload + old, "mid": old[:1] + payload + old[1:]}[where]
    _set(data, path, value)
    tmp = tmp_path_factory.mktemp("fuzz")
    try:
        rendered = render_spec(write_spec(tmp, data))
    except SpecError:
        return                                  # validate refuses it: fine
    for files in rendered.files.values():
        for rel in files:
            assert "\n" not in rel and ".." not in rel.split("/") and not rel.startswith("/"), rel
    base = _case_base(kind, path, tmp)
    if base is not None:    # the same files with as many lines each (a renamed SKU folder keeps its line counts)
        assert sorted(n for _, n in _shape(rendered)) == sorted(n for _, n in base), (path, value)
