"""One QoS intent, two spellings: every queue of every backend switch of the lab (PFC only) and of its DCQCN variant,
read back from EOS's startup-config and structured config and from SONiC's config_db, is scheduled as the intent
says, with the same numbers (weights, ECN thresholds in bytes); the control class is strict everywhere."""

from __future__ import annotations

import json

from tests.targets.qos_readback import check_every_queue, eos_startup_queues
from teton.fabric.intent import Ecn
from teton.targets.eos.structured import _tx_queues
from teton.targets.sonic.qos import qos_maps, wred_name
from teton.validate.rules import check_control_class, check_scheduling


def _ports(fabric) -> int:
    return sum(len(d.interfaces) for d in fabric.devices.values() if d.plane == "backend" and d.nos is not None)


def test_every_queue_of_the_pfc_only_lab_agrees_across_nos(lab_build, lab_fabric):
    assert lab_fabric.qos.ecn is None                                   # the lab runs the reference's PFC only
    assert check_every_queue(lab_build, lab_fabric) == 8 * _ports(lab_fabric)


def test_every_queue_of_the_dcqcn_variant_agrees_across_nos(lab_dcqcn_build, lab_dcqcn_fabric):
    q = lab_dcqcn_fabric.qos
    assert q.ecn is not None and q.roce_tos == 106                      # DSCP 26 with ECT(0)
    assert check_every_queue(lab_dcqcn_build, lab_dcqcn_fabric) == 8 * _ports(lab_dcqcn_fabric)
    # the thresholds as rendered, 400G: a shallow rack switch 600 KB / 6 MB, a deep-buffer spine 1.2 MB / 24 MB
    db = json.loads((lab_dcqcn_build / "devices/z01-r001-rtsw/config_db.json").read_text())
    w = db["WRED_PROFILE"][wred_name(400)]
    assert (w["green_min_threshold"], w["green_max_threshold"], w["ecn"]) == ("600000", "6000000", "ecn_all")
    text = (lab_dcqcn_build / "devices/z01-ctsw01/startup-config").read_text()
    assert ("random-detect ecn minimum-threshold 1200000 bytes maximum-threshold 24000000 bytes "
            "max-mark-probability 5") in text


def test_one_threshold_is_the_same_number_of_bytes_in_both_spellings(lab_dcqcn_fabric):
    """No 1000-vs-1024: the same Ecn spelled by EOS (read back from CLI text) and SONiC gives the same bytes."""
    qos = lab_dcqcn_fabric.qos
    e = Ecn(400, "shallow", 150_000, 1_536_000, 7)
    eos = next(x for x in _tx_queues(qos, e) if x["id"] == qos.lossless_priority)["random_detect"]["ecn"]["threshold"]
    assert eos == {"units": "bytes", "min": 150_000, "max": 1_536_000, "max_probability": 7}
    sonic = qos_maps(type(qos)(**{**{f: getattr(qos, f) for f in qos.__dataclass_fields__}, "ecn": (e,)}),
                     "shallow")["WRED_PROFILE"][wred_name(400)]
    assert (int(sonic["green_min_threshold"]), int(sonic["green_max_threshold"])) == (150_000, 1_536_000)
    cli = ("qos profile P\n   tx-queue 3\n      no priority\n      bandwidth percent 50\n      random-detect ecn "
           "minimum-threshold 150000 bytes maximum-threshold 1536000 bytes max-mark-probability 7\n!\n"
           "interface Ethernet1/1\n   service-profile P\n")
    assert eos_startup_queues(cli)["Ethernet1/1"][3] == (False, 50, (150_000, 1_536_000, 7))


def test_eos_dwrr_queues_say_no_priority_and_strict_ones_priority_strict(lab_build):
    text = (lab_build / "devices/z01-ctsw01/startup-config").read_text()
    assert "   tx-queue 0\n      !! best effort\n      no priority\n      bandwidth percent 48" in text
    assert ("   tx-queue 3\n      !! RoCE lossless (PFC priority 3)\n      no priority\n      bandwidth percent 50"
            in text)
    assert "   tx-queue 5\n      !! collective control (CTS) strict priority\n      priority strict" in text
    assert "random-detect" not in text                                  # PFC only
    db = json.loads((lab_build / "devices/z01-r001-rtsw/config_db.json").read_text())
    assert db["SCHEDULER"]["scheduler.lossless"] == {"type": "DWRR", "weight": "50"}
    assert db["SCHEDULER"]["scheduler.best_effort"] == {"type": "DWRR", "weight": "48"}
    assert db["SCHEDULER"]["scheduler.idle"] == {"type": "DWRR", "weight": "1"}
    assert db["SCHEDULER"]["scheduler.control"] == {"type": "STRICT", "priority": "5"}
    assert db["QUEUE"]["Ethernet0|5"] == {"scheduler": "scheduler.control"} and "WRED_PROFILE" not in db


def _views(build, fabric):
    from teton.targets import BuildFiles, RenderContext
    from teton.validate.rendered import read_views

    views, findings = read_views(BuildFiles(build), fabric, RenderContext(validate=False), vendor=False)
    assert findings == []
    return views


def test_the_control_class_is_the_same_on_nics_and_every_tier(lab_build, lab_fabric):
    q = lab_fabric.qos
    views = _views(lab_build, lab_fabric)
    roles = {lab_fabric.devices[v.name].role for v in views if v.qos is not None}
    assert {"host", "rtsw", "ctsw", "atsw"} <= roles
    for v in views:
        if v.qos is not None:
            assert v.qos.dscp_to_tc[q.control_dscp] == q.control_priority == 5, v.name
    assert check_control_class(views, q) == [] and check_scheduling(views) == []
    gv = (lab_build / "ansible/group_vars/gpu.yml").read_text()
    assert "control_dscp: 46" in gv and "control_priority: 5" in gv
    hosts = json.loads((lab_build / "hosts/backend.json").read_text())["qos"]
    assert hosts["nccl"]["NCCL_IB_FIFO_TC"] == 184 and hosts["dscp_to_priority"]["46"] == 5


def test_the_rule_names_a_switch_whose_control_queue_is_round_robin(lab_build, lab_fabric):
    from dataclasses import replace

    views = _views(lab_build, lab_fabric)
    spine = next(v for v in views if v.name == "z01-ctsw01")
    assert spine.qos is not None
    spine.qos = replace(spine.qos, queues=tuple(replace(x, strict=False, weight=10) if x.queue == 5 else x
                                                for x in spine.qos.queues))
    control = check_control_class(views, lab_fabric.qos)
    assert [(f.rule, f.message.split(":")[0]) for f in control] == [("qos-control", "z01-ctsw01")]
    assert "round robin, not strict" in control[0].message
    sched = check_scheduling(views)
    assert {f.rule for f in sched} == {"qos-scheduling"} and all("z01-ctsw01" in f.message for f in sched)
    host = next(v for v in views if v.kind == "host" and v.file == "hosts/backend.json")   # a GPU host's NICs
    assert host.qos is not None
    host.qos = replace(host.qos, dscp_to_tc={**host.qos.dscp_to_tc, 46: 0})
    assert any("goes to traffic class 0" in f.message for f in check_control_class(views, lab_fabric.qos))
