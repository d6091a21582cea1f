"""Both spellings of the QoS intent read back as numbers: EOS from its startup-config text (parsed here, independently
of teton's own reader) and its structured config, SONiC from config_db.json; and the comparison the tests make of
every queue of every backend switch against each other and against the intent."""

from __future__ import annotations

import re
from pathlib import Path

from teton.fabric import Fabric
from teton.targets import BuildFiles, DeviceTarget, QueueView, RenderContext, targets

UNITS = {"bytes": 1, "kbytes": 1000, "mbytes": 1000_000}
_ECN = re.compile(r"random-detect ecn minimum-threshold (\d+) (\w+) maximum-threshold (\d+) (\w+)"
                  r"(?: max-mark-probability (\d+))?")

Sched = tuple[bool, int | None, tuple[int, int, int] | None]   # strict, weight, (ECN min, max bytes, percent)


def eos_startup_queues(text: str) -> dict[str, dict[int, Sched]]:
    """port -> queue -> scheduling, from EOS CLI: tx-queues are strict unless `no priority` (EOS's default), the
    weight is `bandwidth percent`, the thresholds in bytes whatever unit the line uses."""
    profiles: dict[str, dict[int, dict[str, object]]] = {}
    ports: dict[str, str] = {}
    profile = port = None
    queue: dict[str, object] | None = None
    for line in text.splitlines():
        if line.startswith("qos profile "):
            profile, port, queue = line.split()[2], None, None
            profiles[profile] = {}
        elif line.startswith("interface "):
            profile, port, queue = None, line.split()[1], None
        elif not line.startswith(" "):
            profile = port = queue = None
        elif profile and line.startswith("   tx-queue "):
            queue = profiles[profile].setdefault(int(line.split()[1]), {})
        elif profile and queue is not None and line.startswith("      "):
            words = line.strip()
            if words == "no priority":
                queue["strict"] = False
            elif words == "priority strict":
                queue["strict"] = True
            elif words.startswith("bandwidth percent "):
                queue["weight"] = int(words.split()[2])
            elif m := _ECN.fullmatch(words):
                queue["ecn"] = (int(m[1]) * UNITS[m[2]], int(m[3]) * UNITS[m[4]], int(m[5] or 100))
        elif port and line.startswith("   service-profile "):
            ports[port] = line.split()[1]
    out: dict[str, dict[int, Sched]] = {}
    for p, name in ports.items():
        qs = profiles[name]
        out[p] = {}
        for n in range(8):
            q = qs.get(n, {})
            strict = bool(q.get("strict", True))
            weight = q.get("weight")
            out[p][n] = (strict, None if strict else int(weight) if isinstance(weight, int) else None,
                         q.get("ecn"))  # type: ignore[assignment]
    return out


def _sched(views: list[QueueView]) -> dict[str, dict[int, Sched]]:
    out: dict[str, dict[int, Sched]] = {}
    for x in views:
        out.setdefault(x.port, {})[x.queue] = (x.strict, x.weight, x.ecn)
    return out


def check_every_queue(build: Path, fabric: Fabric) -> int:
    """Asserts, for every queue of every port of every backend switch: the NOS's files say what the intent says
    (strict or round robin, the weight, the ECN thresholds in bytes for the port's speed and the switch's buffer
    class), EOS's startup-config and structured config agree, and so the NOSes agree with each other.  Returns the
    number of queues compared."""
    qos = fabric.qos
    assert qos is not None
    source = BuildFiles(build)
    views, findings = [], []
    for t in targets():      # the switch NOSes' files: a build of only those (and fabric.json) is enough
        if isinstance(t, DeviceTarget):
            v, f = t.read_back(source, fabric, RenderContext(validate=False), vendor=False)
            views += v
            findings += f
    assert findings == []
    intent = {q.tc: q for q in qos.queues}
    compared = 0
    nos_seen = set()
    for v in views:
        d = fabric.devices[v.name]
        if v.kind != "switch" or d.plane != "backend":
            continue
        assert v.qos is not None, v.name
        got = _sched(list(v.qos.queues))
        if d.nos == "eos":
            text = source.text(f"devices/{v.name}/startup-config")
            assert eos_startup_queues(text) == got, f"{v.name}: startup-config and structured config disagree"
        speed = {i.name: i.speed_gbps for i in d.interfaces}
        assert set(got) == set(speed), v.name                       # every cabled port, nothing else
        for port, queues in got.items():
            assert sorted(queues) == list(range(8)), (v.name, port)
            for n, (strict, weight, ecn) in queues.items():
                q = intent[n]
                assert (strict, weight) == (q.strict, None if q.strict else q.weight), (v.name, port, n)
                want = qos.ecn_for(speed[port], fabric.models[d.model].buffering) if q.role == "lossless" else None
                assert ecn == (None if want is None else (want.min_bytes, want.max_bytes, want.mark_percent)), (
                    v.name, port, n)
                compared += 1
        nos_seen.add(d.nos)
    assert nos_seen == {"eos", "sonic"}
    return compared
