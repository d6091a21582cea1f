"""teton.targets.eos.anta_catalog.device_catalog_data, the catalog a render writes, is the long way's data
(`catalog_data(device_catalog(...))`: pyavd's factories on the whole structured config, teton's tests as ANTA's
models) on every lab switch and a sample of the 24k reference's, and its shortcuts hold alone: the keys pyavd's
factories read, the inputs written directly, an address's text."""

from __future__ import annotations

import random
import re
from ipaddress import IPv6Address, ip_address, ip_interface
from pathlib import Path

import pyavd
import pytest

from teton.fabric.model import Fabric
from teton.targets.eos import anta_catalog
from teton.targets.eos.anta_catalog import (
    FACTORY_KEYS,
    catalog_data,
    catalog_yaml,
    device_catalog,
    device_catalog_data,
    factory_view,
    own_tests,
    own_tests_data,
)
from teton.targets.eos.avd import validated_structured_config
from teton.targets.eos.structured import structured_config


def _check(fabric: Fabric, step: int) -> int:
    n = 0
    for d in fabric.switches("eos")[::step]:
        issues, validated = validated_structured_config(d.name, structured_config(fabric, d))
        assert not issues and validated is not None
        assert factory_view(validated) != validated   # the shortcut is taken
        long_way = catalog_data(device_catalog(fabric, d, validated))
        assert device_catalog_data(fabric, d, validated) == long_way, d.name
        assert catalog_yaml(d.name, device_catalog_data(fabric, d, validated)) == catalog_yaml(
            d.name, device_catalog(fabric, d, validated)), d.name
        dumped = [(t.test, t.inputs.model_dump(mode="json", exclude_unset=True)) for t in own_tests(fabric, d)]
        assert anta_catalog._own_tests_data(fabric, d) == dumped, d.name   # written directly, no fallback
        n += 1
    return n


def test_every_lab_catalog_is_the_long_ways(lab_fabric: Fabric) -> None:
    assert _check(lab_fabric, 1) == len(lab_fabric.switches("eos")) == 16


@pytest.mark.scale24k
def test_a_sample_of_the_24k_catalogs_is_the_long_ways(roce24k) -> None:
    fabric = roce24k.fabric
    assert {d.role for d in fabric.switches("eos")[::12]} == {d.role for d in fabric.switches("eos")}
    assert _check(fabric, 12) == 16


def test_pyavds_factories_read_no_key_left_out_of_their_view() -> None:
    """Every top-level key of the structured config the installed pyavd's input factories name (an attribute of
    `structured_config`, a `StructuredConfigKey`) is one `factory_view` keeps; its version is one whose were read."""
    from pyavd._anta.constants import StructuredConfigKey

    assert pyavd.__version__ in anta_catalog._FACTORY_KEYS_VERIFIED
    sources = sorted((Path(pyavd.__file__).parent / "_anta").rglob("*.py"))
    assert len(sources) > 10
    named: set[str] = set()
    other_uses = []
    for path in sources:
        text = path.read_text()
        named |= set(re.findall(r"structured_config\.([a-z_0-9]+)", text))
        other_uses += [line.strip() for line in text.splitlines()
                       if re.search(r"structured_config(?![.\w])", line)]
    named |= {k.value.split(".")[0] for k in StructuredConfigKey}
    assert "ethernet_interfaces" in named and named <= FACTORY_KEYS, named - FACTORY_KEYS
    # the model is read by attribute, or by a StructuredConfigKey's path (`skip_if_missing_config`), nothing else
    assert all(re.fullmatch(r"(structured_config: EosCliConfigGen|self\.structured_config = data_source\."
                            r"structured_config|structured_config: `EosCliConfigGen` model of the device\.|"
                            r"if not all\(get_v2\(self\.structured_config, value\) for value in key_values\):)", u)
               for u in other_uses), other_uses


def test_pyavds_factories_read_no_field_left_out_of_an_ethernet_item_or_router_bgp() -> None:
    """The fields of an `ethernet_interfaces` item the installed pyavd's _anta sources read (an attribute of the
    interface variables they use, of an item they index) and those of `router_bgp` are ones `factory_view` keeps."""
    sources = sorted((Path(pyavd.__file__).parent / "_anta").rglob("*.py"))
    text = "\n".join(p.read_text() for p in sources)
    read = set(re.findall(r"\b(?:intf|interface|peer_intf|po_intf)\.([a-z_0-9]+)", text))
    read |= set(re.findall(r"ethernet_interfaces\[[^]]+\]\.([a-z_0-9]+)", text))
    # `ipv6_address`: a loopback's (vxlan source); the others are Ethernet fields kept
    assert read - {"ipv6_address"} <= anta_catalog.ETHERNET_FIELDS, read
    # the items are met only by those variables: loops and chains over ethernet_interfaces, one item by its name
    uses = sorted({line.strip() for line in text.splitlines() if "ethernet_interfaces" in line})
    assert uses == [
        'ETHERNET_INTERFACES = "ethernet_interfaces"',   # skip_if_missing_config: the list's truth (its items)
        "all_interfaces = chain(self.structured_config.ethernet_interfaces, "
        "self.structured_config.port_channel_interfaces)",   # then `intf.`
        "def _get_ethernet_interfaces(self) -> Iterator[InterfaceState]:",
        "for intf in self.structured_config.ethernet_interfaces",
        "for intf in self.structured_config.ethernet_interfaces:",
        'if interface_name.startswith("Ethernet") and interface_name in self.structured_config.ethernet_interfaces:',
        "ip_str = self.structured_config.ethernet_interfaces[interface_name].ip_address",
        "return peer.ethernet_interfaces.get(interface_name)",   # the fabric data's, made from the whole config
        "self._get_ethernet_interfaces(),",
        "self.structured_config.ethernet_interfaces,",   # chain(...) of the errdisable test, then `intf.name`
    ], uses
    bgp = set(re.findall(r"router_bgp\.([a-z_0-9]+)", text))
    assert bgp and bgp <= anta_catalog.BGP_FIELDS, bgp


def test_factory_view_trims_an_ethernet_item_and_router_bgp_only_with_their_key() -> None:
    eth = [{"name": "Ethernet1", "mtu": 9100, "shutdown": False}, {"mtu": 1}, "x"]
    cfg = {"ethernet_interfaces": eth, "router_bgp": {"as": "1", "address_family_ipv4": {}, "neighbors": []}}
    assert factory_view(cfg) == {"ethernet_interfaces": [{"name": "Ethernet1", "shutdown": False}, {"mtu": 1}, "x"],
                                 "router_bgp": {"as": "1", "neighbors": []}}
    assert factory_view({"router_bgp": {"eos_cli": "x"}}) == {"router_bgp": {"eos_cli": "x"}}


def test_factory_view_is_the_whole_config_on_another_pyavd(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = {"hostname": "x", "router_bgp": {"as": "1"}, "route_maps": []}
    assert factory_view(cfg) == {"router_bgp": {"as": "1"}}
    monkeypatch.setattr(pyavd, "__version__", "0.0.0")
    assert factory_view(cfg) is cfg


def test_a_value_the_models_would_change_goes_the_long_way(lab_fabric: Fabric,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("et1", "ethernet1/1", "Ethernet1/1/1/1", "Port-Channel1", "", "Ethernet1/1.5"):
        with pytest.raises(anta_catalog._NotPlain):
            anta_catalog._port(name)
    assert anta_catalog._port("Ethernet3/1/1") == "Ethernet3/1/1"
    for bad in (0, 1001, "400", True, None):
        with pytest.raises(anta_catalog._NotPlain):
            anta_catalog._speed(bad)
    for bad in (9100.0, True, "9100"):
        with pytest.raises(anta_catalog._NotPlain):
            anta_catalog._int(bad)
    d = lab_fabric.switches("eos")[0]
    dumped = [(t.test, t.inputs.model_dump(mode="json", exclude_unset=True)) for t in own_tests(lab_fabric, d)]

    def refuse(*_args: object) -> None:
        raise anta_catalog._NotPlain("x")

    monkeypatch.setattr(anta_catalog, "_own_tests_data", refuse)
    assert own_tests_data(lab_fabric, d) == dumped


def test_an_address_is_written_as_ipaddress_writes_it() -> None:
    rnd = random.Random(7)
    cases = ["0.0.0.0", "255.255.255.255", "10.3.80.1", "fd00::2:0:0:1:5003", "FD00::1", "::", "::ffff:1.2.3.4",
             "2001:db8:0:0:0:0:0:1", "1:0:0:1:0:0:0:1", "fd00:0::1"]
    cases += [".".join(str(rnd.randrange(256)) for _ in range(4)) for _ in range(2000)]
    cases += [str(ip_address(rnd.getrandbits(128))) for _ in range(500)]
    cases += [ip_address(rnd.getrandbits(128)).exploded for _ in range(500)]
    for a in cases:
        assert anta_catalog._address_text(a) == str(ip_address(a)), a
    for a in ("010.0.0.1", "256.1.1.1", "1.2.3", "1.2.3.4.5", " 1.2.3.4", "1.2.3.4 ", "１.2.3.4", "::g"):
        with pytest.raises(ValueError):
            anta_catalog._address_text(a)
    interfaces = ["10.0.0.0/31", "10.0.0.1/32", "10.0.0.1/0", "fd00::1/127", "fd00:0::1/64", "10.0.0.1"]
    interfaces += [f"{rnd.randrange(256)}.{rnd.randrange(256)}.1.{rnd.randrange(256)}/{rnd.randrange(33)}"
                   for _ in range(500)]
    interfaces += ["10.0.0.1/33", "10.0.0.1/031", "10.0.0.1/", "10.0.0.1/x", "10.0.0.1/３", "010.0.0.1/31"]
    refused = 0
    for i in interfaces:
        try:
            want = str(ip_interface(i).ip)
        except ValueError:
            refused += 1
            with pytest.raises(ValueError):
                anta_catalog._interface_ip_text(i)
        else:
            assert anta_catalog._interface_ip_text(i) == want, i
    assert refused >= 4


def _ipv6_spellings(rnd: random.Random) -> list[str]:
    """Spellings of a random IPv6 address with runs of zero hextets: ipaddress's, the exploded one, "::" for each
    run of zeros, leading zeros, upper case."""
    words = [rnd.choice((0, 0, 0, rnd.randrange(1, 16), rnd.randrange(1 << 16))) for _ in range(8)]
    a = IPv6Address(sum(w << (16 * (7 - k)) for k, w in enumerate(words)))
    plain = [f"{w:x}" for w in words]
    out = [str(a), a.exploded, ":".join(plain), ":".join(f"{w:X}" for w in words)]
    for start in range(8):
        for end in range(start + 1, 9):
            if all(w == 0 for w in words[start:end]):
                out.append(":".join(plain[:start]) + "::" + ":".join(plain[end:]))
    return out


def test_an_ipv6_address_as_ipaddress_writes_it_is_itself() -> None:
    rnd = random.Random(11)
    cases = ["::", "::1", "1::", "0::1", "1:0::", "::ffff:102:304", "::fffe:102:304", "1:0:0:2:0:0:0:3",
             "1:0:0:0:2:0:0:3", "1:0:0:2::3", "::1:0:0:2:0:0", "1::2:0:0:3", "1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7::",
             "1::2:3:4:5:6:7:8", ":1::", "1:::2", "1::2::3", "01::", "::g", "::1%eth0", "::1.2.3.4", "1:2:3:4:5:6:7"]
    for _ in range(3000):
        cases += _ipv6_spellings(rnd)
    written = 0
    for a in cases:
        try:
            want = str(ip_address(a))
        except ValueError:
            assert not anta_catalog._ipv6_as_written(a), a
            with pytest.raises(ValueError):
                anta_catalog._address_text(a)
            continue
        assert anta_catalog._ipv6_as_written(a) == (want == a and not a.startswith("::ffff:") and "%" not in a), a
        assert anta_catalog._address_text(a) == want, a
        written += want == a
    assert written > 3000
    interfaces = [f"{a}/{rnd.choice((0, 64, 127, 128, 129, '0128', '', 'x', '１'))}" for a in cases[::7]]
    for i in interfaces:
        try:
            want = str(ip_interface(i).ip)
        except ValueError:
            with pytest.raises(ValueError):
                anta_catalog._interface_ip_text(i)
        else:
            assert anta_catalog._interface_ip_text(i) == want, i


def test_the_parent_warms_the_catalogs_only_where_every_one_is_made(lab_fabric: Fabric,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import subprocess
    import sys

    import teton.targets.eos as eos
    from teton.targets.base import RenderContext

    warmed: list[bool] = []
    monkeypatch.setattr(eos, "warm_catalogs", lambda: warmed.append(True))
    monkeypatch.setattr(eos, "warm_templar", lambda: None)
    eos.TARGET.prepare(lab_fabric, RenderContext())
    assert warmed == [True]
    eos.TARGET.prepare(lab_fabric, RenderContext(devices=frozenset({"x"})))
    eos.TARGET.prepare(lab_fabric, RenderContext(cache=object()))  # type: ignore[arg-type]
    assert warmed == [True]
    code = ("import sys; from teton.targets.eos.catalogs import warm_catalogs; warm_catalogs(); "
            "assert {'anta.tests.hardware', 'pyavd._anta.factories', 'pyavd._eos_cli_config_gen.schema'} "
            "<= set(sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": str(Path(eos.__file__).parents[3])})
