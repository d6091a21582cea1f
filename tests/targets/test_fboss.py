"""The FBOSS target: the lab with FBOSS rack switches (RTSW on Minipack2, front-end RSW on Wedge400) renders, every
FBOSS config passes the strict check (the schema walk against FBOSS's pinned IDL, the cross-references against the
box's platform mapping), `validate --rendered` passes over SONiC, EOS and FBOSS mixed, and a config broken on purpose
is refused with the switch, the JSON path and the reason.  FBOSS's own sample configs pass the schema walk."""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import LAB, dcqcn, fboss, write_spec
from teton.cli import main
from teton.findings import SpecError, TetonError
from teton.frr.policy import routing_of
from teton.pipeline import build
from teton.targets.fboss import enums
from teton.targets.fboss.data import base_config, find_fboss_dir, sample_paths
from teton.targets.fboss.idl import Changes, preprocess
from teton.targets.fboss.readback import read_fboss
from teton.targets.fboss.strict import AGENT_ROOT, BGP_ROOT, check_files, load_state
from teton.targets.fboss.walk import walk
from teton.validate.rendered import validate_rendered

RTSW, RSW = "z01-r001-rtsw", "z01-r001-frsw"


@pytest.fixture(scope="session")
def fboss_dir() -> Path:
    try:
        return find_fboss_dir()
    except TetonError as exc:
        pytest.fail(f"FBOSS's reference files are needed (scripts/setup provides them): {exc}")


@pytest.fixture(scope="session")
def state(fboss_dir):
    return load_state()


def fboss_lab(data: dict) -> dict:
    """The lab with its RoCE rack switches and front-end RSWs on FBOSS: its sessions protected by GTSM instead of the
    passwords (test_a_plane_with_fboss_switches_runs_gtsm_instead_of_its_password)."""
    return fboss(data)


@pytest.fixture(scope="module")
def fboss_build(tmp_path_factory, fboss_dir) -> Path:
    spec = write_spec(tmp_path_factory.mktemp("spec"), fboss_lab(yaml.safe_load(LAB.read_text())), "lab.yaml")
    return build(spec, tmp_path_factory.mktemp("build") / "lab").path


def _json(build_dir: Path, device: str, name: str) -> dict:
    return json.loads((build_dir / "devices" / device / name).read_text())


# --------------------------------------------------------------------------------------------- the pinned IDL


def test_the_preprocessing_counts_what_it_changes_and_keeps_every_line(fboss_dir, state):
    """If FBOSS's IDL drifts (a new annotation, a bare enum default), these counts change: look at the new syntax."""
    assert dict(state.schema.changes) == {"annotation include": 45, "annotation": 156, "package": 22,
                                          "bare enum default": 14, "float": 2, "field named end": 1}
    for path in (fboss_dir / "idl").rglob("*.thrift"):
        text = path.read_text()
        assert preprocess(text, set(), Changes()).count("\n") == text.count("\n"), path
    c = Changes()
    out = preprocess('include "thrift/annotation/thrift.thrift"\npackage "x/y"\n@thrift.Deprecated{\n  a = 1\n}\n'
                     "struct S {\n  1: PortSpeed speed = DEFAULT;\n  2: list<T> t = [A, B];\n  3: float f;\n"
                     "  4: PinID end;\n}\n", set(), c)
    assert out.splitlines()[6:10] == ["  1: PortSpeed speed = PortSpeed.DEFAULT;", "  2: list<T> t = [T.A, T.B];",
                                      "  3: double f;", "  4: PinID end_;"]
    assert out.count("\n") == 11 and dict(c.counts) == {"annotation include": 1, "package": 1, "annotation": 1,
                                                        "bare enum default": 2, "float": 1, "field named end": 1}


def test_the_schema_keeps_json_names_types_unions_and_required_fields(state):
    s = state.schema
    assert s.struct("phy.Pin").union and "end" in s.struct("phy.Pin").fields       # renamed back for JSON
    port = s.struct("switch_config.Port").fields
    assert str(port["profileID"].type) == "switch_config.PortProfileID" and not port["logicalID"].required
    assert [f.name for f in s.struct("Address.IPPrefix").fields.values() if f.required] == ["prefixAddress",
                                                                                            "prefixLength"]
    assert str(s.struct("switch_config.SwitchConfig").fields["portQueueConfigs"].type) == \
        "map<string, list<switch_config.PortQueue>>"
    assert s.struct("bgp_config.BgpPeer").fields["remote_as"].deprecated


def test_every_enum_constant_the_target_writes_is_the_idls(state):
    for const, (enum, name) in enums.ENUMS.items():
        values = {n: v for v, n in state.schema.enums[enum].items()}
        assert getattr(enums, const) == values[name], (const, enum, name)


def test_fboss_own_sample_configs_pass_the_schema_walk_and_use_only_deprecated_keys_fboss_still_reads(fboss_dir,
                                                                                                      state):
    deprecated: dict[str, set[str]] = {}
    for path in sample_paths(fboss_dir):
        root = BGP_ROOT if path.suffix == ".conf" else AGENT_ROOT
        issues, notes = walk(state.schema, json.loads(path.read_text()), root)
        assert issues == [], (path.name, issues[:3])
        deprecated[path.name] = {n.field for n in notes}
    assert deprecated["wedge400.agent.json"] == deprecated["fuji.agent.json"] == {
        "switch_config.SwitchSettings.maxRouteCounterIDs_DEPRECATED",
        "switch_config.SwitchSettings.switchIdToSwitchType_DEPRECATED"}
    assert deprecated["bgpcpp-dryrun.conf"] == {
        "bgp_config.BgpConfig.local_as", "bgp_config.BgpPeer.remote_as", "bgp_policy.BgpPolicyAction.type",
        "bgp_policy.BgpPolicyAtomicMatch.prefix_filters", "bgp_policy.BgpPolicyTerm.policy_match_entries"}
    for name in ("Wedge400PlatformMapping.json", "Fuji16QPimPlatformMapping.json"):   # the mappings are thrift too
        data = json.loads((fboss_dir / "platform-mappings" / name).read_text())
        assert walk(state.schema, data, "platform_config.PlatformMapping") == ([], [])


# --------------------------------------------------------------------------------------------- the lab on FBOSS


def test_the_lab_on_fboss_renders_with_fboss_port_names_and_passes_the_strict_check(fboss_build, state):
    rtsw, rsw = _json(fboss_build, RTSW, "agent.conf"), _json(fboss_build, RSW, "agent.conf")
    used = [p for p in rtsw["sw"]["ports"] if p["state"] == enums.ENABLED]
    assert len(rtsw["sw"]["ports"]) == 64 and len(used) == 20        # 16 GPU NICs, 4 CTSWs
    by_name = {p["name"]: p for p in rtsw["sw"]["ports"]}
    assert by_name["eth2/1/1"]["logicalID"] == 3 and by_name["eth2/1/1"]["profileID"] == 35   # DAC: copper 400G
    assert {p["profileID"] for p in used if p["description"].startswith("P2P z01-ctsw")} == {26}   # SMF: optical
    assert all(p["speed"] == 400000 for p in used)
    assert {p["name"] for p in rsw["sw"]["ports"] if p["state"] == enums.ENABLED} == {
        "eth1/1/1", "eth1/2/1", "eth1/3/1", "eth1/4/1", "eth1/5/1", "eth1/6/1"}     # its 400G QSFP-DD cages
    assert rtsw["platform"] == base_config(str(state.root), "fuji")["platform"]
    assert rsw["platform"] == base_config(str(state.root), "wedge400")["platform"]
    fabric = json.loads((fboss_build / "fabric.json").read_text())
    ports = {e["port"] for link in fabric["links"] for e in (link["a"], link["b"]) if e["device"] == RTSW}
    assert ports == {p["name"] for p in used}
    for device in (d["name"] for d in fabric["devices"] if d["nos"] == "fboss"):
        agent, bgp = _json(fboss_build, device, "agent.conf"), _json(fboss_build, device, "bgpcpp.conf")
        platform = "fuji" if "rtsw" in device else "wedge400"
        assert check_files(state, platform, "agent.conf", agent, "bgpcpp.conf", bgp) == [], device


def test_the_rack_switch_carries_the_designs_qos_and_routing(fboss_build):
    sw = _json(fboss_build, RTSW, "agent.conf")["sw"]
    qmap = sw["qosPolicies"][0]["qosMap"]
    dscp = {d: m["internalTrafficClass"] for m in qmap["dscpMaps"] for d in m["fromDscpToTrafficClass"]}
    assert (dscp[26], dscp[48], dscp[46], dscp[0]) == (3, 6, 5, 0)
    assert qmap["pfcPriorityToPgId"]["3"] == 3 and qmap["trafficClassToPgId"]["0"] == 0
    queues = {q["id"]: q for q in sw["portQueueConfigs"]["queues-roce"]}
    assert queues[3]["scheduling"] == enums.DRR and queues[3]["weight"] == 50 and "aqms" not in queues[3]
    assert queues[6]["scheduling"] == enums.STRICT and queues[5]["scheduling"] == enums.STRICT
    port = next(p for p in sw["ports"] if p["name"] == "eth2/1/1")
    assert port["pfc"]["portPgConfigName"] == "pg-400g-5m" and port["pfc"]["watchdog"] == {
        "detectionTimeMsecs": 200, "recoveryTimeMsecs": 200, "recoveryAction": enums.WD_DROP}
    assert sw["portPgConfigs"]["pg-400g-5m"][1] == {
        "id": 3, "name": "lossless", "minLimitBytes": 18432, "headroomLimitBytes": 179968, "resumeOffsetBytes": 4608,
        "bufferPoolName": "ingress_lossless_pool", "scalingFactor": enums.SCALE_ONE}
    assert sw["loadBalancers"][0]["fieldSelection"]["udfGroups"] == ["roce_dst_qp"]
    bgp = _json(fboss_build, RTSW, "bgpcpp.conf")
    assert bgp["local_as_4_byte"] == 4201001001 and len(bgp["peers"]) == 8
    assert [n["prefix"] for n in bgp["networks4"]] == ["10.0.0.6/32", "10.64.0.0/27"]
    export = bgp["policies"]["bgp_policy_statements"][0]
    assert export["name"] == "EXPORT" and [t["name"] for t in export["policy_entries"]] == ["ORIGINATE_V4",
                                                                                            "ORIGINATE_V6"]


def test_the_read_back_gives_the_designed_routing_and_qos(fboss_build):
    from teton.buildfolder import BuildFolder
    from teton.targets import RenderContext, get

    source = BuildFolder(fboss_build)
    fabric = source.fabric()
    views, findings = get("fboss").read_back(source, fabric, RenderContext(), vendor=True)
    assert findings == [] and len(views) == 4 + 4 + 3     # 4 RTSWs, 4 compute RSWs, 3 storage/service RSWs
    view = next(v for v in views if v.name == RTSW)
    designed = fabric.devices[RTSW].routing
    assert view.bgp is not None and designed is not None
    # all of it but what BGP++ cannot say: a connect-retry timer (the twin gives FRR the design's); every switch
    for v in views:
        d = fabric.devices[v.name].routing
        assert v.bgp is not None, v.name
        assert routing_of(v.bgp) == replace(d, timers=replace(d.timers, connect_retry=None)), v.name
    assert view.qos is not None and view.qos.lossless == (3,) and view.qos.dscp_to_tc[26] == 3
    assert view.interfaces["eth2/1/1"].addresses == ("10.64.0.0/31", "fd00:1::2/127")
    assert view.loopbacks == ("10.0.0.6/32", "fd00:0:0:1::7/128")


def test_validate_rendered_passes_over_sonic_eos_and_fboss_mixed(fboss_build):
    result = CliRunner().invoke(main, ["validate", "--rendered", str(fboss_build)])
    assert result.exit_code == 0, result.output
    assert "cross-device checks clean" in result.output


# --------------------------------------------------------------------------------------------- refused on purpose


def _port(sw: dict, name: str) -> tuple[int, dict]:
    return next((k, p) for k, p in enumerate(sw["ports"]) if p["name"] == name)


def _misspelt(agent, bgp):
    k, p = _port(agent["sw"], "eth2/1/1")
    p["maxFrameSzie"] = p.pop("maxFrameSize")
    return f"sw.ports[{k}].maxFrameSzie", "unknown key: switch_config.Port has no field 'maxFrameSzie'; did you " \
                                          "mean 'maxFrameSize'?"


def _enum(agent, bgp):
    k, p = _port(agent["sw"], "eth2/1/1")
    p["state"] = 7
    return f"sw.ports[{k}].state", "7 is no value of the enum switch_config.PortState (0 DOWN, 1 DISABLED, 2 ENABLED)"


def _not_on_box(agent, bgp):
    k, p = _port(agent["sw"], "eth2/1/1")
    p["name"] = "eth10/1/1"
    return f"sw.ports[{k}].name", "'eth10/1/1' is no port of fuji in FBOSS's platform mapping"


def _profile(agent, bgp):
    k, p = _port(agent["sw"], "eth2/1/1")
    p["profileID"] = 24          # 200G on 4 lanes over copper: not on a 16Q PIM
    return f"sw.ports[{k}].profileID", "profile 24 (PROFILE_200G_4_PAM4_RS544X2N_COPPER) is not supported on fuji " \
                                       "port eth2/1/1"


def _queue_config(agent, bgp):
    k, p = _port(agent["sw"], "eth2/1/1")
    p["portQueueConfigName"] = "queues-rcoe"
    return f"sw.ports[{k}].portQueueConfigName", "'queues-rcoe' names no port queue config (defined: queues-roce)"


def _dscp(agent, bgp):
    maps = agent["sw"]["qosPolicies"][0]["qosMap"]["dscpMaps"]
    m = next(k for k, d in enumerate(maps) if 26 in d["fromDscpToTrafficClass"])
    j = maps[m]["fromDscpToTrafficClass"].index(26)
    maps[m]["fromDscpToTrafficClass"][j] = 90
    return f"sw.qosPolicies[0].qosMap.dscpMaps[{m}].fromDscpToTrafficClass[{j}]", "DSCP 90 is out of 0..63"


def _bgp_key(agent, bgp):
    bgp["peers"][0]["remote_as_4byte"] = bgp["peers"][0].pop("remote_as_4_byte")
    return "peers[0].remote_as_4byte", "unknown key: bgp_config.BgpPeer has no field 'remote_as_4byte'"


@pytest.mark.parametrize("mutate", [_misspelt, _enum, _not_on_box, _profile, _queue_config, _dscp, _bgp_key],
                         ids=["misspelt-key", "enum-out-of-range", "port-not-on-box", "unsupported-profile",
                              "missing-queue-config", "dscp-above-63", "bgp-misspelt-key"])
def test_a_broken_config_is_refused_naming_the_switch_the_json_path_and_the_reason(fboss_build, state, mutate):
    agent, bgp = _json(fboss_build, RTSW, "agent.conf"), _json(fboss_build, RTSW, "bgpcpp.conf")
    where, reason = mutate(agent, bgp)
    files = (f"devices/{RTSW}/agent.conf", f"devices/{RTSW}/bgpcpp.conf")
    found = check_files(state, "fuji", files[0], agent, files[1], bgp)
    assert any(f.file in files and f.path == where and f.message.startswith(reason) for f in found), found
    assert all(RTSW in f.file for f in found)


def test_validate_rendered_refuses_a_hand_edited_fboss_config(fboss_build, tmp_path):
    out = tmp_path / "lab"
    shutil.copytree(fboss_build, out)
    path = out / "devices" / RTSW / "agent.conf"
    agent = json.loads(path.read_text())
    _dscp(agent, None)
    path.write_text(json.dumps(agent))
    found = validate_rendered(out)
    assert any(f.file == f"devices/{RTSW}/agent.conf" and f.rule == "fboss-xref" and "DSCP 90 is out of 0..63"
               in f.message for f in found), found


def test_a_plane_with_fboss_switches_runs_gtsm_instead_of_its_password(tmp_path, lab_data):
    """BGP++ signs no session: on a plane with FBOSS switches no end sends the spec's password (or no session would
    come up) and every session runs GTSM at hops 1, even where the spec asks none; the target says so at the
    plane's password, as a warning."""
    data = fboss_lab(lab_data)
    del data["backend"]["bgp"]["ttl_security_hops"]
    assert data["backend"]["bgp"]["password_secret"] and data["frontend"]["password_secret"]
    b = build(write_spec(tmp_path, data), tmp_path / "b")
    said = {(f.path, f.rule, f.severity) for f in b.warnings if f.rule == "fboss" and "GTSM" in f.message}
    assert said == {("backend.bgp.password_secret", "fboss", "warning"),
                    ("frontend.password_secret", "fboss", "warning")}
    bgp = _json(b.path, RTSW, "bgpcpp.conf")
    assert {g["ttl_security_hops"] for g in bgp["peer_groups"]} == {1}
    ctsw = (b.path / "devices" / "z01-ctsw01" / "startup-config").read_text()
    assert "ttl maximum-hops 1" in ctsw and "TETON_SECRET_bgp_backend" not in ctsw
    assert not [f for f in b.warnings if f.rule == "bgp-unprotected"]


def test_a_model_whose_fboss_ports_cannot_run_the_tier_is_refused_by_the_spec_rule(tmp_path, lab_data):
    """A Wedge400 re-described with its 200G cages first: the 400G ports it hands the RSW are QSFP56 cages that FBOSS
    runs at 200G at most."""
    data = fboss_lab(lab_data)
    data["switch_models"] = [{
        "name": "wedge400-misdescribed", "vendor": "Meta", "asic": "Broadcom Tomahawk3", "asic_tbps": 12.8,
        "port_groups": [{"count": 32, "speed_gbps": 200, "lanes": 4, "form_factor": "QSFP56"},
                        {"count": 16, "speed_gbps": 400, "lanes": 8, "form_factor": "QSFP-DD"}],
        "port_naming": "sonic", "nos_port_naming": {"fboss": "fboss-wedge400"}, "nos": ["fboss"],
        "platform": {"fboss": "wedge400"}, "serdes": 256, "serdes_gbps": 50}]
    data["frontend"]["rsw"]["model"] = "wedge400-misdescribed"
    with pytest.raises(SpecError) as e:
        build(write_spec(tmp_path, data), tmp_path / "b")
    found = [f for f in e.value.findings if f.rule == "fboss-ports"]
    assert found and found[0].path == "frontend.rsw.model"
    assert "wedge400 port eth1/33/1 has no profile at 400G (it runs 200G, 100G, 50G, 40G, 25G, 10G)" in \
        found[0].message


def test_a_config_the_walk_refuses_keeps_its_other_findings(state):
    """The walk does not stop at the first problem: every unknown key and wrong type is reported."""
    cfg = {"sw": {"ports": [{"logicalID": "3", "stat": 2}], "vlanz": []}, "platform": {"chip": {"bcm": {}, "asic": {}}}}
    issues, _ = walk(state.schema, copy.deepcopy(cfg), AGENT_ROOT)
    assert {i.path for i in issues} >= {"sw.ports[0].logicalID", "sw.ports[0].stat", "sw.vlanz", "platform.chip"}


def test_read_back_of_a_switch_without_bgp(fboss_build):
    agent = _json(fboss_build, RTSW, "agent.conf")
    view, found = read_fboss(RTSW, agent, None, 0)
    assert found == [] and view.bgp is None and view.qos is not None


def test_diff_against_the_sonic_spelling_lists_each_switchs_files_and_keeps_every_session(tmp_path, fboss_dir):
    from teton.diff import diff_specs

    sonic = yaml.safe_load(LAB.read_text())
    del sonic["backend"]["bgp"]["password_secret"]            # the same intents (GTSM, no password: the FBOSS
    del sonic["frontend"]["password_secret"]                  # variant's), only the rack switches' NOS differs
    old = write_spec(tmp_path, sonic, "sonic.yaml")
    new = write_spec(tmp_path, fboss(copy.deepcopy(sonic)), "fboss.yaml")
    report = json.loads(diff_specs(str(old), str(new)).render("json"))
    switches = {d["name"]: d for d in report["devices"] if d["role"] in ("rtsw", "fe-rsw")}
    assert len(switches) == 4 + 7
    for name, d in switches.items():
        assert {(f["path"].rsplit("/", 1)[1], f["status"]) for f in d["files"]} == {
            ("agent.conf", "added"), ("bgpcpp.conf", "added"), ("config_db.json", "removed"),
            ("frr.conf", "removed")}, name
    assert report["summary"]["bgp_sessions_added"] == report["summary"]["bgp_sessions_removed"] == 0
    ctsw = next(d for d in report["devices"] if d["name"] == "z01-ctsw01")
    diff = ctsw["files"][0]["diff"]                           # its peers see the FBOSS port names
    assert "-   neighbor 10.1.0.1 description z01-r001-rtsw:Ethernet48\n" in diff
    assert "+   neighbor 10.1.0.1 description z01-r001-rtsw:eth4/1/1\n" in diff


def test_deploy_to_the_twin_runs_the_frr_spelling_of_an_fboss_switchs_read_back(fboss_build):
    from teton.buildfolder import BuildFolder
    from teton.deploy.transports import twin_frr_conf
    from teton.targets.transports import Device

    files = {p.name: p.read_text() for p in (fboss_build / "devices" / RTSW).iterdir()}
    conf = twin_frr_conf(Device(RTSW, "fboss", files, fabric=BuildFolder(fboss_build).fabric()))
    assert "router bgp 4201001001" in conf and " neighbor 10.1.0.0 remote-as 4200000101" in conf
    assert " neighbor CTSW_V4 timers connect 1" in conf            # the design's: BGP++ has no such timer
    assert "  aggregate-address 10.64.0.0/27 summary-only" in conf


def test_with_dcqcn_the_lossless_queue_marks_ecn_per_port_speed_and_reads_back(tmp_path, fboss_dir):
    spec = write_spec(tmp_path, fboss(dcqcn(yaml.safe_load(LAB.read_text()))), "lab.yaml")
    out = build(spec, tmp_path / "lab").path               # strict-checked as it renders
    sw = _json(out, RTSW, "agent.conf")["sw"]
    assert list(sw["portQueueConfigs"]) == ["queues-roce-400g"]
    lossless = next(q for q in sw["portQueueConfigs"]["queues-roce-400g"] if q["id"] == 3)
    from teton.buildfolder import BuildFolder
    fabric = BuildFolder(out).fabric()
    ecn = fabric.devices[RTSW].qos.ecn_for(400, "shallow")
    assert lossless["aqms"] == [{"behavior": enums.AQM_ECN, "detection": {"linear": {
        "minimumLength": ecn.min_bytes, "maximumLength": ecn.max_bytes, "probability": ecn.mark_percent}}}]
    view, _ = read_fboss(RTSW, _json(out, RTSW, "agent.conf"), _json(out, RTSW, "bgpcpp.conf"), 5)
    assert {q.ecn for q in view.qos.queues if q.queue == 3} == {(ecn.min_bytes, ecn.max_bytes, ecn.mark_percent)}
    assert validate_rendered(out) == []


def test_the_reference_files_are_found_as_documented_and_a_wrong_folder_is_one_line(tmp_path, monkeypatch, fboss_dir,
                                                                                     lab_data):
    from teton.targets.fboss import data

    monkeypatch.setenv(data.ENV_VAR, str(tmp_path))
    with pytest.raises(TetonError, match=rf"^FBOSS reference files: {tmp_path} has no idl/fboss/agent/"
                                         rf"agent_config.thrift \(from --fboss-dir or TETON_FBOSS_DIR\)"):
        data.find_fboss_dir()
    assert data.find_fboss_dir(fboss_dir) == fboss_dir                  # explicit first
    monkeypatch.setenv(data.ENV_VAR, str(fboss_dir))
    assert data.find_fboss_dir() == fboss_dir
    monkeypatch.delenv(data.ENV_VAR)
    spec = write_spec(tmp_path, fboss_lab(lab_data))
    result = CliRunner().invoke(main, ["--fboss-dir", str(tmp_path / "nothing"), "render", str(spec), "-o",
                                       str(tmp_path / "b"), "--no-cache"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "FBOSS reference files:" in result.output and "--fboss-dir" in result.output
