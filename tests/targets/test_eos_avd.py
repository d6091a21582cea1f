"""teton.targets.eos.avd: pyavd validation and EOS CLI rendering of CTSW/ATSW structured configs."""

from __future__ import annotations

import copy
import functools
import ipaddress
import re
import warnings
from pathlib import Path

import jinja2
import pyavd
import pytest
import yaml

from teton.secrets import PREFIX, referenced_secrets, resolve, secret_ref
from teton.targets.eos import avd as eos_avd
from teton.targets.eos import inline as eos_inline
from teton.targets.eos.avd import AvdIssue, AvdValidationError, render_eos_config, validate_structured_config

EXAMPLE = Path(__file__).parent / "data" / "eos_ctsw.yaml"
DEVICE = "z01-ctsw01"

# every secret the example references, by the name given to secret_ref()
EXAMPLE_SECRETS = {
    "aaa_key",
    "bgp_backend",
    "enable_password_sha512",
    "local_admin_sha512",
    "snmpv3_auth",
    "snmpv3_priv",
}
# structured-config keys whose values are secrets (eos_cli_config_gen schema)
SECRET_KEYS = {"key", "password", "sha512_password", "auth_passphrase", "priv_passphrase"}


def example_config() -> dict:
    return yaml.safe_load(EXAMPLE.read_text())


def spine_config(n_down: int = 192, n_up: int = 28) -> dict:
    """The example CTSW scaled to n_down RTSW downlinks and n_up ATSW uplinks, numbered as the design stage does
    for the reference spec (7808R3: 36 ports per line card from slot 3; a /31 per RTSW uplink, 16 CTSW planes)."""
    cfg = example_config()
    template = cfg["ethernet_interfaces"][0]
    interfaces, neighbors = [], []
    for k in range(n_down + n_up):
        slot, port = 3 + k // 36, 1 + k % 36
        down = k < n_down
        if down:
            peer, peer_port, group, asn = f"z01-r{k + 1:03d}-rtsw", "Ethernet64", "RTSW", str(4201001001 + k)
            local = ipaddress.ip_address("10.1.0.0") + 32 * k
            remote = local + 1
        else:
            j = k - n_down
            peer, peer_port, group, asn = f"atsw{j + 1:02d}", "Ethernet3/1/1", "ATSW", "4200000000"
            remote = ipaddress.ip_address("10.1.192.0") + 2 * j
            local = remote + 1
        intf = copy.deepcopy(template)
        intf.update(
            name=f"Ethernet{slot}/{port}/1",
            description=f"P2P {peer} {peer_port}",
            ip_address=f"{local}/31",
            metadata={"peer": peer, "peer_interface": peer_port, "peer_type": group.lower()},
        )
        interfaces.append(intf)
        neighbors.append(
            {"ip_address": str(remote), "peer_group": group, "remote_as": asn, "description": f"{peer}_{peer_port}"}
        )
    cfg["ethernet_interfaces"] = interfaces
    cfg["router_bgp"]["neighbors"] = neighbors
    return cfg


def block(text: str, header: str) -> list[str]:
    """The indented lines under the top-level line `header` of EOS CLI text."""
    lines = text.splitlines()
    start = lines.index(header)
    body = []
    for line in lines[start + 1 :]:
        if not line.startswith(" "):
            break
        body.append(line.strip())
    return body


@pytest.fixture(scope="module")
def rendered() -> str:
    return render_eos_config(example_config())


# --- the example --------------------------------------------------------------------------------------------------


def test_example_ctsw_config_validates_without_issues() -> None:
    assert validate_structured_config(DEVICE, example_config()) == []


def test_render_is_byte_identical_to_pyavd_get_device_config(rendered: str) -> None:
    validated = pyavd.validate_structured_config(example_config()).validated_data
    assert validated is not None
    assert rendered == pyavd.get_device_config(validated)


def test_render_of_a_220_link_spine_is_byte_identical_to_pyavd() -> None:
    cfg = spine_config()
    assert validate_structured_config(DEVICE, cfg) == []
    text = render_eos_config(cfg)
    assert text == pyavd.get_device_config(pyavd.validate_structured_config(cfg).validated_data)
    assert text.count("priority-flow-control priority 3 no-drop") == 220
    assert "   neighbor 10.1.192.54 remote-as 4200000000" in text.splitlines()


def test_render_reuses_one_templar_on_verified_pyavd() -> None:
    # Fails after a pyavd upgrade until its get_device_config is re-read and the version added to the verified set.
    assert pyavd.__version__ in eos_avd._TEMPLAR_REUSE_VERIFIED
    assert eos_avd._reused_templar() is not None
    assert eos_avd._reused_templar() is eos_avd._reused_templar()


def test_render_falls_back_to_get_device_config_without_templar(monkeypatch: pytest.MonkeyPatch, rendered: str) -> None:
    monkeypatch.setattr(eos_avd, "_reused_templar", lambda: None)
    assert render_eos_config(example_config()) == rendered


def test_dict_first_getattr_returns_what_jinja_getattr_returns() -> None:
    env = jinja2.Environment(undefined=jinja2.StrictUndefined)
    fast = eos_avd._dict_first_getattr(env)
    data = {"mtu": 9214, "items": "a field named like a dict method", "none": None}
    for obj, name in [(data, "mtu"), (data, "none"), (data, "items"), (data, "keys"), ([1], "append"), ("s", "upper")]:
        assert fast(obj, name) == jinja2.Environment.getattr(env, obj, name)
    missing = fast(data, "description")
    assert isinstance(missing, jinja2.StrictUndefined) and missing._undefined_name == "description"


def test_rendered_text_states_the_roce_spine_facts(rendered: str) -> None:
    lines = rendered.splitlines()
    assert "hostname z01-ctsw01" in lines
    # QoS: DSCP 26 -> TC 3 lossless, CNP DSCP 48 -> TC 6 strict, PFC watchdog 200 ms
    assert "qos map dscp 26 to traffic-class 3" in lines
    assert "qos map dscp 48 to traffic-class 6" in lines
    assert "priority-flow-control pause watchdog default timeout 0.2" in lines
    assert "priority-flow-control pause watchdog action drop" in lines
    profile = block(rendered, "qos profile QOS-ROCE-400G")
    assert profile[profile.index("tx-queue 6") + 2] == "priority strict"
    assert "random-detect ecn minimum-threshold 150 kbytes maximum-threshold 1500 kbytes" in profile
    # every fabric link: routed, jumbo, trusts DSCP, PFC no-drop on priority 3, RoCE QoS profile
    downlink = block(rendered, "interface Ethernet3/1/1")
    assert downlink == [
        "description P2P z01-r001-rtsw Ethernet64",
        "no shutdown",
        "mtu 9100",
        "no switchport",
        "ip address 10.1.0.0/31",
        "service-profile QOS-ROCE-400G",
        "qos trust dscp",
        "priority-flow-control on",
        "priority-flow-control priority 3 no-drop",
    ]
    # BGP
    bgp = block(rendered, "router bgp 4200000101")
    assert "neighbor 10.1.0.1 remote-as 4201001001" in bgp
    assert "neighbor 10.1.0.1 peer group RTSW" in bgp
    assert "neighbor 10.1.192.0 remote-as 4200000000" in bgp
    assert "neighbor RTSW timers 1 3" in bgp
    assert "no bgp default ipv4-unicast" in bgp
    assert "redistribute connected route-map RM-CONN-2-BGP" in bgp
    # management plane lives in VRF MGMT
    assert "vrf MGMT" in block(rendered, "interface Management0")
    assert "ip access-group ACL-MGMT-IN vrf MGMT in" in block(rendered, "management ssh")
    assert "ip access-group ACL-CPP-MGMT vrf MGMT in" in block(rendered, "system control-plane")
    assert "ntp server vrf MGMT 192.0.2.123 prefer iburst" in lines


def test_secrets_appear_only_as_references(rendered: str) -> None:
    def secret_values(node: object) -> list[str]:
        if isinstance(node, dict):
            found = [v for k, v in node.items() if k in SECRET_KEYS and isinstance(v, str)]
            return found + [s for v in node.values() for s in secret_values(v)]
        if isinstance(node, list):
            return [s for v in node for s in secret_values(v)]
        return []

    values = secret_values(example_config())
    assert values and all(re.fullmatch(PREFIX + r"[A-Za-z0-9_]+", v) for v in values)
    assert referenced_secrets(rendered) == EXAMPLE_SECRETS
    lines = rendered.splitlines()
    assert f"enable password sha512 {secret_ref('enable_password_sha512')}" in lines
    assert f"tacacs-server host 192.0.2.49 vrf MGMT key 7 {secret_ref('aaa_key')}" in lines
    assert (
        f"snmp-server user teton GRP-NMS-RO v3 auth sha256 {secret_ref('snmpv3_auth')}"
        f" priv aes {secret_ref('snmpv3_priv')}"
    ) in lines
    assert f"   neighbor RTSW password 7 {secret_ref('bgp_backend')}" in lines
    # nothing but a reference where a secret goes, and no SNMP community (v1/v2c plaintext) at all
    secret_slot = re.compile(r"\b(?:key 7|secret sha512|password sha512|password 7|auth sha256|priv aes) (\S+)")
    assert all(m.group(1).startswith(PREFIX) for line in lines for m in secret_slot.finditer(line))
    assert not any(line.startswith("snmp-server community") for line in lines)
    # every reference resolves at deploy time
    resolved = resolve(rendered, dict.fromkeys(EXAMPLE_SECRETS, "$6$saltsalt$hash"))   # a value of every kind
    assert PREFIX not in resolved


# --- validation ---------------------------------------------------------------------------------------------------


def test_mtu_out_of_range_names_the_interface_index_and_mtu() -> None:
    cfg = example_config()
    cfg["ethernet_interfaces"][3]["mtu"] = 99999
    issues = validate_structured_config(DEVICE, cfg)
    assert [i.path for i in issues] == ["ethernet_interfaces[3].mtu"]
    assert "65535" in issues[0].message
    assert str(issues[0]).startswith(f"{DEVICE}: ethernet_interfaces[3].mtu: ")


def test_string_where_an_int_goes_is_an_issue() -> None:
    cfg = example_config()
    cfg["ethernet_interfaces"][0]["mtu"] = "jumbo"
    assert validate_structured_config(DEVICE, cfg) == [
        AvdIssue(DEVICE, "ethernet_interfaces[0].mtu", "Invalid type 'Str'. Expected 'Int'.")
    ]


def test_numeric_string_and_int_asn_are_coerced_not_reported() -> None:
    cfg = example_config()
    cfg["ethernet_interfaces"][0]["mtu"] = "9100"
    cfg["router_bgp"]["as"] = 4200000101
    assert validate_structured_config(DEVICE, cfg) == []
    assert "router bgp 4200000101" in render_eos_config(cfg).splitlines()


@pytest.mark.parametrize(
    "garbage",
    [
        {"ethernet_interfaces": "x"},
        {"ethernet_interfaces": [None, 1, "x"]},
        {"router_bgp": []},
        {"hostname": float("nan")},
        {"hostname": ipaddress.ip_address("10.0.0.1")},
        {("tuple", "key"): 1},
        {"ethernet_interfaces": [{"name": "Ethernet1", "ip_address": 31}]},
        None,
        [],
        "text",
    ],
    ids=repr,
)
def test_validate_never_raises_on_garbage(garbage: object) -> None:
    issues = validate_structured_config(DEVICE, garbage)  # type: ignore[arg-type]
    assert issues and all(isinstance(i, AvdIssue) for i in issues)


def test_validate_reports_a_self_referencing_structure() -> None:
    cfg: dict = {"hostname": "x"}
    cfg["metadata"] = cfg
    assert validate_structured_config(DEVICE, cfg)


def test_unknown_nested_key_is_reported_by_pyavd() -> None:
    cfg = example_config()
    cfg["ethernet_interfaces"][1]["mtuu"] = 9100
    assert [i.path for i in validate_structured_config(DEVICE, cfg)] == ["ethernet_interfaces[1].mtuu"]


def test_unknown_top_level_key_is_reported_although_pyavd_accepts_it() -> None:
    cfg = example_config()
    cfg["hostnme"] = "z01-ctsw01"
    assert pyavd.validate_structured_config(cfg).validated_data is not None  # pyavd: root allows other keys
    assert [i.path for i in validate_structured_config(DEVICE, cfg)] == ["hostnme"]


def test_deprecated_key_is_reported() -> None:
    cfg = example_config()
    del cfg["ip_tacacs"]
    cfg["ip_tacacs_source_interfaces"] = [{"name": "Management0", "vrf": "MGMT"}]
    issues = validate_structured_config(DEVICE, cfg)
    assert [i.path for i in issues] == ["ip_tacacs_source_interfaces"]
    assert issues[0].message.startswith("deprecated: ")


def test_ip_syntax_is_checked_by_teton_because_pyavd_does_not() -> None:
    cfg = example_config()
    cfg["ethernet_interfaces"][0]["ip_address"] = "10.1.0.300/31"
    cfg["ethernet_interfaces"][1]["ip_address"] = "10.1.0.32"
    cfg["loopback_interfaces"][0]["ip_address"] = "10.0.0.0/24"
    cfg["router_bgp"]["router_id"] = "10.0.0"
    cfg["router_bgp"]["neighbors"][0]["ip_address"] = "10.1.0.x"
    assert pyavd.validate_structured_config(cfg).validated_data is not None
    assert [i.path for i in validate_structured_config(DEVICE, cfg)] == [
        "ethernet_interfaces[0].ip_address",
        "ethernet_interfaces[1].ip_address",
        "loopback_interfaces[0].ip_address",
        "router_bgp.router_id",
        "router_bgp.neighbors[0].ip_address",
    ]


def test_overlapping_interface_subnets_are_reported_per_vrf() -> None:
    cfg = example_config()
    cfg["ethernet_interfaces"][1]["ip_address"] = "10.1.0.1/31"  # same /31 as Ethernet3/1/1
    issues = validate_structured_config(DEVICE, cfg)
    assert [i.path for i in issues] == ["ethernet_interfaces[1].ip_address"]
    assert "overlaps 10.1.0.0/31 of ethernet_interfaces[0].ip_address" in issues[0].message
    cfg["ethernet_interfaces"][1]["vrf"] = "OTHER"
    assert [i.path for i in validate_structured_config(DEVICE, cfg)] == []


def test_bad_as_numbers_are_reported() -> None:
    cfg = example_config()
    cfg["router_bgp"]["as"] = "4294967296"
    cfg["router_bgp"]["neighbors"][2]["remote_as"] = "RTSW"
    assert [i.path for i in validate_structured_config(DEVICE, cfg)] == [
        "router_bgp.as",
        "router_bgp.neighbors[2].remote_as",
    ]


def test_line_break_in_a_description_is_reported() -> None:
    cfg = example_config()
    cfg["ethernet_interfaces"][0]["description"] = "z01-r001-rtsw\nusername evil privilege 15 nopassword"
    assert [i.path for i in validate_structured_config(DEVICE, cfg)] == ["ethernet_interfaces[0].description"]


def test_render_refuses_a_config_with_issues() -> None:
    cfg = example_config()
    cfg["ethernet_interfaces"][3]["mtu"] = 99999
    with pytest.raises(AvdValidationError) as err:
        render_eos_config(cfg)
    assert [i.path for i in err.value.issues] == ["ethernet_interfaces[3].mtu"]


def test_dict_first_getattr_on_pyavds_undefined_is_what_jinja_gives() -> None:
    from pyavd.templater import Undefined

    env = jinja2.Environment(undefined=Undefined)
    fast = eos_avd._dict_first_getattr(env)
    missing = fast({"a": 1}, "logging")
    assert isinstance(missing, Undefined)
    for name in ("event", "items", "_undefined_name", "_undefined_hint", "__class__", "__dict__"):
        assert fast(missing, name) is jinja2.Environment.getattr(env, missing, name) or (
            fast(missing, name) == jinja2.Environment.getattr(env, missing, name)), name
    assert fast(missing, "event") is missing


@pytest.mark.parametrize("value", [None, 0, 1, "", "x", [], {}, False, True, jinja2.Undefined(name="u")], ids=repr)
def test_plain_defined_answers_as_pyavds_defined(value: object) -> None:
    from pyavd.j2tests.defined import defined

    plain = functools.partial(eos_avd._plain_defined, defined)
    for args in [(), (None,), (True,), (False,), ("x",), (0,), (1,)]:
        assert plain(value, *args) == defined(value, *args), args
    for kwargs in [{"var_type": "str"}, {"var_type": "int"}, {"var_type": "dict"}, {"fail_action": "warning"}]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert plain(value, **kwargs) == defined(value, **kwargs), kwargs
    with pytest.raises(ValueError, match="expected"):
        plain(None, fail_action="error")


def _reference_render(validated: dict) -> str:
    return str(pyavd.get_device_config(validated))


def _assert_fast_render_is_pyavds(fabric: object, step: int) -> int:
    from teton.targets.eos.structured import structured_config

    n = 0
    for d in fabric.switches("eos")[::step]:  # type: ignore[attr-defined]
        issues, validated = eos_avd.validated_structured_config(d.name, structured_config(fabric, d))
        assert not issues and validated is not None
        assert eos_avd.render_validated(validated) == _reference_render(validated), d.name
        n += 1
    return n


def test_every_lab_switch_renders_as_pyavds_get_device_config(lab_fabric) -> None:
    assert eos_avd._reused_templar() is not None
    assert _assert_fast_render_is_pyavds(lab_fabric, 1) == 16
    assert eos_inline._NOT_INLINED == set()   # the templates rewritten compiled
    render = eos_avd._reused_templar()
    loaded = vars(render.environment.loader.module)  # type: ignore[union-attr]
    assert all("_teton_u0" in vars(loaded[m]) for m in eos_inline.INLINED)
    assert "_teton_u0" not in vars(loaded["eos__router_general"])


def test_warm_templar_loads_the_rewritten_templates_for_the_workers() -> None:
    eos_avd.warm_templar()
    render = eos_avd._reused_templar()
    loaded = vars(render.environment.loader.module)  # type: ignore[union-attr]
    assert eos_inline.INLINED <= set(loaded) and all("_teton_u0" in vars(loaded[m]) for m in eos_inline.INLINED)


@pytest.mark.scale24k
def test_a_sample_of_the_24k_switches_renders_as_pyavds_get_device_config() -> None:
    from tests.helpers import REF24K
    from teton.pipeline import load_and_design

    fabric = load_and_design(REF24K).fabric
    assert {d.role for d in fabric.switches("eos")[::12]} == {d.role for d in fabric.switches("eos")}
    assert _assert_fast_render_is_pyavds(fabric, 12) == 16


_PROBES = '''
def field(x):
    return environment.getattr(x, "mtu")
def nested(x):
    return environment.getattr(environment.getattr(environment.getattr(x, "logging"), "event"), "link_status")
def method(x):
    return environment.getattr(x, "items")
def undefined_attribute(x):
    return environment.getattr(x, "_undefined_name")
def twice(x):
    return [environment.getattr(x, "mtu"), environment.getattr(environment.getattr(x, "a"), "mtu")]
'''


def test_inlined_getattr_gives_what_dict_first_getattr_gives(tmp_path: Path) -> None:
    from pyavd.templater import Undefined

    path = tmp_path / "probes.py"
    path.write_text(_PROBES)
    env = jinja2.Environment(undefined=Undefined)
    fast = eos_avd._dict_first_getattr(env)
    mod = eos_inline._inlined_module("probes", path, Undefined)
    mod.environment = env
    assert set(vars(mod)) >= {"_teton_u0", "_teton_u1", "_teton_u2", "_teton_u3", "_teton_u4"}

    class Sub(dict):
        """A dict subclass: not `type(x) is dict`, so the inlined read takes Jinja's own getattr."""

    class Obj:
        mtu = 1500
        items = "an attribute"

    undefined = fast({}, "x")
    objects = [{"mtu": 9214}, {"mtu": None}, {"mtu": 0}, {}, {"logging": {"event": {"link_status": True}}},
               {"logging": {"event": {}}}, {"logging": {}}, {"logging": None}, {"items": 1, "mtu": 2},
               {"a": {"mtu": 3}}, Sub(mtu=5), Sub(), Obj(), undefined, [1], "s", None, 7]

    def same(a: object, b: object) -> bool:
        if isinstance(b, jinja2.Undefined):
            if not (type(a) is type(b) and a._undefined_name == b._undefined_name):   # type: ignore[attr-defined]
                return False
            with pytest.raises(jinja2.UndefinedError) as ea:
                str(a)
            with pytest.raises(jinja2.UndefinedError) as eb:
                str(b)
            return str(ea.value) == str(eb.value)
        return bool(a == b and type(a) is type(b))

    reference = {
        "field": lambda x: fast(x, "mtu"),
        "nested": lambda x: fast(fast(fast(x, "logging"), "event"), "link_status"),
        "method": lambda x: fast(x, "items"),
        "undefined_attribute": lambda x: fast(x, "_undefined_name"),
        "twice": lambda x: [fast(x, "mtu"), fast(fast(x, "a"), "mtu")],
    }
    for name, want in reference.items():
        for x in objects:
            try:
                expected: object = want(x)
            except Exception as exc:  # noqa: BLE001 - the same exception both ways
                with pytest.raises(type(exc)):
                    getattr(mod, name)(x)
                continue
            got = getattr(mod, name)(x)
            if name == "twice":
                assert all(same(g, e) for g, e in zip(got, expected, strict=True)), (name, x)   # type: ignore[call-overload]
            else:
                assert same(got, expected), (name, x)
    assert mod.nested({"logging": {}}) is mod.nested({"logging": {}})   # one Undefined per field name and module


def test_inlining_rewrites_the_templates_and_only_dict_fields() -> None:
    from pyavd.constants import EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH
    from pyavd.templater import Undefined

    path = Path(EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH) / "eos__ethernet_interfaces.py"
    tree = __import__("ast").parse(path.read_text())
    rewrite = eos_inline._Inliner(tree, frozenset(dir(Undefined)), True)
    rewrite.visit(tree)
    assert rewrite.getattrs > 1000 and len(rewrite.names) > 200 and rewrite.defined > 400
    assert not set(rewrite.names) & set(dir(dict))
    mod = eos_inline._inlined_module("eos__ethernet_interfaces", path, Undefined)
    assert isinstance(mod._teton_u0, Undefined)
    assert eos_avd._reused_templar() is not None


def test_the_text_rewrite_of_each_template_is_the_inliners() -> None:
    """`_inlined_source` (the loader's) gives the AST `_Inliner` gives, its U_name globals named by field, on the same
    lines: every template of `INLINED` and nearly all others (those left hold calls whose operand is another kind of
    expression, left as calls)."""
    import ast

    from pyavd.constants import EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH
    from pyavd.templater import Undefined

    attributes = frozenset(dir(Undefined))

    def dumped(tree: ast.AST, names: dict[str, str]) -> str:
        field = {var: name for name, var in names.items()}
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and node.id in field:
                node.id = f"U_{field[node.id]}"
        return ast.dump(tree)

    same = []
    sources = sorted(Path(EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH).glob("*.py"))
    for path in sources:
        source = path.read_text()
        text, names = eos_inline._inlined_source(source, attributes, True)
        assert text.count("\n") == source.count("\n"), path.name
        tree = ast.parse(source)
        inliner = eos_inline._Inliner(tree, attributes, True)
        if dumped(ast.parse(text), names) == dumped(inliner.visit(tree), inliner.names):
            same.append(path.stem)
    assert eos_inline.INLINED <= set(same) and len(same) >= len(sources) - 10


def test_no_template_shows_an_undefineds_object() -> None:
    """The inlined getattr's Undefined of a missing field holds an empty dict where Jinja's holds the dict itself:
    only an error message (the same: "'dict object' has no attribute ...") or a repr could show it, and no template
    asks for a repr."""
    from pyavd.constants import EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH

    sources = sorted(Path(EOS_CLI_CONFIG_GEN_JINJA2_PRECOMPILED_TEMPLATE_PATH).glob("*.py"))
    assert len(sources) > 150
    shown = [p.name for p in sources if re.search(r"repr|pprint|tojson|to_json|to_nice|%r|!r|_undefined_obj",
                                                    p.read_text())]
    assert shown == []


_DEFINED_PROBES = '''
def probes(x):
    try:
        t_1 = environment.tests['arista.avd.defined']
    except KeyError:
        def t_1(*unused):
            raise RuntimeError("no test")
    t_2 = environment.tests['arista.avd.defined']
    t_2 = len
    return [t_1(x), t_1(x, True), t_1(x, False), t_1(x, "x"), t_1(x, 0), t_1(x, None), t_1(environment.getattr(x, "a")),
            t_1(environment.getattr(x, "a"), True), t_2([x])]
'''


def test_inlined_defined_test_answers_as_plain_defined(tmp_path: Path) -> None:
    import ast

    from pyavd.j2tests.defined import defined
    from pyavd.templater import Undefined

    path = tmp_path / "probes.py"
    path.write_text(_DEFINED_PROBES)
    tree = ast.parse(_DEFINED_PROBES)
    assert eos_inline._defined_tests(tree) == {"t_1"}   # t_2 is bound to something else too
    inline = eos_inline._Inliner(tree, frozenset(dir(Undefined)), True)
    inline.visit(tree)
    assert inline.defined == 8 and inline.getattrs == 2
    env = jinja2.Environment(undefined=Undefined)
    env.getattr = eos_avd._dict_first_getattr(env)  # type: ignore[method-assign]
    env.tests["arista.avd.defined"] = functools.partial(eos_avd._plain_defined, defined)
    fast = eos_inline._inlined_module("probes", path, Undefined)
    slow = eos_inline._inlined_module("probes_slow", path, Undefined, defined=False)
    fast.environment = slow.environment = env
    values = [None, 0, 1, "", "x", [], {}, False, True, jinja2.Undefined(name="u"), Undefined(name="v"),
              {"a": True}, {"a": None}, {"a": False}, {"a": "x"}, {"a": 1}, {"a": 1.0}]

    def outcome(probes: object, x: object) -> object:
        try:
            got = probes(x)  # type: ignore[operator]
        except jinja2.UndefinedError as exc:   # getattr of Jinja's own Undefined raises, both ways
            return str(exc)
        return [(type(v), v) for v in got]

    outcomes = [outcome(fast.probes, x) for x in values]
    assert outcomes == [outcome(slow.probes, x) for x in values]
    assert sum(isinstance(o, str) for o in outcomes) == 1


def _natural_sort_outcome(fn, iterable, args, kwargs) -> tuple:   # noqa: ANN001 - the filter under test
    try:
        return ("ok", fn(iterable, *args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - the same error is the point
        return ("raised", type(exc), str(exc))


def test_memo_natural_sort_answers_as_pyavds_on_random_data() -> None:
    import random

    from jinja2.utils import Namespace
    from markupsafe import Markup
    from pyavd.j2filters.natural_sort import _alphanum_key, natural_sort

    ours = eos_avd._memo_natural_sort(natural_sort, _alphanum_key)
    rnd = random.Random(2026)
    scalars = ["Ethernet1/10/1", "ethernet1/2/1", "Ethernet1/2/1", "10.0.0.10", "10.0.0.9", "a", "", "B", "b02",
               "b2", "x10y", "\u0661\u0662", "²3", 0, 7, 10, -3, 2**70, True, False, 1.5, None, Markup("E10"),
               ("t", 1)]

    def item() -> object:
        kind = rnd.randrange(6)
        if kind < 2:
            return rnd.choice(scalars)
        if kind < 5:
            d = {k: rnd.choice(scalars) for k in rnd.sample(["name", "id", "other"], rnd.randrange(3))}
            return d if kind < 4 else Namespace(**d)
        return rnd.choice([{"name": {"nested": 1}}, {"name": [1, 2]}, []])

    calls = 0
    for round_ in range(4000):
        iterable = [item() for _ in range(rnd.randrange(5))]
        if rnd.random() < 0.3:   # one kind only: mostly sortable
            iterable = [x for x in iterable if type(x) is dict] or [rnd.choice(scalars[:12]) for _ in range(3)]
        args: tuple = (rnd.choice([None, "name", "id"]),) if rnd.random() < 0.8 else ()
        kwargs = {k: v for k, v in [("strict", rnd.choice([True, False])),
                                    ("ignore_case", rnd.choice([True, False, 0, 1, "", None])),
                                    ("default_value", rnd.choice([None, "0", 5, "z9"]))] if rnd.random() < 0.4}
        special = rnd.randrange(5) if round_ % 500 == 0 else -1   # not a list: made anew for each filter

        def make(special: int = special, iterable: list = iterable) -> object:
            return ([None, jinja2.Undefined(), pyavd_undefined(), (x for x in "b10a2"), {"b": 1, "a": 2}][special]
                    if special >= 0 else list(iterable))

        want = _natural_sort_outcome(natural_sort, make(), args, kwargs)
        assert _natural_sort_outcome(ours, make(), args, kwargs) == want, (iterable, args, kwargs)
        calls += want[0] == "ok"
    assert 1000 < calls < 3900   # sorted and failed both often


def pyavd_undefined() -> object:
    from pyavd.templater import Undefined

    return Undefined(name="x")


def test_the_reused_templar_sorts_with_the_memo_natural_sort() -> None:
    render = eos_avd._reused_templar()
    assert render is not None
    assert render.environment.filters["arista.avd.natural_sort"].__qualname__.startswith("_memo_natural_sort")
