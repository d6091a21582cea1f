"""SONiC target: `config_db.json` and `frr.conf` in the folder of every switch with `nos: sonic`.

- render: the Config DB (`config_db`, `qos`, `management`), YANG-validated with SONiC's own models through libyang
  (`validate`, `yang`), the FRR spelling of the routing intent (`teton.targets.frr`) for SONiC's bgpd, and per HwSKU
  the files `config qos reload` regenerates QoS from (`sku`);
- read-back (`readback`): both files into the NOS-neutral view; the frr.conf is handed to the twin unchanged.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from teton.catalogue.naming import PortPlace
from teton.fabric.bgpview import BgpView
from teton.fabric.intent import Buffers, Qos
from teton.fabric.model import Device, Fabric
from teton.fabric.neighbours import expected
from teton.findings import Finding
from teton.secrets import NTP_KEY, referenced_secrets, secret_value
from teton.targets.base import BuildFileError, BuildFiles, DeviceTarget, DeviceView, Files, RenderContext, ZeroTouch
from teton.targets.frr import render_frr
from teton.targets.sonic.config_db import config_db, dump_config_db, lldp_port_id, neighbour_tables
from teton.targets.sonic.management import MGMT_VRF
from teton.targets.sonic.readback import read_sonic, read_sonic_bgp
from teton.targets.sonic.sku import buffers_template, pg_profile_lookup, qos_template
from teton.targets.sonic.validate import SplitValidator, yang_findings
from teton.targets.sonic.yang import YANG_MODELS
from teton.targets.sonic.ztp import sonic_zero_touch
from teton.targets.transports import register_transport


def sonic_port_name(p: PortPlace) -> str:
    """SONiC names a port by its first SerDes lane: Ethernet0, Ethernet8 ..."""
    return f"Ethernet{p.first_lane}"


class SonicTarget(DeviceTarget):
    name = "sonic"
    summary = "SONiC config_db.json (YANG-validated) and frr.conf per switch"
    nos = "sonic"
    port_namings = {"sonic": sonic_port_name}
    files = ("config_db.json", "frr.conf")
    lldp_port_ids = {"sonic": lldp_port_id}     # the port's alias, as lldpmgrd announces it
    reference = (YANG_MODELS,)

    def check(self, fabric: Fabric, file: str) -> Iterator[Finding]:
        devices = self.devices(fabric)
        m = fabric.management
        if m is not None and m.vrf != MGMT_VRF and devices:
            yield Finding(file, "management.vrf", f"SONiC's management VRF is always named {MGMT_VRF!r} "
                          f"(MGMT_VRF_CONFIG); {m.vrf!r} cannot be spelled on the SONiC switches", rule="sonic")
        if any(d.routing is not None and d.routing.bfd for d in devices):
            yield Finding(file, "backend.bgp.bfd", "frr.conf asks for BFD, but SONiC's bgp container starts bfdd only "
                          "on images whose supervisord runs it: check the image, or the sessions run without BFD",
                          rule="sonic", severity="warning")
        # management.syslog_tls is TLS where the NOS can (its spec description and docs/switch-configs.md): SONiC's
        # SYSLOG_SERVER has UDP and TCP only, so SONiC switches keep UDP; said there, not warned of per spec
        yield from self._hash_entropy(fabric, file)

    def zero_touch(self, device: Device, url: str, image: str | None) -> ZeroTouch:
        return sonic_zero_touch(device, url, image)

    def resolve_secrets(self, files: Files, secrets: Mapping[str, str]) -> Files:
        """Cleartext in the pushed files, except the NTP key, which Config DB holds base64-encoded (NTP_KEY)."""
        out: Files = {}
        for path, text in files.items():
            if path.endswith("config_db.json") and '"NTP_KEY"' in text:
                db = json.loads(text)
                for key in db.get("NTP_KEY", {}).values():
                    names = sorted(referenced_secrets(str(key.get("value", ""))))
                    if names:
                        value = secret_value(names[0], secrets, NTP_KEY)
                        key["value"] = base64.b64encode(value.encode()).decode()
                text = dump_config_db(db)
            out[path] = text
        return super().resolve_secrets(out, secrets)

    def _hash_entropy(self, fabric: Fabric, file: str) -> Iterator[Finding]:
        """SONiC cannot hash the RoCE BTH's destination QP (sonic-hash has no UDF): its ECMP entropy is the UDP source
        port, which the hosts vary only with several QPs per GPU pair, each with its own source port."""
        h = fabric.policy.hashing if fabric.policy is not None else None
        if h is None or not any(d.policy is not None for d in self.devices(fabric)):
            return
        qps = fabric.hosts.nccl.qps_per_connection if fabric.hosts is not None else None
        qps = h.qps_per_connection if qps is None else qps
        if "L4_SRC_PORT" not in h.fields or not h.per_qp_source_port:
            yield Finding(file, "backend", "SONiC hashes the 5-tuple only: without the UDP source port in the hash "
                          "(and one per QP on the hosts) every RoCE flow between two NICs takes one path",
                          rule="hash-entropy")
        elif qps < 2:
            yield Finding(file, "hosts.nccl.qps_per_connection", f"{qps} QP per GPU pair: SONiC cannot hash the "
                          "destination QP, so the only entropy is the per-QP UDP source port; with one QP a GPU pair's "
                          "traffic takes one path (Meta runs 16 for LLM jobs)", rule="hash-entropy")

    device_cost = 0.001              # a 24k RoCE RTSW (32 ports used) ~4-5 ms, a front-end RSW ~2-3
    interface_cost = 0.0001

    def finish(self, fabric: Fabric, ctx: RenderContext, files: Files,
               written: frozenset[str] = frozenset()) -> Files:
        return {**files, **self.sku_files(fabric)}

    def sku_files(self, fabric: Fabric) -> Files:
        """`sku/<hwsku>/...` for each HwSKU of a backend switch: what `config qos reload` regenerates QoS from."""
        by_sku: dict[str, list[tuple[Buffers, Qos]]] = {}
        for d in self.devices(fabric):
            if d.qos is not None and d.buffers is not None:
                by_sku.setdefault(fabric.models[d.model].hwsku.get("sonic") or d.model, []).append((d.buffers, d.qos))
        files: Files = {}
        for sku, intents in sorted(by_sku.items()):
            lookup = {(p.speed_gbps, p.cable_m): p for b, _ in intents for p in b.lookup}
            b = replace(intents[0][0], lookup=tuple(lookup[k] for k in sorted(lookup)))
            qos = intents[0][1]
            files[f"sku/{sku}/buffers.json.j2"] = buffers_template(b, qos)
            model = fabric.models[next(d.model for d in self.devices(fabric)
                                       if (fabric.models[d.model].hwsku.get("sonic") or d.model) == sku)]
            files[f"sku/{sku}/qos.json.j2"] = qos_template(qos, model.buffering,
                                                           fabric.policy.hashing if fabric.policy else None)
            files[f"sku/{sku}/pg_profile_lookup.ini"] = pg_profile_lookup(b)
        return files

    def chunk_state(self, ctx: RenderContext) -> Any:
        return SplitValidator(ctx.folder(YANG_MODELS)) if ctx.validate else None

    def render_device(self, fabric: Fabric, device: Device, ctx: RenderContext,
                      state: Any) -> tuple[Files, list[Finding]]:
        assert device.routing is not None
        db = config_db(device, fabric.models[device.model], shared=True)    # validated and written, never changed
        db.update(neighbour_tables(expected(fabric, device), {i.peer: fabric.device(i.peer).role
                                                               for i in device.interfaces}))
        path = self.path(device.name, "config_db.json")
        problems = yang_findings(path, state.validate(device.name, db)) if state is not None else []
        return {path: dump_config_db(db),
                self.path(device.name, "frr.conf"): render_frr(device.name, device.routing)}, problems

    def read_device(self, source: BuildFiles, device: Device,
                    state: Any) -> tuple[DeviceView | None, list[Finding]]:
        path = self.path(device.name, "config_db.json")
        db = source.json(path)
        findings = yang_findings(path, state.validate(device.name, db)) if state is not None else []
        if not isinstance(db, dict):
            return None, findings
        try:
            view, found = read_sonic(device.name, db, source.text(self.path(device.name, "frr.conf")))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            findings.append(Finding(path, "", f"cannot be read back: {type(exc).__name__}: {exc}", rule="io"))
            return None, findings
        return view, findings + found

    def read_bgp(self, source: BuildFiles, device: Device) -> BgpView | None:
        db = source.json(self.path(device.name, "config_db.json"))
        if not isinstance(db, dict):
            raise BuildFileError(self.path(device.name, "config_db.json"), "not a JSON object")
        return read_sonic_bgp(device.name, db, source.text(self.path(device.name, "frr.conf")))


TARGET = SonicTarget()
register_transport("live", "sonic", "teton.targets.sonic.transport:live_transport")   # imported when a deploy asks
