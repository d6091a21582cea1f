"""`teton diff` knows an expansion: each device that changes is added, removed, attached (it only gains or loses whole
attachment lines: ports to added/removed devices and the sessions over them), renumbered (something it keeps moves) or
changed (an intent), and the verdict weighs the classes.

Fixtures: small synthetic comparisons (three switches, hand-written facts); the lab with a third zone (it declares no
room, so its CTSW-ATSW links move), also repaired by hand into an expansion for the report's shapes; and the lab with
room to grow (`tests/design/test_growth.py`), where a zone added is a real expansion.
"""

from __future__ import annotations

import copy
import json
from types import SimpleNamespace
from typing import Any

import pytest

from tests.helpers import write_spec
from teton.diff import DiffResult, diff_specs
from teton.diff.classify import RENUMBERED_REASON, bounded, classify
from teton.diff.engine import Comparison, DeviceChange
from teton.diff.verdict import verdict
from teton.pipeline.record import DeviceInfo

# ------------------------------------------------------------------------------------------------ synthetic sides


def facts(asn: int, ports: dict[str, tuple[str, str]], sessions: list[str], **extra: Any) -> dict[str, Any]:
    """Facts as teton.diff.facts writes them: `ports` is {port: (peer:port, address/len)}."""
    routing = {"maximum_prefixes": "7000", "groups": ["DOWN_V4 ipv4 down passive"], **extra.pop("routing", {})}
    return {"asn": asn, "sessions": sessions, "routing": routing,
            "addresses": {"loopback4": extra.pop("loopback4", "10.0.0.1/32"),
                          **{p: a for p, (_, a) in ports.items()}},
            "links": {p: f"down {peer} 400G mtu 9100" for p, (peer, _) in ports.items()},
            "fields": {"interfaces": str(sorted(ports)), "routing": str(sorted(sessions)) + repr(routing),
                       "qos": extra.pop("qos", "q1")}}


def info(role: str, nos: str | None = "eos", zone: int | None = None) -> DeviceInfo:
    return DeviceInfo(role, zone, "r1", "backend", nos, "")


def comparison(devices: list[DeviceChange], old: dict[str, DeviceInfo], new: dict[str, DeviceInfo]) -> Comparison:
    """A comparison of stand-in sides (a label and an index are all the verdict and the report read of a side)."""
    return Comparison(SimpleNamespace(label="old", index=old), SimpleNamespace(label="new", index=new),  # type: ignore[arg-type]
                      devices, [], [])


ATSW = {"Ethernet1": ("z01-ctsw01:Ethernet9", "10.1.0.0/31"), "Ethernet2": ("z02-ctsw01:Ethernet9", "10.1.0.2/31")}
ATSW_SESSIONS = ["10.1.0.0 10.1.0.1 65101", "10.1.0.2 10.1.0.3 65102"]
ATSW_GAINS = {"Ethernet3": ("z03-ctsw01:Ethernet9", "10.1.0.4/31")}


def grown(**extra: Any) -> tuple[DeviceChange, Comparison]:
    """atsw01 of a two-zone cluster, a third zone's ctsw added; `extra` edits atsw01's new facts."""
    new_ports = {**ATSW, **ATSW_GAINS, **extra.pop("ports", {})}
    sessions = extra.pop("sessions", [*ATSW_SESSIONS, "10.1.0.4 10.1.0.5 65103"])
    atsw = DeviceChange("atsw01", info("atsw"), "changed", old=facts(65000, ATSW, ATSW_SESSIONS),
                        new=facts(extra.pop("asn", 65000), new_ports, sessions, **extra))
    added = DeviceChange("z03-ctsw01", info("ctsw", zone=3), "added")
    old = {"atsw01": info("atsw"), "z01-ctsw01": info("ctsw", zone=1), "z02-ctsw01": info("ctsw", zone=2)}
    return atsw, comparison([atsw, added], old, {**old, "z03-ctsw01": info("ctsw", zone=3)})


def test_a_device_that_only_gains_a_port_and_its_session_is_attached():
    atsw, c = grown()
    k = classify(c).of["atsw01"]
    assert k.kind == "attached", k
    assert k.ports_added == ("Ethernet3 -> z03-ctsw01:Ethernet9",) and k.sessions_added == ("10.1.0.4 10.1.0.5",)
    assert k.moved == k.intents == k.ports_removed == k.sessions_removed == () and k.reason == ""
    found = classify(c)
    assert found.kind == "expansion" and found.counts()["attached"] == 1 and found.counts()["added"] == 1
    assert found.by_role()["ctsw"]["added"] == 1 and found.by_role()["atsw"]["attached"] == 1
    level, reasons = verdict(c)
    rules = {r.rule: r for r in reasons}
    assert level == "medium" and "expansion" in rules and rules["expansion"].level == "low"
    assert "atsw01" in rules["expansion"].message
    assert rules["every-atsw"].level == "medium" and "only adding sessions and ports" in rules["every-atsw"].message
    assert "most-switches" not in rules, "1 of 3 existing switches changes (the next test: 2 of 3)"


def test_a_pure_expansion_touching_more_than_half_the_switches_is_not_high():
    atsw, c = grown()
    ctsw_old = facts(65101, {"Ethernet9": ("atsw01:Ethernet1", "10.1.0.1/31")}, ["10.1.0.1 10.1.0.0 65000"])
    ctsw_new = copy.deepcopy(ctsw_old)              # gains a (made-up) link to the added CTSW
    ctsw_new["links"]["Ethernet10"] = "up z03-ctsw01:Ethernet11 400G mtu 9100"
    ctsw_new["addresses"]["Ethernet10"] = "10.1.0.7/31"
    ctsw_new["sessions"].append("10.1.0.7 10.1.0.6 65103")
    ctsw_new["fields"]["interfaces"] = "more"
    c.devices.insert(1, DeviceChange("z01-ctsw01", c.old.index["z01-ctsw01"], "changed", old=ctsw_old, new=ctsw_new))
    found = classify(c)
    assert [k.kind for k in found.devices] == ["attached", "attached", "added"]
    level, reasons = verdict(c)
    rules = {r.rule: r for r in reasons}
    assert rules["most-switches"].level == "medium" and "an expansion" in rules["most-switches"].message
    assert "2 of the 3 existing switches" in rules["most-switches"].message
    assert level == "medium", reasons


def test_a_moved_address_is_renumbered_and_high():
    atsw, c = grown(ports={"Ethernet1": ("z01-ctsw01:Ethernet9", "10.1.0.8/31")},
                    sessions=["10.1.0.8 10.1.0.9 65101", "10.1.0.2 10.1.0.3 65102", "10.1.0.4 10.1.0.5 65103"])
    k = classify(c).of["atsw01"]
    assert k.kind == "renumbered" and k.reason == RENUMBERED_REASON
    assert k.moved[0] == "Ethernet1 10.1.0.0/31 -> 10.1.0.8/31"
    assert any(m.startswith("session 10.1.0.8 10.1.0.9 65101 is new on a port it keeps") for m in k.moved)
    assert classify(c).kind is None
    level, reasons = verdict(c)
    rules = {r.rule: r for r in reasons}
    assert level == "high"
    assert rules["renumbered"].level == "high"
    assert "1 existing switch(es) renumbered, e.g. atsw01: Ethernet1 10.1.0.0/31 -> 10.1.0.8/31" in \
        rules["renumbered"].message
    assert rules["every-atsw"].level == "high" and "expansion" not in rules


def test_an_asn_a_loopback_and_a_rewired_port_are_renumbering():
    assert classify(grown(asn=65009)[1]).of["atsw01"].moved == ("ASN 65000 -> 65009",)
    assert classify(grown(loopback4="10.0.0.99/32")[1]).of["atsw01"].moved == \
        ("loopback4 10.0.0.1/32 -> 10.0.0.99/32",)
    k = classify(grown(ports={"Ethernet2": ("z03-ctsw01:Ethernet1", "10.1.0.2/31")})[1]).of["atsw01"]
    assert k.kind == "renumbered" and k.moved[0].startswith("Ethernet2 down z02-ctsw01:Ethernet9 400G")


def test_a_policy_change_with_the_growth_is_changed_and_named():
    atsw, c = grown(routing={"maximum_prefixes": "8000"})
    k = classify(c).of["atsw01"]
    assert k.kind == "changed" and k.intents == ("routing.maximum_prefixes 7000 -> 8000",)
    assert k.ports_added, "what it gains is still said"
    level, reasons = verdict(c)
    assert level == "high" and any(r.rule == "every-atsw" and "routing" in r.message for r in reasons)


def test_a_link_to_a_device_on_both_sides_is_not_an_attachment():
    k = classify(grown(ports={"Ethernet3": ("z02-ctsw01:Ethernet10", "10.1.0.4/31")})[1]).of["atsw01"]
    assert k.kind == "changed" and "Ethernet3 gains a link to z02-ctsw01, which is on both sides" in k.intents


def test_a_decommission_only_loses_attachment_lines():
    atsw = DeviceChange("atsw01", info("atsw"), "changed", old=facts(65000, {**ATSW, **ATSW_GAINS},
                                                                     [*ATSW_SESSIONS, "10.1.0.4 10.1.0.5 65103"]),
                        new=facts(65000, ATSW, ATSW_SESSIONS))
    gone = DeviceChange("z03-ctsw01", info("ctsw", zone=3), "removed")
    old = {"atsw01": info("atsw"), "z01-ctsw01": info("ctsw", zone=1), "z03-ctsw01": info("ctsw", zone=3)}
    c = comparison([atsw, gone], old, {n: i for n, i in old.items() if n != "z03-ctsw01"})
    found = classify(c)
    assert found.kind == "decommission" and found.of["atsw01"].kind == "attached"
    assert found.of["atsw01"].ports_removed == ("Ethernet3 -> z03-ctsw01:Ethernet9",)
    level, reasons = verdict(c)
    rules = {r.level + " " + r.rule: r.message for r in reasons}
    assert level == "medium", reasons
    assert "removes every CTSW of zone 3 (1): the zone is decommissioned" in rules["medium every-ctsw"]
    assert "only losing the sessions and ports of removed devices" in rules["medium every-atsw"]
    assert "low decommission" in rules


def test_bounded_lists_say_how_many_more():
    assert bounded(["a", "b", "c"], 2) == ["a", "b", "and 1 more"] and bounded(["a"], 2) == ["a"]


# ------------------------------------------------------------------------------------------- the lab with a zone


@pytest.fixture(scope="module")
def zone_added(tmp_path_factory) -> DiffResult:
    import yaml

    from tests.helpers import LAB
    tmp = tmp_path_factory.mktemp("zone")
    data = yaml.safe_load(LAB.read_text())
    old = write_spec(tmp, data, "old.yaml")
    data["zones"] += 1
    return diff_specs(str(old), str(write_spec(tmp, data, "new.yaml")))


def test_a_lab_without_room_renumbers_when_a_zone_is_added_and_says_why(zone_added):
    """The lab declares no room: laid out for what it has, a zone added moves the CTSW-ATSW links (HIGH), and the
    reason names the cure."""
    found = classify(zone_added.comparison)
    assert found.of["atsw01"].kind == "renumbered" and found.kind is None
    assert found.of["atsw01"].reason.startswith("the spec declares no room")
    assert zone_added.level == "high" and any(r.rule == "renumbered" for r in zone_added.reasons)


def test_a_lab_with_room_zone_added_is_an_expansion(tmp_path):
    """The real design with room to grow: the ATSWs and the spines are attached, nothing is renumbered."""
    from tests.design.test_growth import lab_with_room

    data = lab_with_room()
    old = write_spec(tmp_path, data, "old.yaml")
    data["zones"] += 1
    result = diff_specs(str(old), str(write_spec(tmp_path, data, "new.yaml")))
    found = classify(result.comparison)
    assert found.kind == "expansion"
    assert {k.name for k in found.devices if k.existing} == {"atsw01", "atsw02", "ssw01-01", "ssw02-01"}
    assert {k.kind for k in found.devices if k.existing} == {"attached"}
    assert result.level == "medium" and not any(r.rule == "renumbered" for r in result.reasons)


def test_a_changed_room_is_the_reason_for_renumbering(tmp_path):
    from tests.design.test_growth import lab_with_room

    data = lab_with_room()
    old = write_spec(tmp_path, data, "old.yaml")
    data["room"]["racks_per_zone"] = 3
    found = classify(diff_specs(str(old), str(write_spec(tmp_path, data, "new.yaml"))).comparison)
    reasons = {k.reason for k in found.devices if k.kind == "renumbered"}
    assert reasons == {"the room changed (racks_per_zone 4 -> 3): every place after it moves"}


def repaired(result: DiffResult) -> Comparison:
    """The zone-added comparison as a design that does not renumber would give it: each existing device keeps its
    facts and only gains the links (with their addresses and sessions) to the added devices; devices that gain none
    do not change; the fabric-wide intents do not change either (today they change only through the renumbering)."""
    c = copy.copy(result.comparison)
    added = {d.name for d in c.devices if d.status == "added"}
    keep: list[DeviceChange] = []
    for d in c.devices:
        if d.status != "changed":
            keep.append(d)
            continue
        assert d.old is not None and d.new is not None
        gains = {p: link for p, link in d.new["links"].items() if link.split(" ")[1].split(":")[0] in added}
        if not gains:
            continue
        new = copy.deepcopy(d.old)
        taken = {a.split("/")[0] for v in d.old["addresses"].values() for a in v.split(" ")}
        for i, (p, link) in enumerate(sorted(gains.items())):
            port = p if p not in d.old["links"] else f"Ethernet9{i}/1"
            new["links"][port] = link
            fresh: dict[str, tuple[str, str]] = {}        # an address a kept port holds: a free one (and its peer's)
            for a in d.new["addresses"].get(p, "").split(" "):
                bare, length = a.split("/")
                if bare in taken:
                    fresh[bare] = (f"fd00:250:{i}::", f"fd00:250:{i}::1") if ":" in bare else \
                        (f"10.250.{i}.0", f"10.250.{i}.1")
                new["addresses"][port] = " ".join(x for x in (new["addresses"].get(port),
                                                              f"{fresh.get(bare, (bare,))[0]}/{length}") if x)
            local = {a.split("/")[0] for a in d.new["addresses"].get(p, "").split(" ") if a}
            for entry in d.new["sessions"]:
                here, there, asn = entry.split(" ")
                if here in local:
                    here, there = fresh.get(here, (here, there))
                    new["sessions"].append(f"{here} {there} {asn}")
        new["fields"] = {**d.old["fields"], "interfaces": d.new["fields"]["interfaces"],
                         "routing": d.new["fields"]["routing"]}
        keep.append(DeviceChange(d.name, d.info, "changed", d.files, d.old, new))
    return Comparison(c.old, c.new, keep, c.files, [])


def test_a_lab_zone_added_without_renumbering_is_an_expansion(zone_added):
    c = repaired(zone_added)
    found = classify(c)
    existing = {k.name: k.kind for k in found.devices if k.existing}
    assert existing and set(existing.values()) == {"attached"}, existing
    assert {"atsw01", "atsw02"} <= existing.keys()
    assert found.kind == "expansion"
    atsw = found.of["atsw01"]
    assert len(atsw.ports_added) == 4 and all("z03-ctsw0" in p for p in atsw.ports_added)
    assert len(atsw.sessions_added) == 8, "IPv4 and IPv6 over each new port"
    level, reasons = verdict(c)
    rules = {r.rule: r for r in reasons}
    assert level == "medium", reasons
    assert "expansion" in rules and "renumbered" not in rules
    assert rules["every-atsw"].level == "medium"
    result = DiffResult(c, level, reasons, [])
    data = json.loads(result.render("json"))
    assert data["classification"]["kind"] == "expansion"
    assert data["classification"]["counts"]["attached"] == len(existing)
    assert data["classification"]["counts"]["added"] == len(data["classification"]["added"]) == 14
    by_name = {d["name"]: d for d in data["devices"]}
    assert by_name["atsw01"]["class"] == "attached" and len(by_name["atsw01"]["ports_added"]) == 4
    md = result.render("markdown")
    assert "**Classes: an expansion: 14 added, 0 removed; of the existing devices that change, " in md
    assert "- attached `atsw01`: gains ports 4 (" in md and "| role | added | removed | attached |" in md
    assert "atsw01</code> (agg-n01) · changed (attached)" in md
    text = result.render("text")
    assert "classes: an expansion" in text and "# atsw01 (agg-n01): changed (attached)" in text
